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
    outer: &[Option<&Node>],
    out: &mut Vec<Script>,
) {
    // What earlier steps wrote to `$GITHUB_ENV` holds for the later ones.
    let mut shared = env.clone();
    for step in steps.items() {
        let env = &shared.clone();
        for setting in tool_settings(step, outer) {
            let mut env = env.clone();
            env_of(step.get("env"), &mut env);
            out.push(Script {
                env,
                job: Some(job.to_string()),
                working_dir: dir.working_dir.map(str::to_string),
                ..setting
            });
        }
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
            exported(value, &mut shared);
        }
    }
}

/// `echo "NAME=value" >> "$GITHUB_ENV"` lines of a step with a literal
/// value: the later steps of the job see NAME.
fn exported(text: &str, env: &mut BTreeMap<String, String>) {
    for line in text.lines() {
        let Some((command, target)) = line.split_once(">>") else {
            continue;
        };
        if !target.contains("GITHUB_ENV") {
            continue;
        }
        let Some(rest) = command.trim().strip_prefix("echo ") else {
            continue;
        };
        let assignment = rest.trim().trim_matches(|c| c == '"' || c == '\'');
        if let Some((name, value)) = assignment.split_once('=')
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !value.contains(['$', '`', '"', '\''])
        {
            env.insert(name.to_string(), value.to_string());
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

/// Settings of the tools a step runs that hold requirements or commands,
/// each as the script it comes to, at its value's line:
/// `actions/setup-python`'s `pip-install:` (a `pip install` of its words),
/// and, for a step that runs cibuildwheel, the `CIBW_*` variables of the
/// step, its job (`outer`) and its workflow: `CIBW_TEST_REQUIRES[_OS]` (a
/// `pip install`), `CIBW_BEFORE_ALL`, `CIBW_BEFORE_BUILD`,
/// `CIBW_BEFORE_TEST` and `CIBW_REPAIR_WHEEL_COMMAND` (commands, any `_OS`).
fn tool_settings(step: &Node, outer: &[Option<&Node>]) -> Vec<Script> {
    let action = step
        .get("uses")
        .and_then(Node::as_str)
        .and_then(|u| u.split('@').next())
        .unwrap_or("");
    let mut out = Vec::new();
    if action == "actions/setup-python"
        && let Some(Node::Scalar { value, pos, .. }) =
            step.get("with").and_then(|w| w.get("pip-install"))
        && !value.trim().is_empty()
    {
        out.push(Script::job_time(
            format!(
                "pip install {}",
                value.split_whitespace().collect::<Vec<_>>().join(" ")
            ),
            Layout::Folded { start: *pos },
        ));
    }
    let runs_cibuildwheel = action == "pypa/cibuildwheel"
        || step
            .get("run")
            .and_then(Node::as_str)
            .is_some_and(|r| r.lines().any(starts_cibuildwheel));
    if !runs_cibuildwheel {
        return out;
    }
    let scopes = outer.iter().copied().chain([step.get("env")]).flatten();
    for (key, value) in scopes.flat_map(Node::entries) {
        let (Some(key), Node::Scalar { value, pos, style }) = (key.as_str(), value) else {
            continue;
        };
        let setting = key.strip_prefix("CIBW_").unwrap_or("");
        let base = ["_LINUX", "_MACOS", "_WINDOWS", "_PYODIDE", "_IOS"]
            .iter()
            .find_map(|os| setting.strip_suffix(os))
            .unwrap_or(setting);
        match base {
            "TEST_REQUIRES" if !value.trim().is_empty() => out.push(Script::job_time(
                format!(
                    "pip install {}",
                    value.split_whitespace().collect::<Vec<_>>().join(" ")
                ),
                Layout::Folded { start: *pos },
            )),
            "BEFORE_ALL" | "BEFORE_BUILD" | "BEFORE_TEST" | "REPAIR_WHEEL_COMMAND" => {
                out.push(Script::job_time(
                    value.clone(),
                    Layout::for_yaml(*pos, *style),
                ));
            }
            _ => {}
        }
    }
    out
}

/// Whether a line runs cibuildwheel: as its command, or through
/// `pipx run`, `uvx` or `python -m`.
fn starts_cibuildwheel(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some(at) = words.iter().position(|w| *w == "cibuildwheel") else {
        return false;
    };
    matches!(
        &words[..at],
        [] | ["pipx", "run"] | ["uvx"] | ["python" | "python3", "-m"]
    )
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
    // A file given by an expression stays a variable, so the walker says
    // the image it builds was not read (as for bake files).
    let written = |names: &[&str]| names.iter().find_map(|n| with?.get(n)?.as_str());
    let file = match field(&["file", "dockerfiles", "containerfiles"]) {
        Some(file) => crate::script::quote(file),
        None if written(&["file", "dockerfiles", "containerfiles"]).is_some() => {
            "$COMPUTED".to_string()
        }
        None => return None,
    };
    let context = field(&["context"]).unwrap_or(".");
    Some(Script::job_time(
        format!("docker build -f {file} {}", crate::script::quote(context)),
        Layout::Folded { start: uses.pos() },
    ))
}

/// At most this many combinations of a matrix are read; past it, each
/// value of each key is read at least once.
const MAX_COMBINATIONS: usize = 16;

/// A job's `strategy.matrix` as combinations of literal values: the
/// product of its keys' lists (or, when that is larger than
/// [`MAX_COMBINATIONS`], as many combinations as the longest list, so every
/// value appears), then each `include:` entry. None when the matrix is
/// computed (`${{ fromJSON(…) }}`) or absent; a key whose values are not
/// literal is left out (its references stay unknown).
fn matrix_combinations(job: &Node) -> Vec<BTreeMap<String, String>> {
    let Some(matrix) = job.get("strategy").and_then(|s| s.get("matrix")) else {
        return Vec::new();
    };
    let mut keys: Vec<(String, Vec<String>)> = Vec::new();
    for (key, value) in matrix.entries() {
        let Some(key) = key.as_str() else { continue };
        if matches!(key, "include" | "exclude") {
            continue;
        }
        let values: Option<Vec<String>> = value
            .items()
            .iter()
            .map(|v| {
                v.as_str()
                    .filter(|v| !v.contains("${{"))
                    .map(str::to_string)
            })
            .collect();
        if let Some(values) = values.filter(|v| !v.is_empty()) {
            keys.push((key.to_string(), values));
        }
    }
    let product = keys
        .iter()
        .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))
        .unwrap_or(usize::MAX);
    let mut out: Vec<BTreeMap<String, String>> = Vec::new();
    if !keys.is_empty() {
        if product <= MAX_COMBINATIONS {
            out.push(BTreeMap::new());
            for (key, values) in &keys {
                out = out
                    .into_iter()
                    .flat_map(|combo| {
                        values.iter().map(move |v| {
                            let mut combo = combo.clone();
                            combo.insert(key.clone(), v.clone());
                            combo
                        })
                    })
                    .collect();
            }
        } else {
            let rows = keys.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
            for row in 0..rows {
                out.push(
                    keys.iter()
                        .map(|(k, v)| (k.clone(), v[row % v.len()].clone()))
                        .collect(),
                );
            }
        }
    }
    let originals = out.len();
    for entry in matrix.get("include").map(Node::items).unwrap_or_default() {
        let combo: BTreeMap<String, String> = entry
            .entries()
            .iter()
            .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string())))
            .filter(|(_, v)| !v.contains("${{"))
            .collect();
        if combo.is_empty() {
            continue;
        }
        // GitHub adds an entry's values to every combination whose own
        // keys it does not change; one that fits none is a combination of
        // its own.
        let original = |k: &String| keys.iter().any(|(key, _)| key == k);
        let mut fitted = false;
        for existing in out.iter_mut().take(originals) {
            let fits = combo
                .iter()
                .all(|(k, v)| !original(k) || existing.get(k) == Some(v));
            if fits && !keys.is_empty() {
                fitted = true;
                for (k, v) in &combo {
                    if !original(k) {
                        existing.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        if !fitted && out.len() < 4 * MAX_COMBINATIONS {
            out.push(combo);
        }
    }
    out
}

/// Where each literal value of a job's matrix is written, by key and
/// value (the first place): a value that is the whole of a setting is
/// reported there, where its commands are.
type Written = BTreeMap<(String, String), Node>;

fn matrix_places(job: &Node) -> Written {
    let mut out = Written::new();
    let Some(matrix) = job.get("strategy").and_then(|s| s.get("matrix")) else {
        return out;
    };
    let mut keep = |key: &Node, value: &Node| {
        if let (Some(k), Some(v)) = (key.as_str(), value.as_str()) {
            out.entry((k.to_string(), v.to_string()))
                .or_insert_with(|| value.clone());
        }
    };
    for (key, values) in matrix.entries() {
        for value in values.items() {
            keep(key, value);
        }
    }
    for entry in matrix.get("include").map(Node::items).unwrap_or_default() {
        for (key, value) in entry.entries() {
            keep(key, value);
        }
    }
    out
}

/// A copy of `node` with every `${{ matrix.KEY }}` of `combo` filled in;
/// a scalar that is one such expression becomes the value as written in
/// the matrix, at its place.
fn with_matrix(node: &Node, combo: &BTreeMap<String, String>, written: &Written) -> Node {
    match node {
        Node::Scalar { value, pos, style } if value.contains("matrix.") => {
            let whole = value
                .trim()
                .strip_prefix("${{")
                .and_then(|v| v.strip_suffix("}}"))
                .and_then(|v| v.trim().strip_prefix("matrix."))
                .filter(|k| !k.contains(|c: char| c.is_whitespace() || "(|&".contains(c)));
            if let Some(key) = whole
                && let Some(v) = combo.get(key)
                && let Some(place) = written.get(&(key.to_string(), v.clone()))
            {
                return place.clone();
            }
            Node::Scalar {
                value: fill_matrix(value, combo),
                pos: *pos,
                style: *style,
            }
        }
        Node::Scalar { .. } => node.clone(),
        Node::Seq { items, pos } => Node::Seq {
            items: items
                .iter()
                .map(|i| with_matrix(i, combo, written))
                .collect(),
            pos: *pos,
        },
        Node::Map { entries, pos } => Node::Map {
            entries: entries
                .iter()
                .map(|(k, v)| (k.clone(), with_matrix(v, combo, written)))
                .collect(),
            pos: *pos,
        },
    }
}

/// `${{ matrix.KEY }}` (any spacing) → its value in `combo`; other
/// expressions stay.
fn fill_matrix(text: &str, combo: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let inner = rest[start + 3..start + len].trim();
        out.push_str(&rest[..start]);
        match inner.strip_prefix("matrix.").and_then(|k| combo.get(k)) {
            Some(value) => out.push_str(value),
            None => out.push_str(&rest[start..start + len + 2]),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
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
                let dir = RunDefaults::of(job).or(RunDefaults::of(doc));
                // A literal matrix: the job once for each combination, its
                // `${{ matrix.* }}` filled in (the same script once).
                let combos = matrix_combinations(job);
                let written = matrix_places(job);
                let copies: Vec<Node> = combos
                    .iter()
                    .map(|c| with_matrix(job, c, &written))
                    .collect();
                let jobs: Vec<&Node> = if copies.is_empty() {
                    vec![job]
                } else {
                    copies.iter().collect()
                };
                let mut scripts = Vec::new();
                for job in jobs {
                    let mut job_env = env.clone();
                    env_of(job.get("env"), &mut job_env);
                    if let Some(s) = job.get("steps") {
                        let outer = [doc.get("env"), job.get("env")];
                        steps(s, id, &job_env, dir, &outer, &mut scripts);
                    }
                }
                for script in scripts {
                    if !out.contains(&script) {
                        out.push(script);
                    }
                }
            }
        }
        if let Some(s) = doc.get("runs").and_then(|r| r.get("steps")) {
            let name = doc.get("name").and_then(Node::as_str).unwrap_or("action");
            steps(s, name, &env, RunDefaults::default(), &[], &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_that_is_a_matrix_value_is_read_where_the_value_is() {
        let text = "on: push\njobs:\n  w:\n    strategy:\n      matrix:\n        include:\n          - before: pip install numpy==1.25.0\n          - before: pip install numpy==2.0.0\n    steps:\n      - uses: pypa/cibuildwheel@v3\n        env:\n          CIBW_BEFORE_BUILD: ${{ matrix.before }}\n";
        let found: Vec<(String, usize)> = scripts(text)
            .unwrap()
            .into_iter()
            .map(|s| (s.text.clone(), s.layout.map(1, 1).line))
            .collect();
        assert_eq!(
            found,
            [
                ("pip install numpy==1.25.0".to_string(), 7),
                ("pip install numpy==2.0.0".to_string(), 8)
            ]
        );
    }

    #[test]
    fn what_a_step_writes_to_github_env_later_steps_see() {
        let text = "on: push\njobs:\n  t:\n    steps:\n      - run: echo \"PY=python3.12\" >> \"$GITHUB_ENV\"\n      - run: $PY -m pip install x\n";
        let envs: Vec<Option<String>> = scripts(text)
            .unwrap()
            .into_iter()
            .map(|s| s.env.get("PY").cloned())
            .collect();
        assert_eq!(envs, [None, Some("python3.12".to_string())]);
    }

    #[test]
    fn tool_settings_that_install_are_scripts_at_their_line() {
        let text = "on: push\nenv:\n  CIBW_TEST_REQUIRES: pytest numpy\njobs:\n  w:\n    env:\n      CIBW_BEFORE_BUILD_LINUX: pip install cmake\n      CIBW_BUILD: cp312-*\n    steps:\n      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.12'\n          pip-install: build  twine==6.0.1\n      - uses: pypa/cibuildwheel@v2.22\n        env:\n          CIBW_REPAIR_WHEEL_COMMAND_LINUX: auditwheel repair -w {dest_dir} {wheel}\n      - run: echo no cibuildwheel here\n";
        let scripts = scripts(text).unwrap();
        let found: Vec<(&str, usize)> = scripts
            .iter()
            .map(|s| {
                let Layout::Folded { start } = &s.layout else {
                    return (s.text.as_str(), 0);
                };
                (s.text.as_str(), start.line)
            })
            .collect();
        assert!(
            found.contains(&("pip install build twine==6.0.1", 13)),
            "{found:?}"
        );
        assert!(
            found.contains(&("pip install pytest numpy", 3)),
            "{found:?}"
        );
        let texts: Vec<&str> = scripts.iter().map(|s| s.text.as_str()).collect();
        assert!(texts.contains(&"pip install cmake"), "{texts:?}");
        assert!(
            texts.contains(&"auditwheel repair -w {dest_dir} {wheel}"),
            "{texts:?}"
        );
        // Only for the step that runs cibuildwheel: once each.
        assert_eq!(
            texts.iter().filter(|t| **t == "pip install cmake").count(),
            1
        );
        assert!(!texts.contains(&"cp312-*"));
    }

    #[test]
    fn a_literal_matrix_fills_its_values_in() {
        let text = "on: push\njobs:\n  t:\n    strategy:\n      matrix:\n        python-version: [\"3.11\", \"3.12\"]\n        include:\n          - torch: \"2.5.1\"\n    env:\n      PY: ${{ matrix.python-version }}\n    steps:\n      - run: make test-${{matrix.python-version}}\n      - run: pip install torch==${{ matrix.torch }}\n      - run: echo same\n";
        let scripts = scripts(text).unwrap();
        let texts: Vec<&str> = scripts.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "make test-3.11",
                "pip install torch==2.5.1",
                "echo same",
                "make test-3.12",
                "pip install torch==2.5.1",
                "echo same",
            ]
        );
        assert_eq!(scripts[0].env["PY"], "3.11");
    }
}
