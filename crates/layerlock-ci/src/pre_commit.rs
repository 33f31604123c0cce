//! `.pre-commit-config.yaml`: what `pre-commit run` installs before it runs
//! its hooks. Each repository is cloned at its `rev` and each hook's
//! environment made, with its `additional_dependencies`.

use crate::script::ModelError;
use crate::yaml::{self, Node, Pos};

/// One hook repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRepo {
    /// Its URL, or `local` / `meta`.
    pub repo: String,
    /// The revision cloned (a tag, a branch or a commit); `None` for
    /// `local` and `meta`.
    pub rev: Option<(String, Pos)>,
    /// Every hook's `additional_dependencies`, with where each is.
    pub dependencies: Vec<(String, Pos)>,
}

/// The hook repositories of a config.
pub fn read(text: &str) -> Result<Vec<HookRepo>, ModelError> {
    let docs = yaml::parse(text)?;
    let Some(doc) = docs.first() else {
        return Ok(Vec::new());
    };
    let Some(repos) = doc.get("repos") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for item in repos.items() {
        let repo = item
            .get("repo")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_string();
        let rev = item
            .get("rev")
            .and_then(|r| Some((r.as_str()?.to_string(), r.pos())));
        let mut dependencies = Vec::new();
        for hook in item.get("hooks").map(Node::items).unwrap_or(&[]) {
            for dep in hook
                .get("additional_dependencies")
                .map(Node::items)
                .unwrap_or(&[])
            {
                if let Some(spec) = dep.as_str() {
                    dependencies.push((spec.to_string(), dep.pos()));
                }
            }
        }
        if repo.is_empty() {
            return Err(ModelError {
                line: item.pos().line,
                column: item.pos().column,
                message: "a `repos` entry has no `repo`".to_string(),
            });
        }
        out.push(HookRepo {
            repo,
            rev,
            dependencies,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repos_revs_and_dependencies() {
        let repos = read(
            "repos:\n  - repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks:\n      - id: black\n        additional_dependencies: [click==8.1.7]\n  - repo: local\n    hooks:\n      - id: x\n        additional_dependencies:\n          - requests\n",
        )
        .unwrap();
        assert_eq!(repos.len(), 2);
        assert_eq!(repos[0].rev.as_ref().unwrap().0, "24.1.0");
        assert_eq!(repos[0].dependencies[0].0, "click==8.1.7");
        assert_eq!(repos[1].dependencies[0].1.line, 11);
        assert!(read("repos:\n  - hooks: []\n").is_err());
    }
}
