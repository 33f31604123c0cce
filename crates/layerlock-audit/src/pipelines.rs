//! Which Buildkite pipelines a repository has, shared by `tether` and
//! `steps`. A repository that splits its jobs with `.buildkite/ci_config*.yaml`
//! files (vLLM: one per hardware platform) has one pipeline per config,
//! made of the folders its `job_dirs` lists; otherwise `.buildkite/` is one
//! pipeline.

use std::path::{Path, PathBuf};

use layerlock_ci::yaml;

/// One pipeline: the folders or files its steps are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    /// The config file that defines it, or the folder itself.
    pub name: String,
    /// Paths relative to the root.
    pub paths: Vec<String>,
}

/// Most pipeline configs a repository may have before the rest are ignored.
const MAX_CONFIGS: usize = 256;

/// The pipelines under `root`.
pub fn discover(root: &Path) -> Vec<Pipeline> {
    let mut configs: Vec<PathBuf> = fs_err::read_dir(root.join(".buildkite"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("ci_config") && (n.ends_with(".yaml") || n.ends_with(".yml"))
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    configs.sort();
    configs.truncate(MAX_CONFIGS);
    let mut pipelines = Vec::new();
    for config in configs {
        let Ok(text) = fs_err::read_to_string(&config) else {
            continue;
        };
        let Ok(docs) = yaml::parse(&text) else {
            continue;
        };
        let mut paths: Vec<String> = Vec::new();
        for doc in &docs {
            for dir in doc
                .get("job_dirs")
                .map(yaml::Node::items)
                .unwrap_or_default()
            {
                if let Some(d) = dir.as_str()
                    && !paths.iter().any(|x| x == d)
                {
                    paths.push(d.trim_end_matches('/').to_string());
                }
            }
        }
        if !paths.is_empty() {
            let name = config
                .strip_prefix(root)
                .unwrap_or(&config)
                .display()
                .to_string();
            pipelines.push(Pipeline { name, paths });
        }
    }
    if pipelines.is_empty() {
        pipelines.push(Pipeline {
            name: ".buildkite".to_string(),
            paths: vec![".buildkite".to_string()],
        });
    }
    pipelines
}

/// Every folder of every pipeline, once each, in order.
pub fn all_paths(pipelines: &[Pipeline]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in pipelines.iter().flat_map(|p| &p.paths) {
        if !out.contains(p) {
            out.push(p.clone());
        }
    }
    out
}
