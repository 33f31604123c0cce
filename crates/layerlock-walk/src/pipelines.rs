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
        let Ok(bytes) = crate::read::read_bounded(&config, root) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
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

/// Pipeline files at the top of `.buildkite/` that no `ci_config` names
/// (vLLM's `test-amd.yaml`, rendered into the AMD pipeline by a bootstrap
/// script): a test they run is run by CI. Empty when `.buildkite/` is
/// itself the one pipeline.
pub fn loose_files(root: &Path, pipelines: &[Pipeline]) -> Vec<String> {
    if pipelines
        .iter()
        .any(|p| p.paths.iter().any(|d| d == ".buildkite"))
    {
        return Vec::new();
    }
    let dir = root.join(".buildkite");
    let Ok(entries) = fs_err::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| (n.ends_with(".yaml") || n.ends_with(".yml")) && !n.starts_with("ci_config"))
        .filter(|n| {
            crate::read::read_bounded(&dir.join(n), root)
                .ok()
                .and_then(|bytes| yaml::parse(&String::from_utf8_lossy(&bytes)).ok())
                .is_some_and(|docs| docs.iter().any(|d| d.get("steps").is_some()))
        })
        .map(|n| format!(".buildkite/{n}"))
        .collect();
    out.sort();
    out
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

/// Most YAML files read for one pipeline; a larger tree is cut there.
const MAX_PIPELINE_FILES: usize = 20_000;

/// A file and its text (or, for a file that could not be read, the error).
pub type FileText = (PathBuf, String);

/// Every pipeline file (YAML with `steps`, or a bare list of steps) under
/// `paths`, sorted, each with its text. Symlinked folders are not followed;
/// files that cannot be read are returned as errors (path, message).
pub fn pipeline_files(paths: &[PathBuf], root: &Path) -> (Vec<FileText>, Vec<FileText>) {
    fn collect(path: &Path, out: &mut Vec<PathBuf>) {
        if out.len() >= MAX_PIPELINE_FILES {
            return;
        }
        let is_link = fs_err::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        if path.is_file() {
            out.push(path.to_path_buf());
            return;
        }
        if is_link {
            return;
        }
        let Ok(entries) = fs_err::read_dir(path) else {
            return;
        };
        let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        entries.sort();
        for entry in entries {
            if entry.is_dir() {
                collect(&entry, out);
            } else if entry.extension().is_some_and(|e| e == "yml" || e == "yaml") {
                out.push(entry);
            }
        }
    }
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match fs_err::metadata(path) {
            Err(_) => errors.push((path.clone(), "no such file or directory".to_string())),
            Ok(meta) if !meta.is_file() && !meta.is_dir() => {
                errors.push((path.clone(), crate::read::Refused::NotRegular.to_string()));
            }
            Ok(_) => collect(path, &mut files),
        }
    }
    files.sort();
    files.dedup();
    let mut out = Vec::new();
    for file in files {
        // Files named outside the root are read (the user chose them);
        // files found by walking must stay inside it.
        let allowed = if paths.contains(&file) {
            fs_err::canonicalize(&file)
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| root.to_path_buf())
        } else {
            root.to_path_buf()
        };
        let text = match crate::read::read_bounded(&file, &allowed) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                errors.push((file, e.to_string()));
                continue;
            }
        };
        // A file that does not parse is kept: the check reports it.
        let is_pipeline = yaml::parse(&text)
            .map(|docs| {
                docs.iter()
                    .any(|d| d.get("steps").is_some() || matches!(d, yaml::Node::Seq { .. }))
            })
            .unwrap_or(true);
        if is_pipeline {
            out.push((file, text));
        } else if paths.contains(&file) {
            // Named on the command line: a mistake, not a pipeline of no
            // steps.
            errors.push((
                file,
                "not a Buildkite pipeline (no `steps:` list); pass pipeline files or the folders that hold them".to_string(),
            ));
        }
    }
    (out, errors)
}
