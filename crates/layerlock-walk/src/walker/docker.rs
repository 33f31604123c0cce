//! Image builds: where a Dockerfile's paths lead (its build context and
//! what it copies), `docker build` of a Dockerfile the job wrote or names
//! with `-f`, whatever its name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use layerlock_ci::dockerfile;
use layerlock_ci::{Phase, Script};

use super::{Run, Scanner, Visitor};
use crate::paths::confined_file;
use crate::place::{Image, Place};
use crate::site::Arg;

impl<V: Visitor> Scanner<'_, V> {
    pub(super) fn image_place(&self, context: PathBuf, script: &Script) -> Place {
        let image = Image {
            context,
            mounts: script.mounts.clone(),
            workdir: script
                .working_dir
                .clone()
                .unwrap_or_else(|| "/".to_string()),
        };
        Place {
            cwd: image.workdir_in_repo(),
            image: Some(Rc::new(image)),
        }
    }

    /// A Dockerfile's build context is not written in it: take the
    /// directory (the root, the Dockerfile's own, or one between) from which
    /// most of what it copies exists.
    pub(super) fn build_context(&self, dockerfile: &Path, scripts: &[Script]) -> PathBuf {
        let root = &self.options.root;
        let mut candidates = vec![root.clone()];
        let mut dir = dockerfile.parent();
        while let Some(d) = dir {
            if !d.starts_with(root) || d == root {
                break;
            }
            candidates.push(d.to_path_buf());
            dir = d.parent();
        }
        let sources: BTreeSet<&str> = scripts
            .iter()
            .flat_map(|s| s.mounts.iter())
            .map(|m| m.source.as_str())
            .filter(|s| !s.is_empty() && !layerlock_ci::glob::is_glob(s))
            .collect();
        let mut best = (0, root.clone());
        for candidate in candidates {
            let found = sources
                .iter()
                .filter(|s| candidate.join(s).exists())
                .count();
            if found > best.0 {
                best = (found, candidate);
            }
        }
        best.1
    }

    /// `docker build -f Dockerfile.ci .` of a Dockerfile this script wrote
    /// with a heredoc, or `docker build -f - . <<EOF`: its RUN lines run
    /// now, at job time.
    pub(super) fn generated_dockerfile(
        &mut self,
        run: &Run<'_>,
        command: &layerlock_shell::Command,
        inner: &[Arg],
        place: &Place,
        written: &BTreeMap<PathBuf, (String, usize)>,
    ) {
        let Some(build) = docker_build(inner) else {
            return;
        };
        let (body, line) = match build.file.as_deref() {
            Some("-") => match (&command.stdin, command.stdin_line) {
                (Some(body), Some(line)) => (body.clone(), line),
                _ => return,
            },
            Some(file) => match written.get(&self.place_path(place, file)) {
                Some(found) => found.clone(),
                None => {
                    self.built_dockerfile(&build, file, place);
                    return;
                }
            },
            None => match (&build.context, &command.stdin, command.stdin_line) {
                (Some(c), Some(body), Some(line)) if c == "-" => (body.clone(), line),
                (Some(c), _, _) => {
                    let path = self.place_path(place, c).join("Dockerfile");
                    match written.get(&path) {
                        Some(found) => found.clone(),
                        None => return,
                    }
                }
                _ => return,
            },
        };
        let scripts = match dockerfile::scripts_for(&body, Phase::JobTime) {
            Ok(s) => s,
            Err(e) => {
                let pos = run.pos(line + e.line - 1, e.column);
                self.note(&run.file, pos.line, pos.column, e.message);
                return;
            }
        };
        let context = build
            .context
            .as_deref()
            .filter(|c| *c != "-")
            .map(|c| self.place_path(place, c))
            .filter(|c| c.is_dir() && c.starts_with(&self.options.root))
            .or_else(|| place.cwd.clone())
            .unwrap_or_else(|| self.options.root.clone());
        let mut outer = vec![(line, run.layout.clone())];
        outer.extend(run.outer.iter().cloned());
        for script in scripts {
            let child = Run {
                text: &script.text,
                layout: script.layout.clone(),
                outer: outer.clone(),
                file: run.file.clone(),
                script: None,
                grammar: super::grammar_of(&script.text, script.shell.as_deref()),
                phase: Phase::JobTime,
                env: script.env.clone(),
                own_env: true,
                place: self.image_place(context.clone(), &script),
                positional: Vec::new(),
                call_site: None,
                call_layout: None,
                via: run.via.clone(),
                stack: {
                    let mut s = run.stack.clone();
                    s.push(PathBuf::from(format!("<Dockerfile at line {line}>")));
                    s
                },
            };
            self.run(&child);
        }
    }

    /// `docker build -f FILE CONTEXT` of a file in the tree: read as the
    /// Dockerfile it is, whatever its name, once the walk of the tree is
    /// done (analyses do not nest).
    pub(super) fn built_dockerfile(&mut self, build: &DockerBuild, file: &str, place: &Place) {
        let context = build
            .context
            .as_deref()
            .filter(|c| *c != "-")
            .map(|c| self.place_path(place, c))
            .filter(|c| c.is_dir() && c.starts_with(&self.options.root));
        // `-f` is relative to where the command runs, as docker reads it.
        let Some(real) = confined_file(&self.place_path(place, file), &self.options.root) else {
            return;
        };
        if !self.built.iter().any(|(p, _)| *p == real) {
            self.built.push((real, context));
        }
    }
}

/// What a `docker build` command builds.
pub(super) struct DockerBuild {
    /// `-f FILE` (`-` for standard input).
    file: Option<String>,
    /// The context operand (`-` for a Dockerfile on standard input).
    context: Option<String>,
}

/// `docker build`, `docker buildx build`, `docker image build`, `podman
/// build`, `buildah bud`.
pub(super) fn docker_build(args: &[Arg]) -> Option<DockerBuild> {
    let first = args.first()?.value.as_deref()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    if !matches!(program, "docker" | "podman" | "nerdctl" | "buildah") {
        return None;
    }
    let words: Vec<&str> = args
        .iter()
        .map(|a| a.value.as_deref().unwrap_or(""))
        .collect();
    let start = match (program, words.get(1).copied(), words.get(2).copied()) {
        ("docker" | "podman" | "nerdctl", Some("build"), _) => 2,
        ("docker", Some("buildx" | "image"), Some("build")) => 3,
        ("buildah", Some("bud" | "build"), _) => 2,
        _ => return None,
    };
    const VALUE: &[&str] = &[
        "-t",
        "--tag",
        "--build-arg",
        "--target",
        "--platform",
        "--cache-from",
        "--cache-to",
        "--label",
        "--network",
        "--secret",
        "--ssh",
        "--output",
        "-o",
        "--progress",
        "--build-context",
        "--iidfile",
        "--metadata-file",
        "--shm-size",
        "--ulimit",
        "--add-host",
        "--builder",
        "--allow",
        "--attest",
        "--annotation",
    ];
    let mut build = DockerBuild {
        file: None,
        context: None,
    };
    let mut i = start;
    while let Some(w) = words.get(i) {
        if let Some(f) = w.strip_prefix("--file=") {
            build.file = Some(f.to_string());
        } else if *w == "-f" || *w == "--file" {
            build.file = words.get(i + 1).map(|s| s.to_string());
            i += 1;
        } else if let Some(f) = w
            .strip_prefix("-f")
            .filter(|f| !f.is_empty() && !w.starts_with("--"))
        {
            build.file = Some(f.to_string());
        } else if w.starts_with('-') && *w != "-" {
            if VALUE.contains(w) {
                i += 1;
            }
        } else {
            build.context = Some(w.to_string());
        }
        i += 1;
    }
    Some(build)
}
