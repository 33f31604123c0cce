//! AppVeyor (`appveyor.yml`, `.appveyor.yml`): the script lists of a
//! build (`install:`, `build_script:`, `test_script:`, …), each item a
//! string (run by cmd on Windows images, by bash on Linux and macOS ones)
//! or `{cmd: …}`, `{ps: …}`, `{pwsh: …}`, `{sh: …}`; with `environment`.
//! A build `matrix` runs once per row; the model reads the lists once,
//! with the global variables and those of the first row only (each row
//! runs the same scripts; only its values differ).

use std::collections::BTreeMap;

use crate::script::{Layout, Phase, Script};
use crate::yaml::Node;

/// The script lists, in the order a build runs them; each is the job
/// name of its scripts.
const PHASES: &[&str] = &[
    "init",
    "install",
    "before_build",
    "build_script",
    "after_build",
    "before_test",
    "test_script",
    "after_test",
    "before_deploy",
    "deploy_script",
    "after_deploy",
    "on_success",
    "on_failure",
    "on_finish",
];

pub fn scripts_in(docs: &[Node]) -> Vec<Script> {
    let mut out = Vec::new();
    for doc in docs {
        let env = environment(doc.get("environment"));
        let plain = plain_shell(doc.get("image"));
        for phase in PHASES {
            for item in doc.get(phase).map(Node::items).unwrap_or_default() {
                let (node, shell) = match item {
                    Node::Scalar { .. } => (item, plain),
                    Node::Map { entries, .. } => {
                        let Some((key, value)) = entries.first() else {
                            continue;
                        };
                        let shell = match key.as_str() {
                            Some("cmd") => Some("cmd"),
                            Some("ps" | "pwsh") => Some("pwsh"),
                            Some("sh") => None,
                            _ => continue,
                        };
                        (value, shell)
                    }
                    Node::Seq { .. } => continue,
                };
                let Node::Scalar { value, pos, style } = node else {
                    continue;
                };
                out.push(Script {
                    text: value.clone(),
                    layout: Layout::for_yaml(*pos, *style),
                    job: Some((*phase).to_string()),
                    phase: Phase::JobTime,
                    env: env.clone(),
                    working_dir: None,
                    mounts: Vec::new(),
                    shell: shell.map(str::to_string),
                });
            }
        }
    }
    out
}

/// The shell of a plain item: cmd, unless every image is Linux or macOS.
fn plain_shell(image: Option<&Node>) -> Option<&'static str> {
    let images: Vec<String> = match image {
        Some(Node::Scalar { value, .. }) => vec![value.to_ascii_lowercase()],
        Some(list) => list
            .items()
            .iter()
            .filter_map(Node::as_str)
            .map(str::to_ascii_lowercase)
            .collect(),
        None => Vec::new(),
    };
    let unix = !images.is_empty()
        && images
            .iter()
            .all(|i| i.contains("ubuntu") || i.contains("macos"));
    (!unix).then_some("cmd")
}

/// Global variables (`environment: {X: v}` or its `global:`), then the
/// first `matrix:` row's. Secure values are not literal.
fn environment(node: Option<&Node>) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let Some(node) = node else { return env };
    let mut literal = |map: &Node| {
        for (k, v) in map.entries() {
            if let (Some(k), Some(v)) = (k.as_str(), v.as_str()) {
                env.insert(k.to_string(), v.to_string());
            }
        }
    };
    literal(node);
    if let Some(global) = node.get("global") {
        literal(global);
    }
    if let Some(first) = node.get("matrix").and_then(|m| m.items().first()) {
        literal(first);
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml;

    #[test]
    fn string_and_shell_items_with_the_first_matrix_row() {
        let text = "environment:\n  global:\n    PKG: foo\n  matrix:\n    - PY: '3.12'\n    - PY: '3.13'\ninstall:\n  - call ci\\install.bat\n  - ps: pip install $env:PKG\nbuild_script:\n  - cmd: python -m build\ntest_script:\n  - sh: pytest\n";
        let scripts = scripts_in(&yaml::parse(text).unwrap());
        let got: Vec<(&str, &str, usize, usize, Option<&str>)> = scripts
            .iter()
            .map(|s| {
                let pos = s.layout.map(1, 1);
                (
                    s.job.as_deref().unwrap_or(""),
                    s.text.as_str(),
                    pos.line,
                    pos.column,
                    s.shell.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("install", "call ci\\install.bat", 8, 5, Some("cmd")),
                ("install", "pip install $env:PKG", 9, 9, Some("pwsh")),
                ("build_script", "python -m build", 11, 10, Some("cmd")),
                ("test_script", "pytest", 13, 9, None),
            ]
        );
        assert_eq!(scripts[0].env["PY"], "3.12");
        assert_eq!(scripts[0].env["PKG"], "foo");
    }

    #[test]
    fn plain_items_of_linux_images_run_in_bash() {
        let text = "image: Ubuntu2204\ninstall:\n  - pip install x\n";
        let scripts = scripts_in(&yaml::parse(text).unwrap());
        assert_eq!(scripts[0].shell, None);
    }
}
