use super::*;

const XUNIT2: &str = include_str!("../../tests/fixtures/pytest-xunit2.xml");
const XUNIT1: &str = include_str!("../../tests/fixtures/pytest-xunit1.xml");
const LOGGING: &str = include_str!("../../tests/fixtures/pytest-xunit2-logging.xml");
const COLLECTION: &str = include_str!("../../tests/fixtures/pytest-collection-error.xml");
const BUILDKITE: &str = include_str!("../../tests/fixtures/buildkite-pytest-collector.json");

/// (name, outcome, message) of each case.
fn summary(cases: &[TestCase]) -> Vec<(&str, Outcome, Option<&str>)> {
    cases
        .iter()
        .map(|case| (case.name.as_str(), case.outcome, case.message.as_deref()))
        .collect()
}

/// What pytest 9.2 wrote for `pytest_outcomes_source.py.txt`, in order.
const PYTEST_OUTCOMES: &[(&str, Outcome, Option<&str>)] = &[
    ("test_pass", Outcome::Passed, None),
    (
        "test_fail",
        Outcome::Failed,
        Some("AssertionError: arithmetic & <logic> broke"),
    ),
    (
        "test_error",
        Outcome::Error,
        Some("failed on setup with \"RuntimeError: fixture exploded\""),
    ),
    ("test_skip", Outcome::Skipped, Some("not on this platform")),
    ("test_xfail", Outcome::XFailed, Some("known bug #12")),
    // A non-strict xpass is written as a plain pass.
    ("test_xpass", Outcome::Passed, None),
    (
        "test_xpass_strict",
        Outcome::XPassStrict,
        Some("[XPASS(strict)] must fail"),
    ),
    // A failure whose teardown also failed: two cases of the same name.
    (
        "test_fail_and_teardown_error",
        Outcome::Failed,
        Some("AssertionError: body failed"),
    ),
    (
        "test_fail_and_teardown_error",
        Outcome::Error,
        Some("failed on teardown with \"RuntimeError: teardown exploded\""),
    ),
    ("test_param[1]", Outcome::Passed, None),
    ("test_param[2]", Outcome::Failed, Some("assert 2 == 1")),
];

#[test]
fn pytest_xunit2_outcomes() {
    let cases = parse_junit(XUNIT2).unwrap();
    assert_eq!(summary(&cases), PYTEST_OUTCOMES);
    assert!(cases.iter().all(|case| case.file.is_none()));
    assert!(
        cases
            .iter()
            .all(|case| case.suite.as_deref() == Some("pytest"))
    );
    assert_eq!(cases[0].classname, "tests.test_outcomes");
    assert_eq!(cases[9].classname, "tests.test_outcomes.TestGroup");
}

#[test]
fn pytest_xunit1_has_file() {
    let cases = parse_junit(XUNIT1).unwrap();
    assert_eq!(summary(&cases), PYTEST_OUTCOMES);
    assert!(
        cases
            .iter()
            .all(|case| case.file.as_deref() == Some("tests/test_outcomes.py"))
    );
}

#[test]
fn pytest_with_captured_output_reads_the_same() {
    let cases = parse_junit(LOGGING).unwrap();
    assert_eq!(summary(&cases), PYTEST_OUTCOMES);
}

#[test]
fn lines_of_testcase_elements() {
    // pytest writes everything up to the first multi-line failure text on line 1.
    let cases = parse_junit(XUNIT2).unwrap();
    let lines: Vec<usize> = cases.iter().map(|case| case.line).collect();
    assert_eq!(lines, [1, 1, 7, 12, 12, 12, 12, 12, 19, 25, 25]);
    let nth_line = |n: usize| XUNIT2.lines().nth(n - 1).unwrap();
    for case in &cases {
        assert!(
            nth_line(case.line).contains(&format!("name=\"{}\"", case.name)),
            "{} is not on line {}",
            case.name,
            case.line
        );
    }
}

#[test]
fn pytest_collection_error() {
    let cases = parse_junit(COLLECTION).unwrap();
    assert_eq!(
        summary(&cases),
        [(
            "tests.test_broken",
            Outcome::Error,
            Some("collection failure")
        )]
    );
    assert_eq!(cases[0].classname, "");
}

#[test]
fn message_from_text_when_the_attribute_is_missing_or_blank() {
    let xml = "<testsuite name=\"s\">\n\
               <testcase classname=\"c\" name=\"a\"><failure>\n\n   first line  \nsecond</failure></testcase>\n\
               <testcase classname=\"c\" name=\"b\"><error message=\"  \"><![CDATA[cdata line\nmore]]></error></testcase>\n\
               <testcase classname=\"c\" name=\"d\"><skipped/></testcase>\n\
               </testsuite>";
    let cases = parse_junit(xml).unwrap();
    assert_eq!(
        summary(&cases),
        [
            ("a", Outcome::Failed, Some("first line")),
            ("b", Outcome::Error, Some("cdata line")),
            ("d", Outcome::Skipped, None),
        ]
    );
    assert_eq!(cases[1].line, 6);
}

#[test]
fn error_beside_a_failure_wins() {
    let xml = r#"<testsuite><testcase classname="c" name="t">
        <failure message="boom"/><system-out>x</system-out><error message="teardown"/>
        </testcase></testsuite>"#;
    let cases = parse_junit(xml).unwrap();
    assert_eq!(summary(&cases), [("t", Outcome::Error, Some("teardown"))]);
    assert_eq!(cases[0].suite, None);
}

#[test]
fn nested_suites_name_the_innermost() {
    let xml = r#"<testsuites><testsuite name="outer"><testsuite name="inner">
        <testcase classname="c" name="a"/></testsuite>
        <testcase classname="c" name="b"/></testsuite></testsuites>"#;
    let cases = parse_junit(xml).unwrap();
    let suites: Vec<Option<&str>> = cases.iter().map(|c| c.suite.as_deref()).collect();
    assert_eq!(suites, [Some("inner"), Some("outer")]);
}

#[test]
fn long_messages_are_cut_on_a_character_boundary() {
    let long = "é".repeat(400);
    let xml = format!(
        r#"<testsuite><testcase name="t"><failure message="{long}"/></testcase></testsuite>"#
    );
    let message = parse_junit(&xml).unwrap()[0].message.clone().unwrap();
    assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS + 1);
    assert!(message.ends_with("é…"));
    // Exactly the limit, with trailing blanks: nothing is cut.
    let exact = format!("{}   \nmore", "x".repeat(MAX_MESSAGE_CHARS));
    assert_eq!(first_line(&exact).unwrap(), "x".repeat(MAX_MESSAGE_CHARS));
}

#[test]
fn entities_and_character_references() {
    let xml = r#"<testsuite><testcase name="a&amp;b"><failure message="x &#x3C; y&#10;z"/></testcase></testsuite>"#;
    let cases = parse_junit(xml).unwrap();
    assert_eq!(summary(&cases), [("a&b", Outcome::Failed, Some("x < y"))]);
}

#[test]
fn dtd_entities_are_never_expanded() {
    let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
]>
<testsuite><testcase name="t"><failure>&lol2;</failure></testcase></testsuite>"#;
    let err = parse_junit(laughs).unwrap_err();
    assert_eq!(err.line, 6);
    assert!(err.message.contains("&lol2;"), "{err}");
    let external = r#"<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite><testcase name="t" classname="&xxe;"/></testsuite>"#;
    let err = parse_junit(external).unwrap_err();
    assert_eq!(err.line, 2);
}

#[test]
fn truncated_reports_say_where() {
    let cut = &XUNIT2[..XUNIT2.len() / 2];
    let err = parse_junit(cut).unwrap_err();
    assert!(err.message.contains("truncated"), "{err}");
    assert!(err.line >= 1);
    // Every prefix fails cleanly or parses; none panics.
    for end in (0..XUNIT2.len()).filter(|&end| XUNIT2.is_char_boundary(end)) {
        let _ = parse_report(&XUNIT2[..end]);
    }
}

#[test]
fn garbage_is_an_error_with_a_line() {
    for garbage in [
        "<<<>>>",
        "<testsuite><testcase name='t'></testsuite>",
        "<html><body/></html>",
        "<testsuite>\n</testcase>",
        "<testsuite name=\"a\" name=\"b\"/>",
        "<testsuite attr=noquotes/>",
        "<testsuite/> trailing text",
        "<testsuite><testcase name=\"a\"><testcase name=\"b\"/></testcase></testsuite>",
        "<testsuite><testcase classname=\"x\"/></testsuite>",
        "<?xml version=\"1.0\"?>",
        "<testsuite>&#0;</testsuite>",
        "<testsuite>&#xD800;</testsuite>",
    ] {
        let err = parse_junit(garbage).expect_err(garbage);
        assert!(err.line >= 1, "{garbage}: {err}");
    }
    let err = parse_junit("<testsuite>\n\n<bad attr=></testsuite>").unwrap_err();
    assert_eq!(err.line, 3, "{err}");
}

#[test]
fn random_bytes_never_panic() {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let alphabet = b"<>/=\"'&#;![]-?x \n testsuitecase";
    for _ in 0..2000 {
        let len = (xorshift(&mut state) % 200) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                let r = xorshift(&mut state);
                if r.is_multiple_of(4) {
                    (r >> 8) as u8
                } else {
                    alphabet[(r >> 8) as usize % alphabet.len()]
                }
            })
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_report(&text);
        let _ = parse_junit(&format!("<testsuite>{text}"));
    }
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn deep_nesting_is_refused() {
    let deep = format!(
        "<testsuite>{}{}</testsuite>",
        "<a>".repeat(100_000),
        "</a>".repeat(100_000)
    );
    let err = parse_junit(&deep).unwrap_err();
    assert!(err.message.contains("deeper"), "{err}");
    let suites = format!(
        "{}<testcase name=\"t\"/>{}",
        "<testsuite>".repeat(MAX_DEPTH - 1),
        "</testsuite>".repeat(MAX_DEPTH - 1)
    );
    assert_eq!(parse_junit(&suites).unwrap().len(), 1);
}

#[test]
fn oversized_reports_are_refused_before_parsing() {
    // The three entry points check the length first; no need to allocate it.
    assert!(check_size(MAX_REPORT_BYTES).is_ok());
    let err = check_size(MAX_REPORT_BYTES + 1).unwrap_err();
    assert_eq!(err.line, 0);
    assert!(
        err.to_string()
            .starts_with("the report is 268435457 bytes, over the 256 MiB"),
        "{err}"
    );
}

#[test]
fn error_display_names_the_line() {
    let err = parse_junit("<html/>").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("line 1: the report's root element is <html>")
    );
}

#[test]
fn buildkite_python_collector_output() {
    let cases = parse_buildkite_json(BUILDKITE).unwrap();
    let found: Vec<(&str, Outcome, Option<&str>)> = summary(&cases);
    assert_eq!(
        found,
        [
            ("test_pass", Outcome::Passed, None),
            (
                "test_fail",
                Outcome::Failed,
                Some("AssertionError: arithmetic & <logic> broke")
            ),
            // The collector reports a setup error as a failure.
            (
                "test_error",
                Outcome::Failed,
                Some("RuntimeError: fixture exploded")
            ),
            ("test_skip", Outcome::Skipped, None),
            // ... and an xfail as a skip.
            ("test_xfail", Outcome::Skipped, None),
            ("test_xpass", Outcome::Passed, None),
            (
                "test_xpass_strict",
                Outcome::XPassStrict,
                Some("[XPASS(strict)] must fail")
            ),
            (
                "test_fail_and_teardown_error",
                Outcome::Failed,
                Some("AssertionError: body failed")
            ),
            ("test_param[1]", Outcome::Passed, None),
            ("test_param[2]", Outcome::Failed, Some("assert 2 == 1")),
        ]
    );
    assert_eq!(cases[9].classname, "tests/test_outcomes.py::TestGroup");
    assert!(
        cases
            .iter()
            .all(|case| case.file.as_deref() == Some("tests/test_outcomes.py") && case.line == 1)
    );
}

#[test]
fn buildkite_upload_body_and_fallbacks() {
    let json = r#"{"format": "json", "data": [
  {"scope": "Analytics::Upload", "name": "fails", "location": "./spec/upload_spec.rb:24",
   "result": "failed", "failure_expanded": [{"expanded": ["", "  expected: false"], "backtrace": []}]},
  {"name": "pending one", "file_name": "./spec/x_spec.rb", "result": "pending", "extra": {"a": 1}}
]}"#;
    let cases = parse_report(json).unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].classname, "Analytics::Upload");
    assert_eq!(cases[0].file.as_deref(), Some("spec/upload_spec.rb"));
    assert_eq!(cases[0].message.as_deref(), Some("expected: false"));
    assert_eq!(cases[0].line, 2);
    assert_eq!(cases[1].outcome, Outcome::Skipped);
    assert_eq!(cases[1].file.as_deref(), Some("spec/x_spec.rb"));
    assert_eq!(cases[1].line, 4);
    assert_eq!(cases[1].classname, "");
}

#[test]
fn buildkite_errors_name_the_record() {
    let missing = "[\n {\"name\": \"a\", \"result\": \"passed\"},\n {\"result\": \"failed\"}\n]";
    let err = parse_buildkite_json(missing).unwrap_err();
    assert_eq!(err.line, 3);
    assert!(err.message.contains("index 1"), "{err}");

    let unknown = r#"[{"name": "a", "result": "exploded"}]"#;
    assert!(
        parse_buildkite_json(unknown)
            .unwrap_err()
            .message
            .contains("\"exploded\"")
    );

    let wrong_type = "[\n{\"name\": \"a\",\n \"result\": 3}]";
    let err = parse_buildkite_json(wrong_type).unwrap_err();
    assert_eq!(err.line, 3, "{err}");
    assert!(!err.message.contains("column"), "{err}");

    for bad in [
        "{}",
        "{\"data\": 3}",
        "[1, 2]",
        "[",
        "{\"data\": [",
        "[{\"name\": \"a\"}",
    ] {
        parse_report(bad).expect_err(bad);
    }
}

#[test]
fn report_kinds_are_sniffed() {
    assert_eq!(parse_report("\u{feff}  <testsuite/>").unwrap(), []);
    assert_eq!(parse_report("\n[]").unwrap(), []);
    assert_eq!(parse_report("   ").unwrap_err().line, 1);
    assert_eq!(parse_report("\n\nhello").unwrap_err().line, 3);
}

#[test]
fn outcomes_serialize_in_kebab_case() {
    let names: Vec<String> = [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::Error,
        Outcome::Skipped,
        Outcome::XFailed,
        Outcome::XPassStrict,
    ]
    .iter()
    .map(|outcome| serde_json::to_string(outcome).unwrap())
    .collect();
    assert_eq!(
        names,
        [
            "\"passed\"",
            "\"failed\"",
            "\"error\"",
            "\"skipped\"",
            "\"xfailed\"",
            "\"xpass-strict\""
        ]
    );
}

#[test]
fn messages_never_carry_a_credential_or_part_of_one() {
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let message = |text: &str| {
        let xml = format!(
            r#"<testsuite><testcase name="t"><failure message="{text}"/></testcase></testsuite>"#
        );
        parse_junit(&xml).unwrap()[0].message.clone().unwrap()
    };
    // A token as GitHub, GitLab, Hugging Face and AWS issue them.
    for secret in [
        token,
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "glpat-abcdefghij0123456789",
        "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "AKIAABCDEFGHIJKLMNOP",
    ] {
        let got = message(&format!("push failed: {secret} was refused"));
        assert_eq!(got, "push failed: [redacted] was refused", "{secret}");
    }
    // Cut at 300 characters in the middle of a URL's user-info: what was
    // kept of it does not show either (the whole URL would be redacted
    // when printed; half of it would not).
    let url = format!("https://ci:{token}@github.com/o/r.git");
    for at in [250, 270, 285, 295] {
        let got = message(&format!("{} clone {url} failed", "x".repeat(at)));
        assert!(!got.contains("ci:") && !got.contains("ghp_"), "{at}: {got}");
        assert!(got.ends_with('…'), "{got}");
    }
    // A plain long word is still cut where it is.
    let long = message(&"y".repeat(400));
    assert_eq!(long.chars().count(), MAX_MESSAGE_CHARS + 1);
}

#[test]
fn a_report_names_the_commit_it_tested_only_as_a_hex_id() {
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let upload = format!(r#"{{"run_env": {{"commit_sha": "{sha}"}}, "data": []}}"#);
    assert_eq!(report_commit(&upload).as_deref(), Some(sha));
    let junit = format!(
        r#"<testsuites><testsuite><properties><property name="git_commit" value="{}"/></properties><testcase classname="a" name="b"/></testsuite></testsuites>"#,
        sha.to_uppercase()
    );
    assert_eq!(report_commit(&junit).as_deref(), Some(sha));
    // Not a commit id, not a commit property, after the cases, or no report.
    for text in [
        r#"{"run_env": {"commit_sha": "main; rm -rf /"}}"#.to_string(),
        r#"<testsuite><properties><property name="branch" value="0123456789ab"/></properties></testsuite>"#.to_string(),
        format!(r#"<testsuite><testcase classname="a" name="b"/><properties><property name="sha" value="{sha}"/></properties></testsuite>"#),
        "[]".to_string(),
        "<testsuite".to_string(),
    ] {
        assert_eq!(report_commit(&text), None, "{text}");
    }
}
