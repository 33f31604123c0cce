//! The `test_report` and `python_source` targets: what `layerlock triage`
//! reads from a failed job (JUnit XML, Buildkite Test Engine JSON) and from
//! the repository's test files (imports, xfail markers), and what the sdist
//! reader takes from a `setup.py` (its tokenizer and evaluator).

use std::hint::black_box;

use layerlock_history::{junit, pyimports, xfail};

/// Node ids asked of every source: plain, in a class, parametrized.
const NODES: &[(&str, Option<&str>)] = &[
    ("test_x", None),
    ("test_x[a-1]", None),
    ("test_y[meta]", Some("TestX")),
    ("test_z", Some("TestOuter.TestInner")),
];

pub fn test_report(data: &[u8]) {
    let text = crate::text(data);
    // The commit a report says it tested: a hex id, or nothing.
    if let Some(commit) = junit::report_commit(&text) {
        assert!(
            (7..=64).contains(&commit.len()) && commit.bytes().all(|b| b.is_ascii_hexdigit()),
            "report_commit gave {commit:?}"
        );
    }
    for parse in [
        junit::parse_report,
        junit::parse_junit,
        junit::parse_buildkite_json,
    ] {
        match parse(&text) {
            Ok(cases) => {
                for case in &cases {
                    black_box((
                        &case.classname,
                        &case.name,
                        &case.file,
                        case.line,
                        case.outcome.is_failure(),
                        &case.message,
                        &case.suite,
                    ));
                    black_box(xfail::NodeId::parse(
                        &case.name,
                        case.classname.rsplit('.').next(),
                    ));
                }
            }
            Err(error) => crate::render_error(&error),
        }
    }
}

pub fn python_source(data: &[u8]) {
    setup_py(data);
    let text = crate::text(data);
    for (module, is_package) in [("pkg.tests.test_x", false), ("pkg", true), ("top", false)] {
        for import in pyimports::imports(&text, module, is_package) {
            black_box((&import.module, &import.names, import.line));
        }
    }
    for (name, class) in NODES {
        let node = xfail::NodeId::parse(name, *class);
        if let Some(marker) = xfail::find_xfail(&text, &node) {
            black_box((marker.line, marker.strict, &marker.reason));
        }
    }
}

/// The bytes as an sdist's `setup.py`, read for its metadata: as they are,
/// and after a setuptools import, so that the tokens reach the evaluator
/// of the `setup()` call rather than stopping at "no setup() imported".
fn setup_py(data: &[u8]) {
    let imported = [b"from setuptools import setup\n".as_slice(), data].concat();
    for py in [data.to_vec(), imported] {
        let files = layerlock_dist::SourceFiles {
            setup_py: Some(py),
            ..Default::default()
        };
        match layerlock_dist::sdist_metadata(&files, "a", "1") {
            Ok(metadata) => match layerlock_dist::CoreMetadata::parse(&metadata) {
                Ok(parsed) => {
                    black_box((&parsed.provides_extra, &parsed.computed_extras));
                    black_box(parsed.requires_all().count());
                }
                Err(error) => crate::render_error(&error),
            },
            Err(why) => {
                black_box(why);
            }
        }
    }
}
