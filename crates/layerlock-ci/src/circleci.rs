//! CircleCI (`.circleci/config.yml`): each job's `steps`, a `run:` as a
//! string or a map (`command`, `working_directory`, `environment`,
//! `shell`), reusable `commands:` entered with the parameters the step
//! gives (else their defaults; `<< parameters.x >>` left unknown), `when`/
//! `unless` steps, and the job's `environment` and its images'. Orbs hold
//! their commands elsewhere: a step or workflow job of an orb is a
//! [`Note`], not a script.

use std::collections::BTreeMap;

use crate::script::{Layout, Note, Phase, Script};
use crate::yaml::{Node, Pos};

/// How deep reusable commands may call reusable commands.
const MAX_DEPTH: usize = 8;

/// What a config runs, and the orbs it uses whose commands are elsewhere.
#[derive(Debug, Default)]
pub struct Read {
    pub scripts: Vec<Script>,
    pub notes: Vec<Note>,
}

pub fn scripts_in(docs: &[Node]) -> Vec<Script> {
    read(docs).scripts
}

/// Every job's scripts and every orb's use.
pub fn read(docs: &[Node]) -> Read {
    let mut out = Read::default();
    for doc in docs {
        let orbs: Vec<&str> = doc
            .get("orbs")
            .map(Node::entries)
            .unwrap_or_default()
            .iter()
            .filter_map(|(k, _)| k.as_str())
            .collect();
        let config = Config {
            commands: doc.get("commands"),
            orbs: &orbs,
        };
        for (name, job) in doc.get("jobs").map(Node::entries).unwrap_or_default() {
            let Some(name) = name.as_str() else { continue };
            let mut env = BTreeMap::new();
            for image in job.get("docker").map(Node::items).unwrap_or_default() {
                literal_env(image.get("environment"), &mut env);
            }
            literal_env(job.get("environment"), &mut env);
            let shell = job.get("shell").and_then(Node::as_str);
            let context = Context {
                job: name,
                env: &env,
                shell,
                params: &BTreeMap::new(),
            };
            if let Some(steps) = job.get("steps") {
                config.steps(steps, &context, 0, &mut out);
            }
        }
        config.workflow_orb_jobs(doc, &mut out.notes);
    }
    out
}

struct Config<'a> {
    commands: Option<&'a Node>,
    orbs: &'a [&'a str],
}

struct Context<'a> {
    job: &'a str,
    env: &'a BTreeMap<String, String>,
    shell: Option<&'a str>,
    /// The parameters of the reusable command being entered.
    params: &'a BTreeMap<String, String>,
}

impl Config<'_> {
    fn is_orb(&self, name: &str) -> bool {
        name.split_once('/')
            .is_some_and(|(orb, _)| self.orbs.contains(&orb))
    }

    fn steps(&self, steps: &Node, context: &Context<'_>, depth: usize, out: &mut Read) {
        for step in steps.items() {
            let (name, body, pos) = match step {
                Node::Scalar { value, pos, .. } => (value.as_str(), None, *pos),
                Node::Map { entries, .. } => match entries.first() {
                    Some((key, body)) => match key.as_str() {
                        Some(name) => (name, Some(body), key.pos()),
                        None => continue,
                    },
                    None => continue,
                },
                Node::Seq { .. } => continue,
            };
            match name {
                "run" => {
                    if let Some(body) = body {
                        self.run(body, context, out);
                    }
                }
                "when" | "unless" => {
                    if let Some(steps) = body.and_then(|b| b.get("steps")) {
                        self.steps(steps, context, depth, out);
                    }
                }
                _ if self.is_orb(name) => out.notes.push(orb_note(name, pos)),
                _ => self.command(name, body, context, depth, out),
            }
        }
    }

    /// A step naming a reusable command: its steps, with the parameters
    /// given (else the command's defaults).
    fn command(
        &self,
        name: &str,
        given: Option<&Node>,
        context: &Context<'_>,
        depth: usize,
        out: &mut Read,
    ) {
        let Some(command) = self.commands.and_then(|c| c.get(name)) else {
            return;
        };
        if depth >= MAX_DEPTH {
            return;
        }
        let mut params = BTreeMap::new();
        for (key, spec) in command
            .get("parameters")
            .map(Node::entries)
            .unwrap_or_default()
        {
            if let (Some(key), Some(default)) =
                (key.as_str(), spec.get("default").and_then(Node::as_str))
            {
                params.insert(key.to_string(), default.to_string());
            }
        }
        for (key, value) in given.map(Node::entries).unwrap_or_default() {
            if let (Some(key), Some(value)) = (key.as_str(), value.as_str()) {
                params.insert(key.to_string(), value.to_string());
            }
        }
        let inner = Context {
            params: &params,
            ..*context
        };
        if let Some(steps) = command.get("steps") {
            self.steps(steps, &inner, depth + 1, out);
        }
    }

    fn run(&self, body: &Node, context: &Context<'_>, out: &mut Read) {
        let command = match body {
            Node::Map { .. } => body.get("command"),
            scalar => Some(scalar),
        };
        let Some(Node::Scalar { value, pos, style }) = command else {
            return;
        };
        let mut env = context.env.clone();
        literal_env(body.get("environment"), &mut env);
        // The job runs in its checkout, the repository's root; a step's
        // relative `working_directory` is below it. An absolute or `~`
        // one is not known in the tree.
        let working_dir = body
            .get("working_directory")
            .and_then(Node::as_str)
            .filter(|d| !d.starts_with(['/', '~', '$']))
            .map(str::to_string);
        let shell = body.get("shell").and_then(Node::as_str).or(context.shell);
        out.scripts.push(Script {
            text: parameters(value, context.params),
            layout: Layout::for_yaml(*pos, *style),
            job: Some(context.job.to_string()),
            phase: Phase::JobTime,
            env,
            working_dir,
            mounts: Vec::new(),
            shell: shell
                .and_then(|s| s.split_whitespace().next())
                .map(str::to_string),
        });
    }

    /// `workflows: <name>: jobs: [- orb/job]`: jobs that run an orb's.
    fn workflow_orb_jobs(&self, doc: &Node, notes: &mut Vec<Note>) {
        for (_, workflow) in doc.get("workflows").map(Node::entries).unwrap_or_default() {
            for job in workflow.get("jobs").map(Node::items).unwrap_or_default() {
                let key = match job {
                    Node::Map { entries, .. } => entries.first().map(|(k, _)| k),
                    scalar => Some(scalar),
                };
                if let Some(name) = key.and_then(Node::as_str)
                    && self.is_orb(name)
                {
                    notes.push(orb_note(name, job.pos()));
                }
            }
        }
    }
}

fn orb_note(name: &str, pos: Pos) -> Note {
    Note {
        line: pos.line,
        text: name.to_string(),
        why: format!(
            "`{name}` is a CircleCI orb's: its commands are not in the repository, so they were not audited"
        ),
    }
}

/// `<< parameters.x >>` with the value given, else left as an unknown
/// variable (the shell would read `<<` as a heredoc); other `<< … >>`
/// (`pipeline.…`) too. Lines are kept.
fn parameters(text: &str, params: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<<") {
        let Some(close) = rest[open..].find(">>").map(|c| open + c) else {
            break;
        };
        let inner = rest[open + 2..close].trim();
        if inner.contains('\n') || inner.is_empty() {
            out.push_str(&rest[..open + 2]);
            rest = &rest[open + 2..];
            continue;
        }
        out.push_str(&rest[..open]);
        match inner
            .strip_prefix("parameters.")
            .and_then(|name| params.get(name))
        {
            Some(value) => out.push_str(value),
            None => out.push_str("$CIRCLECI_PARAMETER"),
        }
        rest = &rest[close + 2..];
    }
    out.push_str(rest);
    out
}

fn literal_env(node: Option<&Node>, into: &mut BTreeMap<String, String>) {
    for (k, v) in node.map(Node::entries).unwrap_or_default() {
        if let (Some(k), Some(v)) = (k.as_str(), v.as_str())
            && !v.contains("<<")
        {
            into.insert(k.to_string(), v.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml;

    fn found(text: &str) -> Read {
        read(&yaml::parse(text).unwrap())
    }

    fn at(script: &Script) -> (Option<&str>, &str, usize, usize) {
        let pos = script.layout.map(1, 1);
        (
            script.job.as_deref(),
            script.text.as_str(),
            pos.line,
            pos.column,
        )
    }

    #[test]
    fn string_and_map_runs_with_their_settings() {
        let text = "version: 2.1\njobs:\n  test:\n    docker:\n      - image: cimg/python:3.12\n        environment:\n          PIP: pip3\n    environment:\n      MODE: ci\n    steps:\n      - checkout\n      - run: ./ci/install.sh\n      - run:\n          name: deps\n          command: |\n            pip install -r req.txt\n          working_directory: sub\n          environment:\n            EXTRA: x\n          shell: /bin/sh -eo pipefail\n";
        let read = found(text);
        let got: Vec<_> = read.scripts.iter().map(at).collect();
        assert_eq!(
            got,
            [
                (Some("test"), "./ci/install.sh", 12, 14),
                (Some("test"), "pip install -r req.txt\n", 16, 13),
            ]
        );
        let deps = &read.scripts[1];
        assert_eq!(deps.working_dir.as_deref(), Some("sub"));
        assert_eq!(deps.shell.as_deref(), Some("/bin/sh"));
        let env: Vec<&str> = deps.env.values().map(String::as_str).collect();
        assert_eq!(env, ["x", "ci", "pip3"]);
        assert!(read.notes.is_empty());
    }

    #[test]
    fn a_reusable_command_runs_its_steps_with_its_parameters() {
        let text = "version: 2.1\ncommands:\n  deps:\n    parameters:\n      file: {type: string, default: req.txt}\n      extra: {type: string}\n    steps:\n      - run: pip install -r << parameters.file >> << parameters.extra >>\njobs:\n  test:\n    steps:\n      - deps:\n          file: dev.txt\n      - when:\n          condition: true\n          steps: [deps]\n";
        let read = found(text);
        let got: Vec<_> = read.scripts.iter().map(at).collect();
        assert_eq!(
            got,
            [
                (
                    Some("test"),
                    "pip install -r dev.txt $CIRCLECI_PARAMETER",
                    8,
                    14
                ),
                (
                    Some("test"),
                    "pip install -r req.txt $CIRCLECI_PARAMETER",
                    8,
                    14
                ),
            ]
        );
    }

    #[test]
    fn orb_steps_and_jobs_are_notes() {
        let text = "version: 2.1\norbs:\n  python: circleci/python@2\njobs:\n  test:\n    executor: python/default\n    steps:\n      - python/install-packages:\n          pkg-manager: pip\n      - run: pytest\nworkflows:\n  main:\n    jobs:\n      - test\n      - python/test:\n          version: '3.12'\n";
        let read = found(text);
        assert_eq!(read.scripts.len(), 1);
        let notes: Vec<(usize, &str)> = read
            .notes
            .iter()
            .map(|n| (n.line, n.text.as_str()))
            .collect();
        assert_eq!(notes, [(8, "python/install-packages"), (15, "python/test")]);
        assert!(read.notes[0].why.contains("CircleCI orb"));
    }
}
