//! Azure Pipelines: `steps` at the top, under `jobs:` (`- job:`,
//! `- deployment:` with its `strategy`), and under `stages:`; `script:`,
//! `bash:`, `pwsh:`/`powershell:` steps, and the inline `script` of the
//! Bash, CmdLine and PowerShell tasks; `workingDirectory`, step `env`,
//! and `variables` (a map, or a list of `name`/`value`) of the pipeline,
//! stage and job. `$(var)` macros are filled in from literal variables,
//! else left as the environment variable Azure makes of them.
//! `${{ parameters.x }}` is left as written. `- template:` entries are
//! returned for the caller to read (this crate reads no files).

use std::collections::BTreeMap;

use crate::script::{Layout, Note, Phase, Script};
use crate::yaml::Node;

/// The job name Azure gives steps that no `job:` holds.
pub const DEFAULT_JOB: &str = "Job";

/// A list's items, with those of its conditional insertions
/// (`- ${{ if eq(parameters.shell, 'cmd') }}:` holding a list) in their
/// place: which arm runs depends on parameters, so every arm is read.
fn inserted(list: &Node) -> Vec<&Node> {
    let mut out = Vec::new();
    insert_items(list, 0, &mut out);
    out
}

fn insert_items<'a>(list: &'a Node, depth: usize, out: &mut Vec<&'a Node>) {
    for item in list.items() {
        match item.entries() {
            [(key, value)]
                if depth < 8
                    && key
                        .as_str()
                        .is_some_and(|k| k.trim_start().starts_with("${{")) =>
            {
                insert_items(value, depth + 1, out);
            }
            _ => out.push(item),
        }
    }
}

/// A `- template:` entry of a steps, jobs or stages list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// As written (relative to the file that names it; `/` from the root).
    pub path: String,
    pub line: usize,
    /// The job whose steps it holds, if it is a steps template.
    pub job: Option<String>,
    /// The variables in force where it is named.
    pub env: BTreeMap<String, String>,
}

/// What a pipeline file runs, the templates it names, and what cannot be
/// read (templates of other repositories).
#[derive(Debug, Default)]
pub struct Read {
    pub scripts: Vec<Script>,
    pub templates: Vec<Template>,
    pub notes: Vec<Note>,
}

/// Does this YAML look like an Azure pipeline? Keys GitHub and Buildkite
/// do not have at the top (`pool`, `trigger`, `pr`, `stages`), or `jobs`
/// as a list.
pub fn looks_like_pipeline(doc: &Node) -> bool {
    let has = |k| doc.get(k).is_some();
    (has("steps") || has("jobs") || has("stages"))
        && (has("pool")
            || has("trigger")
            || has("pr")
            || doc.get("stages").is_some_and(|s| !s.items().is_empty())
            || doc.get("jobs").is_some_and(|j| !j.items().is_empty()))
}

pub fn scripts_in(docs: &[Node]) -> Vec<Script> {
    read(docs, None).scripts
}

/// Everything a file holds; steps no job holds are `job`'s (a steps
/// template's caller), else [`DEFAULT_JOB`]'s.
pub fn read(docs: &[Node], job: Option<&str>) -> Read {
    let mut out = Read::default();
    for doc in docs {
        let mut env = BTreeMap::new();
        variables(doc.get("variables"), &mut env);
        stages(doc, &env, job, &mut out);
    }
    out
}

fn stages(doc: &Node, env: &BTreeMap<String, String>, job: Option<&str>, out: &mut Read) {
    for stage in doc.get("stages").map(inserted).unwrap_or_default() {
        if template(stage, None, env, out) {
            continue;
        }
        let mut env = env.clone();
        variables(stage.get("variables"), &mut env);
        jobs(stage, &env, out);
    }
    jobs(doc, env, out);
    if let Some(steps) = doc.get("steps") {
        steps_of(steps, job.unwrap_or(DEFAULT_JOB), env, out);
    }
}

fn jobs(parent: &Node, env: &BTreeMap<String, String>, out: &mut Read) {
    for job in parent.get("jobs").map(inserted).unwrap_or_default() {
        if template(job, None, env, out) {
            continue;
        }
        let Some(name) = job
            .get("job")
            .or_else(|| job.get("deployment"))
            .and_then(Node::as_str)
        else {
            continue;
        };
        let mut env = env.clone();
        variables(job.get("variables"), &mut env);
        if let Some(steps) = job.get("steps") {
            steps_of(steps, name, &env, out);
        }
        // A deployment's steps are under its strategy's hooks.
        let strategy = job.get("strategy").map(Node::entries).unwrap_or_default();
        for (_, kind) in strategy {
            for (_, hook) in kind.entries() {
                if let Some(steps) = hook.get("steps") {
                    steps_of(steps, name, &env, out);
                }
            }
        }
    }
}

/// A `- template:` entry: kept for the caller, or a note when it is in
/// another repository. Whether the item was one.
fn template(
    item: &Node,
    job: Option<&str>,
    env: &BTreeMap<String, String>,
    out: &mut Read,
) -> bool {
    let Some(node) = item.get("template") else {
        return false;
    };
    let Some(path) = node.as_str() else {
        return true;
    };
    let line = node.pos().line;
    match path.split_once('@') {
        Some((_, repo)) if repo != "self" => out.notes.push(Note {
            line,
            text: format!("template: {path}"),
            why: format!(
                "the template `{path}` is in the repository `{repo}`, not this one, so what it runs was not read"
            ),
        }),
        _ => out.templates.push(Template {
            path: path.split('@').next().unwrap_or(path).to_string(),
            line,
            job: job.map(str::to_string),
            env: env.clone(),
        }),
    }
    true
}

fn steps_of(steps: &Node, job: &str, env: &BTreeMap<String, String>, out: &mut Read) {
    for step in inserted(steps) {
        if template(step, Some(job), env, out) {
            continue;
        }
        let Some((node, shell)) = step_script(step) else {
            continue;
        };
        let Node::Scalar { value, pos, style } = node else {
            continue;
        };
        let mut env = env.clone();
        variables(step.get("env"), &mut env);
        let working_dir = step
            .get("workingDirectory")
            .and_then(Node::as_str)
            .map(|d| macros(d, &env))
            .filter(|d| !d.contains('$'));
        out.scripts.push(Script {
            text: macros(value, &env),
            layout: Layout::for_yaml(*pos, *style),
            job: Some(job.to_string()),
            phase: Phase::JobTime,
            env,
            working_dir,
            mounts: Vec::new(),
            shell: shell.map(str::to_string),
        });
    }
}

/// The script of a step and the shell that runs it: `script:` (cmd on
/// Windows, bash elsewhere, so left to the default), `bash:`, `pwsh:`,
/// `powershell:`, and inline scripts of the shell tasks.
fn step_script(step: &Node) -> Option<(&Node, Option<&'static str>)> {
    for (key, shell) in [
        ("script", None),
        ("bash", Some("bash")),
        ("pwsh", Some("pwsh")),
        ("powershell", Some("pwsh")),
    ] {
        if let Some(node) = step.get(key) {
            return Some((node, shell));
        }
    }
    let task = step.get("task")?.as_str()?;
    let inputs = step.get("inputs")?;
    let inline = inputs
        .get("targetType")
        .and_then(Node::as_str)
        .is_none_or(|t| t.eq_ignore_ascii_case("inline"));
    let shell = match task.split('@').next()? {
        "Bash" if inline => Some("bash"),
        "CmdLine" => None,
        "PowerShell" if inline => Some("pwsh"),
        _ => return None,
    };
    Some((inputs.get("script")?, shell))
}

/// `$(name)` macros: the literal value when known, else the environment
/// variable Azure makes of the name (upper case, `.` as `_`), which the
/// shell would otherwise read as a command substitution.
fn macros(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("$(") {
        let after = &rest[open + 2..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
            .unwrap_or(after.len());
        if end == 0 || !after[end..].starts_with(')') {
            out.push_str(&rest[..open + 2]);
            rest = after;
            continue;
        }
        let name = &after[..end];
        out.push_str(&rest[..open]);
        match env.get(name) {
            Some(value) => out.push_str(value),
            None => {
                out.push_str("${");
                out.push_str(&name.to_ascii_uppercase().replace(['.', '-'], "_"));
                out.push('}');
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `variables:` as a map, or as a list of `- name: … value: …` (groups
/// and templates of variables are not read). Values with `${{` or `$[`
/// are computed and left out.
fn variables(node: Option<&Node>, into: &mut BTreeMap<String, String>) {
    let Some(node) = node else { return };
    let mut set = |k: &str, v: &str| {
        if !v.contains("${{") && !v.contains("$[") {
            into.insert(k.to_string(), v.to_string());
        }
    };
    for (k, v) in node.entries() {
        if let (Some(k), Some(v)) = (k.as_str(), v.as_str()) {
            set(k, v);
        }
    }
    for item in node.items() {
        if let (Some(k), Some(v)) = (
            item.get("name").and_then(Node::as_str),
            item.get("value").and_then(Node::as_str),
        ) {
            set(k, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml;

    fn at(script: &Script) -> (&str, &str, usize, usize) {
        let pos = script.layout.map(1, 1);
        (
            script.job.as_deref().unwrap_or(""),
            script.text.as_str(),
            pos.line,
            pos.column,
        )
    }

    #[test]
    fn steps_of_every_kind_at_their_lines() {
        let text = "trigger: [main]\npool:\n  vmImage: ubuntu-latest\nvariables:\n  PKG: foo\nsteps:\n- script: pip install $(PKG)\n- bash: |\n    ./ci/install.sh\n  workingDirectory: sub\n- pwsh: |\n    pip install bar\n- task: Bash@3\n  inputs:\n    targetType: inline\n    script: pip install baz\n- task: PublishTestResults@2\n  inputs:\n    script: ignored\n";
        let docs = yaml::parse(text).unwrap();
        assert!(looks_like_pipeline(&docs[0]));
        let read = read(&docs, None);
        let got: Vec<_> = read.scripts.iter().map(at).collect();
        assert_eq!(
            got,
            [
                ("Job", "pip install foo", 7, 11),
                ("Job", "./ci/install.sh\n", 9, 5),
                ("Job", "pip install bar\n", 12, 5),
                ("Job", "pip install baz", 16, 13),
            ]
        );
        assert_eq!(read.scripts[1].working_dir.as_deref(), Some("sub"));
        assert_eq!(read.scripts[1].shell.as_deref(), Some("bash"));
        assert_eq!(read.scripts[2].shell.as_deref(), Some("pwsh"));
    }

    #[test]
    fn every_arm_of_a_conditional_insertion_is_read() {
        let text = "steps:\n- ${{ if eq(parameters.shell, 'unix') }}:\n    - script: ./ci/get.sh\n- ${{ if eq(parameters.shell, 'cmd') }}:\n    - script: |\n        py -3.10 -m pip install requests\n";
        let docs = crate::yaml::parse(text).unwrap();
        let lines: Vec<String> = scripts_in(&docs).into_iter().map(|s| s.text).collect();
        assert_eq!(lines, ["./ci/get.sh", "py -3.10 -m pip install requests\n"]);
    }

    #[test]
    fn stages_jobs_variables_and_templates() {
        let text = "stages:\n- stage: build\n  variables:\n  - name: PY\n    value: '3.12'\n  jobs:\n  - job: linux\n    variables:\n      MODE: ci\n    steps:\n    - script: echo $(PY) $(MODE) $(Build.SourcesDirectory)\n    - template: ci/steps.yml\n      parameters:\n        x: ${{ parameters.x }}\n  - template: ci/jobs.yml@self\n- template: /ci/stages.yml@tools\n";
        let read = read(&yaml::parse(text).unwrap(), None);
        let got: Vec<_> = read.scripts.iter().map(at).collect();
        assert_eq!(
            got,
            [("linux", "echo 3.12 ci ${BUILD_SOURCESDIRECTORY}", 11, 15)]
        );
        assert_eq!(read.scripts[0].env["PY"], "3.12");
        let templates: Vec<(&str, usize, Option<&str>)> = read
            .templates
            .iter()
            .map(|t| (t.path.as_str(), t.line, t.job.as_deref()))
            .collect();
        assert_eq!(
            templates,
            [
                ("ci/steps.yml", 12, Some("linux")),
                ("ci/jobs.yml", 15, None)
            ]
        );
        assert_eq!(read.notes.len(), 1);
        assert_eq!(read.notes[0].line, 16);
    }
}
