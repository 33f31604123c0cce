//! GitHub Actions: workflow jobs' `run:` steps and composite actions'
//! `runs.steps[].run`, with workflow, job and step `env`.

use std::collections::BTreeMap;

use crate::script::{Layout, ModelError, Phase, Script};
use crate::yaml::{self, Node};

pub fn looks_like_workflow(doc: &Node) -> bool {
    doc.get("jobs")
        .is_some_and(|j| matches!(j, Node::Map { .. }))
}

pub fn looks_like_action(doc: &Node) -> bool {
    doc.get("runs").and_then(|r| r.get("steps")).is_some()
}

fn env_of(node: Option<&Node>, into: &mut BTreeMap<String, String>) {
    for (k, v) in node.map(Node::entries).unwrap_or_default() {
        if let (Some(k), Some(v)) = (k.as_str(), v.as_str()) {
            // `${{ … }}` values are not literal.
            if !v.contains("${{") {
                into.insert(k.to_string(), v.to_string());
            }
        }
    }
}

fn steps(
    steps: &Node,
    job: &str,
    env: &BTreeMap<String, String>,
    dir: RunDefaults<'_>,
    out: &mut Vec<Script>,
) {
    for step in steps.items() {
        if let Some(build) = image_build(step) {
            let mut env = env.clone();
            env_of(step.get("env"), &mut env);
            out.push(Script {
                env,
                job: Some(job.to_string()),
                working_dir: build
                    .working_dir
                    .clone()
                    .or_else(|| dir.working_dir.map(str::to_string)),
                ..build
            });
            continue;
        }
        // Actions that run the commands they are given (`nick-fields/retry`'s
        // `command:`, an `install-cmd:`) run them as `run:` would.
        let mut runs: Vec<&Node> = step.get("run").into_iter().collect();
        runs.extend(command_inputs(step));
        let mut env = env.clone();
        env_of(step.get("env"), &mut env);
        for run in runs {
            let Node::Scalar { value, pos, style } = run else {
                continue;
            };
            out.push(Script {
                text: value.clone(),
                layout: Layout::for_yaml(*pos, *style),
                job: Some(job.to_string()),
                phase: Phase::JobTime,
                env: env.clone(),
                working_dir: step
                    .get("working-directory")
                    .and_then(Node::as_str)
                    .or(dir.working_dir)
                    .map(str::to_string),
                mounts: Vec::new(),
                // `shell: sh` runs `sh -e {0}`; `bash`, `python`, a command.
                shell: step
                    .get("shell")
                    .and_then(Node::as_str)
                    .or(dir.shell)
                    .and_then(|s| s.split_whitespace().next())
                    .map(str::to_string),
            });
        }
    }
}

/// The inputs of a `uses:` step that are shell commands: `command:` of the
/// actions known to run theirs, and any input named like a command
/// (`command`, `commands`, `run`, or ending in `-cmd`, `-command`,
/// `-commands`, `-run`, with `_` too). Not `actions/github-script`'s
/// `script:` (JavaScript).
fn command_inputs(step: &Node) -> Vec<&Node> {
    let Some(action) = step
        .get("uses")
        .and_then(Node::as_str)
        .and_then(|u| u.split('@').next())
    else {
        return Vec::new();
    };
    let Some(with) = step.get("with") else {
        return Vec::new();
    };
    let commandish = |key: &str| {
        let key = key.to_ascii_lowercase().replace('_', "-");
        matches!(key.as_str(), "command" | "commands" | "run")
            || ["-cmd", "-command", "-commands", "-run"]
                .iter()
                .any(|s| key.ends_with(s))
    };
    with.entries()
        .iter()
        .filter(|(key, _)| {
            key.as_str().is_some_and(|k| {
                (k == "command" && COMMAND_ACTIONS.contains(&action)) || commandish(k)
            })
        })
        .map(|(_, value)| value)
        .collect()
}

/// A workflow's or job's `defaults: run:`: where `run:` steps run, and
/// with which shell.
#[derive(Clone, Copy, Default)]
struct RunDefaults<'a> {
    working_dir: Option<&'a str>,
    shell: Option<&'a str>,
}

impl<'a> RunDefaults<'a> {
    fn of(node: &'a Node) -> Self {
        let run = node.get("defaults").and_then(|d| d.get("run"));
        let field = |name| run.and_then(|r| r.get(name)).and_then(Node::as_str);
        Self {
            working_dir: field("working-directory"),
            shell: field("shell"),
        }
    }

    /// Each field of the job's, else the workflow's.
    fn or(self, outer: Self) -> Self {
        Self {
            working_dir: self.working_dir.or(outer.working_dir),
            shell: self.shell.or(outer.shell),
        }
    }
}

/// `uses: docker/bake-action` with `files:` and `targets:` (lists, one per
/// line or comma-separated): the `docker buildx bake` it runs. A value
/// with `${{ … }}` stays a variable, so the walker says it is computed.
fn bake_build(step: &Node, uses: &Node) -> Script {
    let with = step.get("with");
    let list = |name: &str| -> Vec<String> {
        let Some(value) = with.and_then(|w| w.get(name)) else {
            return Vec::new();
        };
        let items: Vec<String> = match value.as_str() {
            Some(text) => text
                .split(['\n', ','])
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
                .collect(),
            None => value
                .items()
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
        };
        items
            .into_iter()
            .map(|v| {
                if v.contains("${{") {
                    "$COMPUTED".to_string()
                } else {
                    crate::script::quote(&v)
                }
            })
            .collect()
    };
    let mut text = String::from("docker buildx bake");
    for file in list("files") {
        text.push_str(" -f ");
        text.push_str(&file);
    }
    for target in list("targets") {
        text.push(' ');
        text.push_str(&target);
    }
    Script {
        text,
        layout: Layout::Folded { start: uses.pos() },
        job: None,
        phase: Phase::JobTime,
        env: BTreeMap::new(),
        working_dir: with
            .and_then(|w| w.get("workdir"))
            .and_then(Node::as_str)
            .map(str::to_string),
        mounts: Vec::new(),
        shell: None,
    }
}

/// Actions whose `with: command:` is a shell script they run.
const COMMAND_ACTIONS: &[&str] = &[
    "nick-fields/retry",
    "nick-invision/retry",
    "Wandalen/wretry.action",
];

/// `uses: docker/build-push-action@…` with `file:` and `context:`: the
/// image build it runs, as the `docker build -f FILE CONTEXT` it comes to,
/// at the `uses:` line (so the walker reads that Dockerfile, whatever its
/// name).
fn image_build(step: &Node) -> Option<Script> {
    let uses = step.get("uses")?;
    let action = uses.as_str()?.split('@').next()?;
    let with = step.get("with");
    let field = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| with?.get(n)?.as_str())
            .filter(|v| !v.contains("${{"))
    };
    if action == "docker/bake-action" {
        return Some(bake_build(step, uses));
    }
    if !matches!(
        action,
        "docker/build-push-action" | "redhat-actions/buildah-build"
    ) {
        return None;
    }
    let file = field(&["file", "dockerfiles", "containerfiles"])?;
    let context = field(&["context"]).unwrap_or(".");
    Some(Script {
        text: format!(
            "docker build -f {} {}",
            crate::script::quote(file),
            crate::script::quote(context)
        ),
        layout: Layout::Folded { start: uses.pos() },
        job: None,
        phase: Phase::JobTime,
        env: BTreeMap::new(),
        working_dir: None,
        mounts: Vec::new(),
        shell: None,
    })
}

pub fn scripts(text: &str) -> Result<Vec<Script>, ModelError> {
    Ok(scripts_in(&yaml::parse(text)?))
}

/// The scripts of already parsed documents (callers that parsed the file to
/// tell its kind need not parse it again).
pub fn scripts_in(docs: &[Node]) -> Vec<Script> {
    let mut out = Vec::new();
    for doc in docs {
        let mut env = BTreeMap::new();
        env_of(doc.get("env"), &mut env);
        if let Some(jobs) = doc.get("jobs") {
            for (id, job) in jobs.entries() {
                let Some(id) = id.as_str() else { continue };
                let mut job_env = env.clone();
                env_of(job.get("env"), &mut job_env);
                let dir = RunDefaults::of(job).or(RunDefaults::of(doc));
                if let Some(s) = job.get("steps") {
                    steps(s, id, &job_env, dir, &mut out);
                }
            }
        }
        if let Some(s) = doc.get("runs").and_then(|r| r.get("steps")) {
            let name = doc.get("name").and_then(Node::as_str).unwrap_or("action");
            steps(s, name, &env, RunDefaults::default(), &mut out);
        }
    }
    out
}
