//! Image builds: where a Dockerfile's paths lead (its build context and
//! what it copies), `docker build` of a Dockerfile the job wrote or names
//! with `-f`, whatever its name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use layerlock_ci::dockerfile;
use layerlock_ci::{Phase, Script};

use super::{Run, Scanner, Visitor};
use crate::paths::confined_file;
use crate::place::{Image, Place};
use crate::site::Arg;

impl<V: Visitor> Scanner<'_, V> {
    pub(super) fn image_place(&self, context: PathBuf, script: &Script) -> Place {
        Image {
            context,
            mounts: script.mounts.clone(),
            workdir: script
                .working_dir
                .clone()
                .unwrap_or_else(|| "/".to_string()),
        }
        .place()
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
    /// now, at job time. A Dockerfile known only at run time is why the
    /// image was not read, returned to be said.
    pub(super) fn generated_dockerfile(
        &mut self,
        run: &Run<'_>,
        command: &layerlock_shell::Command,
        inner: &[Arg],
        place: &Place,
        written: &BTreeMap<PathBuf, (String, usize)>,
    ) -> Option<String> {
        let build = docker_build(inner)?;
        if let Some(raw) = &build.computed {
            let at = format!(
                "{}:{}",
                run.file,
                run.pos(command.line, command.column).line
            );
            self.result.unknown_builds.insert((at, raw.clone()));
            return Some(format!(
                "the Dockerfile `{raw}` this build reads is known only at run time, so its image was not read"
            ));
        }
        self.read_generated(run, command, &build, place, written);
        None
    }

    fn read_generated(
        &mut self,
        run: &Run<'_>,
        command: &layerlock_shell::Command,
        build: &DockerBuild,
        place: &Place,
        written: &BTreeMap<PathBuf, (String, usize)>,
    ) {
        let (body, line) = match build.file.as_deref() {
            Some("-") => match (&command.stdin, command.stdin_line) {
                (Some(body), Some(line)) => (body.clone(), line),
                _ => return,
            },
            Some(file) => match written.get(&self.place_path(place, file)) {
                Some(found) => found.clone(),
                None => {
                    self.built_dockerfile(build, file, place);
                    return;
                }
            },
            None => match (&build.context, &command.stdin, command.stdin_line) {
                (Some(c), Some(body), Some(line)) if c == "-" => (body.clone(), line),
                (Some(c), _, _) => {
                    let path = self.place_path(place, c).join("Dockerfile");
                    match written.get(&path) {
                        Some(found) => found.clone(),
                        None => {
                            let file = format!("{}/Dockerfile", c.trim_end_matches('/'));
                            self.built_dockerfile(build, &file, place);
                            return;
                        }
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
        let shown = self.relative(&real);
        self.result.builds.insert((shown, build.target.clone()));
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
    /// `--target STAGE`: the stage built (else the last).
    target: Option<String>,
    /// `-f` given a value known only at run time, as written.
    computed: Option<String>,
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
        target: None,
        computed: None,
    };
    let mut i = start;
    while let Some(w) = words.get(i) {
        if let Some(f) = w.strip_prefix("--file=") {
            build.file = Some(f.to_string());
        } else if *w == "-f" || *w == "--file" {
            build.file = words.get(i + 1).map(|s| s.to_string());
            build.computed = args
                .get(i + 1)
                .filter(|a| a.value.is_none())
                .map(|a| a.raw.clone());
            i += 1;
        } else if let Some(f) = w
            .strip_prefix("-f")
            .filter(|f| !f.is_empty() && !w.starts_with("--"))
        {
            build.file = Some(f.to_string());
        } else if w.starts_with("--target=") || args[i].raw.starts_with("--target=") {
            // A stage named by a variable is kept as written.
            let text = args[i].value.as_deref().unwrap_or(&args[i].raw);
            build.target = text.strip_prefix("--target=").map(str::to_string);
        } else if *w == "--target" {
            build.target = args.get(i + 1).map(|a| {
                a.value
                    .clone()
                    .unwrap_or_else(|| a.raw.trim_matches('"').to_string())
            });
            i += 1;
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

/// What `docker buildx bake` or `docker compose build` builds: the files
/// that define the images (given with `-f`, else the defaults where the
/// command runs) and the targets or services named.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct BuildFiles {
    tool: BuildTool,
    files: Vec<String>,
    targets: Vec<String>,
    /// A file known only at run time, as written.
    computed: Option<String>,
    /// A target known only at run time: every target may be built.
    any_target: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BuildTool {
    Bake,
    Compose,
}

impl BuildTool {
    /// The files each reads when none is given, in its order.
    fn defaults(self) -> &'static [&'static str] {
        match self {
            Self::Bake => &[
                "compose.yaml",
                "compose.yml",
                "docker-compose.yml",
                "docker-compose.yaml",
                "docker-bake.json",
                "docker-bake.hcl",
                "docker-bake.override.json",
                "docker-bake.override.hcl",
            ],
            Self::Compose => &[
                "compose.yaml",
                "compose.yml",
                "docker-compose.yaml",
                "docker-compose.yml",
            ],
        }
    }
}

/// `docker buildx bake [-f F] [TARGET…]`, `docker bake`, and `docker
/// compose [-f F] build|up|run|create [SERVICE…]` (`docker-compose` too):
/// each builds images from a file that names their Dockerfiles (`up` and
/// `run` build what is missing, which in CI is everything).
pub(super) fn build_files(args: &[Arg]) -> Option<BuildFiles> {
    let words: Vec<Option<&str>> = args.iter().map(|a| a.value.as_deref()).collect();
    let first = (*words.first()?)?;
    let program = first.rsplit('/').next().unwrap_or(first);
    let (tool, start) = match (
        program,
        words.get(1).copied().flatten(),
        words.get(2).copied().flatten(),
    ) {
        ("docker", Some("buildx"), Some("bake")) => (BuildTool::Bake, 3),
        ("docker", Some("bake"), _) => (BuildTool::Bake, 2),
        ("docker" | "podman", Some("compose"), _) => (BuildTool::Compose, 2),
        ("docker-compose" | "podman-compose", _, _) => (BuildTool::Compose, 1),
        _ => return None,
    };
    // Options that take a value, of the tool (and of compose's global part).
    const VALUE: &[&str] = &[
        "--set",
        "--progress",
        "--metadata-file",
        "--builder",
        "--allow",
        "--call",
        "--provenance",
        "--sbom",
        "-p",
        "--project-name",
        "--project-directory",
        "--profile",
        "--env-file",
        "--ansi",
        "--parallel",
        "--build-arg",
        "--ssh",
        "--scale",
        "--pull",
        "--timeout",
        "-t",
        "-e",
        "--env",
        "-w",
        "--workdir",
        "-u",
        "--user",
        "--name",
        "--entrypoint",
        "-v",
        "--volume",
        "--label",
        "-l",
    ];
    let mut out = BuildFiles {
        tool,
        files: Vec::new(),
        targets: Vec::new(),
        computed: None,
        any_target: false,
    };
    let mut subcommand = tool == BuildTool::Bake;
    let mut i = start;
    while i < words.len() {
        let Some(w) = words[i] else {
            out.any_target |= subcommand;
            i += 1;
            continue;
        };
        if let Some(file) = w.strip_prefix("--file=") {
            out.files.push(file.to_string());
        } else if w == "-f" || w == "--file" {
            match words.get(i + 1).copied() {
                Some(Some(file)) => out.files.push(file.to_string()),
                Some(None) => {
                    out.computed.get_or_insert_with(|| args[i + 1].raw.clone());
                }
                None => {}
            }
            i += 1;
        } else if w.starts_with('-') {
            if VALUE.contains(&w) {
                i += 1;
            }
        } else if !subcommand {
            // Compose: the subcommand, then its services.
            if !matches!(w, "build" | "up" | "run" | "create") {
                return None;
            }
            subcommand = true;
        } else {
            out.targets.push(w.to_string());
            // `compose run SERVICE COMMAND…`: the rest is the command.
            if tool == BuildTool::Compose
                && words.get(1..).is_some_and(|w| w.contains(&Some("run")))
            {
                break;
            }
        }
        i += 1;
    }
    subcommand.then_some(out)
}

impl<V: Visitor> Scanner<'_, V> {
    /// The Dockerfiles a bake or Compose call builds, read as CI builds
    /// them. What cannot be known (a computed file, target, Dockerfile or
    /// context; a file that is not in the tree or cannot be read) is
    /// returned as the reason it was not followed.
    pub(super) fn build_file_images(&mut self, build: &BuildFiles, place: &Place) -> Vec<String> {
        let mut why = Vec::new();
        if let Some(raw) = &build.computed {
            why.push(format!(
                "the build file `{}` is known only at run time, so the images it builds were not read",
                raw.trim_matches('"')
            ));
            return why;
        }
        let files: Vec<PathBuf> = if build.files.is_empty() {
            let found =
                build.tool.defaults().iter().find_map(|name| {
                    confined_file(&self.place_path(place, name), &self.options.root)
                });
            found.into_iter().collect()
        } else {
            let mut files = Vec::new();
            for file in &build.files {
                match confined_file(&self.place_path(place, file), &self.options.root) {
                    Some(real) => files.push(real),
                    None => why.push(format!(
                        "the build file `{file}` is not in the tree, so the images it builds were not read"
                    )),
                }
            }
            files
        };
        if files.is_empty() && why.is_empty() {
            why.push("no bake or Compose file is where this command runs, so the images it builds were not read".to_string());
        }
        for real in files {
            let shown = self.relative(&real);
            let model = crate::read::read_bounded(&real, &self.options.root)
                .map_err(|e| e.to_string())
                .and_then(|bytes| String::from_utf8(bytes).map_err(|_| "not UTF-8".to_string()))
                .and_then(|text| {
                    layerlock_ci::bake::BuildFile::read(&shown, &text).map_err(|e| e.message)
                });
            let model = match model {
                Ok(model) => model,
                Err(e) => {
                    why.push(format!(
                        "`{shown}` could not be read ({e}), so the images it builds were not read"
                    ));
                    continue;
                }
            };
            // Bake takes contexts from where it runs, whatever the file
            // (buildx; file-relative paths are an opt-in it does not
            // default to); `docker compose` from the Compose file's folder.
            let dir = if build.tool == BuildTool::Bake {
                place
                    .cwd
                    .clone()
                    .unwrap_or_else(|| self.options.root.clone())
            } else {
                real.parent().map(Path::to_path_buf).unwrap_or_default()
            };
            // A target known only at run time may be any of them.
            let selected = if build.any_target {
                model.targets.iter().collect()
            } else {
                model.select(&build.targets)
            };
            for target in selected {
                let (Some(context), Some(dockerfile)) = (&target.context, &target.dockerfile)
                else {
                    why.push(format!(
                        "the Dockerfile or context of `{}` in {shown}:{} is computed, so its image was not read",
                        target.name, target.line
                    ));
                    continue;
                };
                let context = crate::paths::normalize(&dir.join(context));
                let file = crate::paths::normalize(&context.join(dockerfile));
                if let Some(real) = confined_file(&file, &self.options.root) {
                    let shown = self.relative(&real);
                    self.result.builds.insert((shown, target.stage.clone()));
                }
                match confined_file(&file, &self.options.root) {
                    Some(file) if !self.built.iter().any(|(p, _)| *p == file) => {
                        let context = (context.is_dir() && context.starts_with(&self.options.root))
                            .then_some(context);
                        self.built.push((file, context));
                    }
                    Some(_) => {}
                    None => why.push(format!(
                        "the Dockerfile of `{}` in {shown}:{} is not in the tree, so its image was not read",
                        target.name, target.line
                    )),
                }
            }
        }
        why
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<Arg> {
        Arg::words(text)
    }

    #[test]
    fn bake_and_compose_calls_name_their_files_and_targets() {
        let b = build_files(&args(
            "docker buildx bake -f ci/bake.hcl --set *.platform=x app tests",
        ))
        .unwrap();
        assert_eq!(
            (b.tool, b.files.clone(), b.targets.clone()),
            (
                BuildTool::Bake,
                vec!["ci/bake.hcl".to_string()],
                vec!["app".to_string(), "tests".to_string()]
            )
        );
        let c = build_files(&args("docker compose -f ci/compose.yml up -d --build web")).unwrap();
        assert_eq!(
            (c.tool, c.files, c.targets),
            (
                BuildTool::Compose,
                vec!["ci/compose.yml".to_string()],
                vec!["web".to_string()]
            )
        );
        let r = build_files(&args("docker-compose run --rm tests pytest -x")).unwrap();
        assert_eq!(r.targets, ["tests"]);
        assert!(build_files(&args("docker compose down")).is_none());
        assert!(build_files(&args("docker compose logs web")).is_none());
        let target = build_files(&args("docker buildx bake $TARGET")).unwrap();
        assert!(target.any_target && target.computed.is_none());
        let file = build_files(&args("docker buildx bake -f $FILE")).unwrap();
        assert_eq!(file.computed.as_deref(), Some("$FILE"));
    }
}
