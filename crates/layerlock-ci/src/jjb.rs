//! Jenkins Job Builder YAML: a list of `- job:`, `- job-template:` and
//! `- builder:` items whose `builders:` hold `- shell: …` (sh) and
//! `- batch: …` (cmd) steps. A job's name is its `name:`; `{var}`
//! template fields are left as written.

use crate::script::{Layout, Phase, Script};
use crate::yaml::Node;

/// The item kinds that hold builders.
const KINDS: &[&str] = &["job", "job-template", "builder"];

/// Does this YAML look like a JJB file: a list of single-key items, one a
/// job or job template?
pub fn looks_like_jobs(doc: &Node) -> bool {
    let items = doc.items();
    !items.is_empty()
        && items
            .iter()
            .all(|i| matches!(i, Node::Map { entries, .. } if entries.len() == 1))
        && items
            .iter()
            .any(|i| i.get("job").is_some() || i.get("job-template").is_some())
}

pub fn scripts_in(docs: &[Node]) -> Vec<Script> {
    let mut out = Vec::new();
    for item in docs.iter().flat_map(Node::items) {
        for kind in KINDS {
            let Some(job) = item.get(kind) else { continue };
            let name = job.get("name").and_then(Node::as_str).unwrap_or(kind);
            for builder in job.get("builders").map(Node::items).unwrap_or_default() {
                let (node, shell) = match (builder.get("shell"), builder.get("batch")) {
                    (Some(node), _) => (node, "sh"),
                    (None, Some(node)) => (node, "cmd"),
                    _ => continue,
                };
                // `- shell: {command: …}` is accepted too.
                let node = node.get("command").unwrap_or(node);
                let Node::Scalar { value, pos, style } = node else {
                    continue;
                };
                out.push(Script {
                    text: value.clone(),
                    layout: Layout::for_yaml(*pos, *style),
                    job: Some(name.to_string()),
                    phase: Phase::JobTime,
                    env: Default::default(),
                    working_dir: None,
                    mounts: Vec::new(),
                    shell: Some(shell.to_string()),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml;

    #[test]
    fn shell_builders_of_jobs_and_templates() {
        let text = "- project:\n    name: p\n    jobs: ['{name}-test']\n- job-template:\n    name: '{name}-test'\n    builders:\n      - shell: |\n          pip install -r req.txt\n      - batch: call ci\\x.bat\n- job:\n    name: lint\n    builders:\n      - shell: ./ci/lint.sh\n";
        let docs = yaml::parse(text).unwrap();
        assert!(looks_like_jobs(&docs[0]));
        let got: Vec<(String, String, usize, usize)> = scripts_in(&docs)
            .into_iter()
            .map(|s| {
                let pos = s.layout.map(1, 1);
                (s.job.unwrap_or_default(), s.text, pos.line, pos.column)
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "{name}-test".into(),
                    "pip install -r req.txt\n".into(),
                    8,
                    11
                ),
                ("{name}-test".into(), "call ci\\x.bat".into(), 9, 16),
                ("lint".into(), "./ci/lint.sh".into(), 13, 16),
            ]
        );
    }
}
