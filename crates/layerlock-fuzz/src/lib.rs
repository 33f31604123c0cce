//! Fuzz targets for layerlock's parsers of untrusted input: one function per
//! target, taking raw bytes, feeding them to one parser and using what comes
//! back the way layerlock does, so that only the parsers can panic.
//!
//! `fuzz/` at the repository root wraps each function in a cargo-fuzz
//! target; `tests/smoke.rs` runs the committed seeds and a few thousand
//! mutations of them on every `cargo test`.

mod ci;
mod history;
mod index;
mod requirements;
mod shell;
mod structured;

pub use ci::{dockerfile, jenkinsfile, recipes, yaml_ci};
pub use history::{python_source, test_report};
pub use index::{page_lines, sdist_archive, simple_html, simple_json, wheel_zip};
pub use requirements::{pylock, requirements};
pub use shell::{cmd, shell};
pub use structured::{pylock_markers, yaml_aliases};

/// A fuzz target: any bytes in, nothing out, no panic.
pub type Target = fn(&[u8]);

/// Every target by name, as `fuzz/corpus/<name>/` and `fuzz/fuzz_targets/`
/// spell it.
pub const TARGETS: &[(&str, Target)] = &[
    ("requirements", requirements),
    ("pylock", pylock),
    ("simple_json", simple_json),
    ("simple_html", simple_html),
    ("wheel_zip", wheel_zip),
    ("sdist_archive", sdist_archive),
    ("page_lines", page_lines),
    ("yaml_ci", yaml_ci),
    ("shell", shell),
    ("cmd", cmd),
    ("jenkinsfile", jenkinsfile),
    ("dockerfile", dockerfile),
    ("recipes", recipes),
    ("test_report", test_report),
    ("python_source", python_source),
    ("pylock_markers", pylock_markers),
    ("yaml_aliases", yaml_aliases),
];

/// Text parsers take `&str`; the fuzzer's bytes become text the way a file
/// read with replacement would.
fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Render an error and every cause under it, as the CLI prints them.
fn render_error(error: &dyn std::error::Error) {
    let mut current = Some(error);
    while let Some(error) = current {
        std::hint::black_box(error.to_string());
        current = error.source();
    }
}
