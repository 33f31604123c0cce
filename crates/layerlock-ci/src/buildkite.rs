//! Buildkite pipelines: `steps` (top level or a bare list), group steps,
//! `command`/`commands` as a string, list or block scalar, plugin commands
//! (the docker plugin's `command` list), step and pipeline `env`, and nested
//! per-platform overrides such as vLLM's `mirror:`.

use std::collections::BTreeMap;

use crate::script::{Layout, ModelError, Phase, Script, quote};
use crate::yaml::{self, Node};

/// Does this YAML look like a Buildkite pipeline?
pub fn looks_like_pipeline(doc: &Node) -> bool {
    doc.get("steps")
        .is_some_and(|s| matches!(s, Node::Seq { .. }))
}

/// The step's literal variables. A value Buildkite fills in from the
/// step's `matrix` (`{{ matrix.python }}`) is known only at run time, so it
/// is left out (and the command sees an unset variable).
fn literal_env(node: Option<&Node>, into: &mut BTreeMap<String, String>) {
    let Some(node) = node else { return };
    let mut set = |k: &str, v: &str| {
        if v.contains("{{") {
            into.remove(k);
        } else {
            into.insert(k.to_string(), v.to_string());
        }
    };
    for (k, v) in node.entries() {
        if let (Some(k), Some(v)) = (k.as_str(), v.as_str()) {
            set(k, v);
        }
    }
    // `env: [A=1, B=2]` is accepted too.
    for item in node.items() {
        if let Some((k, v)) = item.as_str().and_then(|s| s.split_once('=')) {
            set(k, v);
        }
    }
}

/// Scripts of a `command`/`commands` value.
fn command_scripts(node: &Node, out: &mut Vec<(String, Layout)>) {
    match node {
        Node::Scalar { value, pos, style } => {
            // Buildkite interpolates `$VAR` at upload and turns `$$` into a
            // literal `$` for the shell.
            out.push((value.replace("$$", "$"), Layout::for_yaml(*pos, *style)));
        }
        Node::Seq { items, .. } => {
            for item in items {
                command_scripts(item, out);
            }
        }
        Node::Map { .. } => {}
    }
}

/// A plugin's `command: [argv…]` (docker, docker-compose plugins) is one
/// command line.
fn plugin_scripts(step: &Node, out: &mut Vec<(String, Layout)>) {
    let Some(plugins) = step.get("plugins") else {
        return;
    };
    let mut configs: Vec<&Node> = Vec::new();
    for item in plugins.items() {
        for (_, config) in item.entries() {
            configs.push(config);
        }
    }
    for (_, config) in plugins.entries() {
        configs.push(config);
    }
    for config in configs {
        for key in ["command", "commands"] {
            match config.get(key) {
                Some(Node::Seq { items, pos }) => {
                    let words: Vec<String> =
                        items.iter().filter_map(Node::as_str).map(quote).collect();
                    out.push((words.join(" "), Layout::Folded { start: *pos }));
                }
                Some(node @ Node::Scalar { .. }) => command_scripts(node, out),
                _ => {}
            }
        }
    }
}

struct Walker<'a> {
    out: &'a mut Vec<Script>,
    pipeline_env: BTreeMap<String, String>,
    count: usize,
}

impl Walker<'_> {
    fn step(&mut self, step: &Node, inherited: &BTreeMap<String, String>) {
        if let Some(steps) = step.get("steps") {
            // A group step; its own env applies to its steps.
            let mut env = inherited.clone();
            literal_env(step.get("env"), &mut env);
            for inner in steps.items() {
                self.step(inner, &env);
            }
            return;
        }
        if !matches!(step, Node::Map { .. }) {
            return;
        }
        self.count += 1;
        let job = step
            .get("key")
            .or_else(|| step.get("id"))
            .and_then(Node::as_str)
            .or_else(|| step.get("label").and_then(Node::as_str))
            .or_else(|| step.get("name").and_then(Node::as_str))
            .map_or_else(|| format!("step {}", self.count), str::to_string);
        let mut env = inherited.clone();
        literal_env(step.get("env"), &mut env);
        let working_dir = step
            .get("working_dir")
            .and_then(Node::as_str)
            .map(str::to_string);
        let mut scripts = Vec::new();
        for key in ["command", "commands"] {
            if let Some(node) = step.get(key) {
                command_scripts(node, &mut scripts);
            }
        }
        plugin_scripts(step, &mut scripts);
        self.emit(&job, scripts, &env, working_dir.clone());
        // Nested overrides run the step again elsewhere (vLLM's `mirror:`
        // generates an AMD copy); each variant is its own job.
        if let Some(mirror) = step.get("mirror") {
            for (variant, config) in mirror.entries() {
                let Some(variant) = variant.as_str() else {
                    continue;
                };
                let mut env = env.clone();
                literal_env(config.get("env"), &mut env);
                let mut scripts = Vec::new();
                for key in ["command", "commands"] {
                    if let Some(node) = config.get(key) {
                        command_scripts(node, &mut scripts);
                    }
                }
                plugin_scripts(config, &mut scripts);
                let dir = config
                    .get("working_dir")
                    .and_then(Node::as_str)
                    .map(str::to_string)
                    .or_else(|| working_dir.clone());
                self.emit(&format!("{job}@{variant}"), scripts, &env, dir);
            }
        }
    }

    fn emit(
        &mut self,
        job: &str,
        scripts: Vec<(String, Layout)>,
        env: &BTreeMap<String, String>,
        working_dir: Option<String>,
    ) {
        for (text, layout) in scripts {
            let mut all_env = self.pipeline_env.clone();
            all_env.extend(env.clone());
            self.out.push(Script {
                text,
                layout,
                job: Some(job.to_string()),
                phase: Phase::JobTime,
                env: all_env,
                working_dir: working_dir.clone(),
                mounts: Vec::new(),
                shell: None,
            });
        }
    }
}

/// Every script of every step of a pipeline file.
pub fn scripts(text: &str) -> Result<Vec<Script>, ModelError> {
    Ok(scripts_in(&yaml::parse(text)?))
}

/// The scripts of already parsed documents (callers that parsed the file to
/// tell its kind need not parse it again).
pub fn scripts_in(docs: &[Node]) -> Vec<Script> {
    let mut out = Vec::new();
    for doc in docs {
        let mut pipeline_env = BTreeMap::new();
        literal_env(doc.get("env"), &mut pipeline_env);
        let mut walker = Walker {
            out: &mut out,
            pipeline_env,
            count: 0,
        };
        let steps: &[Node] = match doc {
            Node::Seq { items, .. } => items,
            _ => doc.get("steps").map(Node::items).unwrap_or_default(),
        };
        for step in steps {
            walker.step(step, &BTreeMap::new());
        }
    }
    out
}
