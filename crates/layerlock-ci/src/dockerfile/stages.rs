//! A Dockerfile's stage graph: each stage, what it starts from, and what
//! it takes from other stages or images (`COPY --from=`, `RUN
//! --mount=…,from=`). Build arguments in a `FROM` are expanded with their
//! defaults from the global `ARG`s, so `FROM ${BASE} AS x` names the stage
//! or image the default picks, and the argument is kept to be shown.

use std::collections::BTreeMap;

use super::{Instruction, each_instruction, escape_char, expand, from_words, words};
use crate::script::ModelError;

/// Every stage of one Dockerfile, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Stages {
    pub stages: Vec<StageInfo>,
}

/// One stage: `FROM … [AS name]` up to the next `FROM`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageInfo {
    /// Its place among the stages, from 0 (what `--from=1` names).
    pub index: usize,
    /// The name after `AS`, as written.
    pub name: Option<String>,
    /// 1-based lines of its `FROM` and of its last instruction.
    pub first_line: usize,
    pub last_line: usize,
    pub base: Source,
    /// `COPY --from` and `RUN --mount=…,from=`, in order.
    pub uses: Vec<Use>,
}

impl StageInfo {
    /// The name, else `stage N`.
    pub fn label(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("stage {}", self.index))
    }
}

/// What a stage starts from or takes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// An earlier stage, by index.
    Stage(usize),
    /// An image from outside.
    Image(ImageRef),
}

/// An image reference as written, and what the build arguments' defaults
/// make of it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ImageRef {
    pub written: String,
    /// With every build argument replaced by its default; `None` when the
    /// text has no argument or one without a default.
    pub default: Option<String>,
    /// The build arguments it names, in order.
    pub args: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    pub kind: UseKind,
    pub source: Source,
    /// 1-based line of the instruction.
    pub line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum UseKind {
    Copy,
    Mount,
}

/// Read the stages of a Dockerfile.
pub fn stages(text: &str) -> Result<Stages, ModelError> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let escape = escape_char(&lines);
    let mut reader = StageReader::default();
    each_instruction(&lines, escape, |instruction| {
        reader.instruction(instruction, last_line(instruction));
    })?;
    Ok(reader.out)
}

/// The 1-based line an instruction ends on, heredoc bodies included.
fn last_line(ins: &Instruction<'_>) -> usize {
    ins.next.max(ins.first + 1)
}

#[derive(Default)]
struct StageReader {
    /// Global `ARG` defaults (before the first `FROM`); `None` for an
    /// argument declared without one.
    global: BTreeMap<String, Option<String>>,
    /// The current stage's `ARG`/`ENV` literals, for `--from=$X`.
    env: BTreeMap<String, String>,
    out: Stages,
}

impl StageReader {
    fn instruction(&mut self, ins: &Instruction<'_>, last: usize) {
        let (keyword, rest) = ins.keyword();
        let line = ins.first + 1;
        if keyword != "FROM"
            && let Some(stage) = self.out.stages.last_mut()
        {
            stage.last_line = last;
        }
        match keyword.as_str() {
            "ARG" if self.out.stages.is_empty() => self.global_arg(rest),
            "ARG" | "ENV" => self.stage_var(&keyword, rest),
            "FROM" => self.from(rest, line, last),
            "COPY" | "ADD" => {
                for from in flag_values(rest, "--from") {
                    self.uses(UseKind::Copy, &from, line);
                }
            }
            "RUN" => {
                for mount in flag_values(rest, "--mount") {
                    if let Some(from) = mount_from(&mount) {
                        self.uses(UseKind::Mount, &from, line);
                    }
                }
            }
            _ => {}
        }
    }

    fn global_arg(&mut self, rest: &str) {
        for (_, part) in words(rest) {
            match part.split_once('=') {
                Some((k, v)) => {
                    let value = self.with_defaults(v).1;
                    self.global.insert(k.to_string(), value);
                }
                None => {
                    self.global.insert(part, None);
                }
            }
        }
    }

    fn stage_var(&mut self, keyword: &str, rest: &str) {
        for (_, part) in words(rest) {
            match part.split_once('=') {
                Some((k, v)) => {
                    let value = expand(v, &self.env);
                    if value.contains('$') {
                        self.env.remove(k);
                    } else {
                        self.env.insert(k.to_string(), value);
                    }
                }
                None if keyword == "ARG" => {
                    if let Some(Some(v)) = self.global.get(&part) {
                        self.env.insert(part, v.clone());
                    }
                }
                None => {}
            }
        }
    }

    /// The global build arguments that have a default.
    fn known_globals(&self) -> BTreeMap<String, String> {
        self.global
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
            .collect()
    }

    /// The text with global build arguments replaced by their defaults,
    /// the arguments named, and the result when every one had a default.
    fn with_defaults(&self, text: &str) -> (Vec<String>, Option<String>) {
        let named = arg_names(text);
        let expanded = expand(text, &self.known_globals());
        let resolved = (!expanded.contains('$')).then_some(expanded);
        (named, resolved)
    }

    fn from(&mut self, rest: &str, line: usize, last: usize) {
        let (written, name) = from_words(rest);
        let (args, default) = self.with_defaults(&written);
        let base = self.source(written, args, default, false);
        self.env.clear();
        let index = self.out.stages.len();
        self.out.stages.push(StageInfo {
            index,
            name,
            first_line: line,
            last_line: last,
            base,
            uses: Vec::new(),
        });
    }

    fn uses(&mut self, kind: UseKind, from: &str, line: usize) {
        let mut known = self.known_globals();
        known.extend(self.env.clone());
        let args = arg_names(from);
        let expanded = expand(from, &known);
        let default = (!args.is_empty() && !expanded.contains('$')).then_some(expanded);
        let source = self.source(from.to_string(), args, default, true);
        if let Some(stage) = self.out.stages.last_mut() {
            stage.uses.push(Use { kind, source, line });
        }
    }

    /// An earlier stage when the reference (as its default makes it)
    /// names one, by name or (for `--from`) by index; else an image.
    fn source(
        &self,
        written: String,
        args: Vec<String>,
        default: Option<String>,
        by_index: bool,
    ) -> Source {
        let effective = default.clone().unwrap_or_else(|| written.clone());
        let by_name = self.out.stages.iter().rev().find(|s| {
            s.name
                .as_deref()
                .is_some_and(|n| n.eq_ignore_ascii_case(&effective))
        });
        let found = by_name.map(|s| s.index).or_else(|| {
            effective
                .parse::<usize>()
                .ok()
                .filter(|i| by_index && *i < self.out.stages.len())
        });
        match found {
            Some(index) => Source::Stage(index),
            None => Source::Image(ImageRef {
                written,
                default: default.filter(|_| !args.is_empty()),
                args,
            }),
        }
    }
}

/// `$NAME` and `${NAME…}` names in a text, in order, once each.
fn arg_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        let after = &rest[at + 1..];
        let inner = after.strip_prefix('{').unwrap_or(after);
        let end = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len());
        let name = &inner[..end];
        if !name.is_empty() && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
        rest = &inner[end..];
    }
    out
}

/// Every value of `--flag=value` (or `--flag value`) before the
/// instruction's own arguments.
fn flag_values(rest: &str, flag: &str) -> Vec<String> {
    let parts: Vec<String> = words(rest).into_iter().map(|(_, w)| w).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(part) = parts.get(i) {
        if !part.starts_with("--") {
            break;
        }
        if let Some(value) = part.strip_prefix(flag).and_then(|v| v.strip_prefix('=')) {
            out.push(value.to_string());
        } else if part == flag {
            out.extend(parts.get(i + 1).cloned());
            i += 1;
        }
        i += 1;
    }
    out
}

/// `from=` of a `--mount` value (`type=bind,from=build,src=/x`).
fn mount_from(mount: &str) -> Option<String> {
    mount.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k.trim() == "from").then(|| v.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(text: &str) -> Vec<String> {
        let read = stages(text).expect("reads");
        let name = |s: &Source| match s {
            Source::Stage(i) => read.stages[*i].label(),
            Source::Image(image) => format!("image {}", image.written),
        };
        let mut out = Vec::new();
        for stage in &read.stages {
            out.push(format!("{} <- {} (from)", stage.label(), name(&stage.base)));
            for u in &stage.uses {
                out.push(format!(
                    "{} <- {} ({:?}:{})",
                    stage.label(),
                    name(&u.source),
                    u.kind,
                    u.line
                ));
            }
        }
        out
    }

    #[test]
    fn stages_copies_and_mounts_are_edges() {
        let text = "ARG BASE=python:3.12\nFROM ${BASE} AS deps\nRUN pip install x\nFROM deps AS build\nCOPY --from=deps /a /a\nCOPY --link --from=0 /b /b\nRUN --mount=type=bind,from=build,src=/x,target=/y true\nFROM scratch\nCOPY --from=build /c /c\nCOPY --from=alpine:3 /d /d\n";
        assert_eq!(
            edges(text),
            [
                "deps <- image ${BASE} (from)",
                "build <- deps (from)",
                "build <- deps (Copy:5)",
                "build <- deps (Copy:6)",
                "build <- build (Mount:7)",
                "stage 2 <- image scratch (from)",
                "stage 2 <- build (Copy:9)",
                "stage 2 <- image alpine:3 (Copy:10)",
            ]
        );
    }

    #[test]
    fn a_build_argument_shows_its_default_and_may_pick_a_stage() {
        let text = "ARG V=3.12\nARG IMG=python:${V}-slim\nARG PICK=one\nFROM ${IMG} AS one\nFROM ${PICK} AS two\nFROM $UNSET\n";
        let read = stages(text).expect("reads");
        assert_eq!(
            read.stages[0].base,
            Source::Image(ImageRef {
                written: "${IMG}".into(),
                default: Some("python:3.12-slim".into()),
                args: vec!["IMG".into()],
            })
        );
        assert_eq!(read.stages[1].base, Source::Stage(0));
        assert_eq!(
            read.stages[2].base,
            Source::Image(ImageRef {
                written: "$UNSET".into(),
                default: None,
                args: vec!["UNSET".into()],
            })
        );
    }

    #[test]
    fn line_ranges_cover_heredocs_and_continuations() {
        let text = "FROM a AS x\nRUN <<EOF\necho hi\nEOF\nFROM x AS y\nRUN a \\\n  b\n";
        let read = stages(text).expect("reads");
        assert_eq!(
            (read.stages[0].first_line, read.stages[0].last_line),
            (1, 4)
        );
        assert_eq!(
            (read.stages[1].first_line, read.stages[1].last_line),
            (5, 7)
        );
    }
}
