//! Dockerfiles, read instruction by instruction with exact positions.
//!
//! `RUN` in shell form (with `\` continuations, and the blank and comment
//! lines Docker drops inside them), exec form (`["bash", "-c", "…"]`) and
//! BuildKit heredocs (`RUN <<EOF … EOF`, `RUN python3 - <<EOF`). The shell
//! text handed on keeps every physical line where it was, so a command on
//! the third line of a continued `RUN` is reported on that line and column.
//!
//! What the image holds is tracked too, so paths a `RUN` names can be mapped
//! back to the build context: `COPY`/`ADD` from the context (and `COPY
//! --from=<stage>` of what that stage copied), `RUN --mount=type=bind`, and
//! `WORKDIR`. `ARG`/`ENV` literals are kept for `$VAR` in commands.

mod stages;

use std::collections::BTreeMap;

pub use stages::{ImageRef, Source, StageInfo, Stages, Use, UseKind, stages};

use crate::script::{Layout, ModelError, Phase, Script, quote};
use crate::yaml::Pos;

/// A path inside the image that holds something from the build context.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Mount {
    /// Absolute path in the image.
    pub target: String,
    /// Path relative to the build context (`""` is the context itself); may
    /// hold glob characters (`COPY requirements/*.txt /opt/`).
    pub source: String,
    /// The source lands inside `target` under its own name (the destination
    /// ends with `/` or several sources were given) rather than at it.
    pub into_dir: bool,
}

impl Mount {
    /// Every context path the mount says a given image path may be, nearest
    /// first; the caller checks which exists.
    pub fn candidates(&self, image_path: &str) -> Vec<String> {
        let target = self.target.trim_end_matches('/');
        let rest = if image_path == target || target.is_empty() && image_path == "/" {
            ""
        } else if let Some(rest) = image_path.strip_prefix(&format!("{target}/")) {
            rest
        } else {
            return Vec::new();
        };
        let join = |a: &str, b: &str| match (a.is_empty(), b.is_empty()) {
            (true, _) => b.to_string(),
            (_, true) => a.to_string(),
            _ => format!("{a}/{b}"),
        };
        let source = self.source.trim_end_matches('/');
        if !self.into_dir {
            return vec![join(source, rest)];
        }
        // Into a directory: a directory source spills its contents there;
        // a file (or a glob of files) lands under its own name.
        let mut out = vec![join(source, rest)];
        let (dir, name) = source.rsplit_once('/').unwrap_or(("", source));
        let first = rest.split('/').next().unwrap_or("");
        if !first.is_empty() && crate::glob::matches(name, first) {
            out.push(join(dir, rest));
        }
        out
    }
}

/// Every RUN instruction's script; they run while the image is built.
pub fn scripts(text: &str) -> Result<Vec<Script>, ModelError> {
    scripts_for(text, Phase::ImageBuild)
}

/// Every RUN instruction's script, for a Dockerfile that runs in `phase`
/// (a CI job that writes a Dockerfile and builds it runs its RUN lines at
/// job time).
pub fn scripts_for(text: &str, phase: Phase) -> Result<Vec<Script>, ModelError> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let escape = escape_char(&lines);
    let mut reader = Reader {
        phase,
        global_args: BTreeMap::new(),
        stages: Vec::new(),
        out: Vec::new(),
    };
    each_instruction(&lines, escape, |instruction| {
        reader.instruction(instruction, escape);
    })?;
    Ok(reader.out)
}

/// Every instruction of the file, in order (blank and comment lines
/// between them skipped).
fn each_instruction<'a>(
    lines: &[&'a str],
    escape: char,
    mut each: impl FnMut(&Instruction<'a>),
) -> Result<(), ModelError> {
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            i += 1;
            continue;
        }
        let instruction = Instruction::read(lines, i, escape)?;
        i = instruction.next;
        each(&instruction);
    }
    Ok(())
}

/// `# escape=`` ` among the parser directives at the top of the file.
fn escape_char(lines: &[&str]) -> char {
    for line in lines {
        let Some(directive) = line.trim().strip_prefix('#') else {
            break;
        };
        let Some((key, value)) = directive.split_once('=') else {
            break;
        };
        if key.trim().eq_ignore_ascii_case("escape") && value.trim() == "`" {
            return '`';
        }
    }
    '\\'
}

/// One instruction: its physical lines and the heredoc bodies after them.
struct Instruction<'a> {
    /// 0-based index of its first line.
    first: usize,
    /// Its physical lines through the last continued one, each `None` when
    /// Docker drops it (a blank or comment line inside a continuation).
    lines: Vec<Option<&'a str>>,
    /// The logical text: continuations joined as Docker joins them.
    logical: String,
    /// Heredoc bodies, in order: (first body line index, lines, the
    /// delimiter line as written).
    heredocs: Vec<(usize, Vec<&'a str>, &'a str)>,
    /// Index of the line after the instruction and its heredocs.
    next: usize,
}

impl<'a> Instruction<'a> {
    fn read(lines: &[&'a str], first: usize, escape: char) -> Result<Self, ModelError> {
        let mut own = Vec::new();
        let mut logical = String::new();
        let mut j = first;
        loop {
            let line = lines[j];
            let dropped = j > first && {
                let t = line.trim_start();
                t.is_empty() || t.starts_with('#')
            };
            if dropped {
                own.push(None);
            } else {
                own.push(Some(line));
                match line.trim_end().strip_suffix(escape) {
                    Some(body) => logical.push_str(body),
                    None => {
                        logical.push_str(line);
                        j += 1;
                        break;
                    }
                }
            }
            j += 1;
            if j >= lines.len() {
                break;
            }
        }
        let mut heredocs = Vec::new();
        for (delimiter, strip_tabs) in heredoc_markers(&logical) {
            let start = j;
            let mut body = Vec::new();
            loop {
                let Some(line) = lines.get(j) else {
                    return Err(ModelError {
                        line: first + 1,
                        column: 1,
                        message: format!("heredoc `{delimiter}` never ends"),
                    });
                };
                j += 1;
                let candidate = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                if candidate == delimiter {
                    heredocs.push((start, body, *line));
                    break;
                }
                body.push(*line);
            }
        }
        Ok(Self {
            first,
            lines: own,
            logical,
            heredocs,
            next: j,
        })
    }

    /// The instruction keyword, upper-cased, and the text after it.
    fn keyword(&self) -> (String, &str) {
        let text = self.logical.trim_start();
        let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        (word.to_ascii_uppercase(), rest)
    }

    /// The instruction's own lines as shell text with every line and column
    /// where it is in the file: the first `skip` characters of the logical
    /// text (keyword, flags) become spaces, dropped lines become a lone
    /// continuation, and a backtick escape becomes a backslash.
    fn shell_text(&self, skip: usize, escape: char, with_heredocs: bool) -> String {
        let mut out = String::new();
        let mut left = skip;
        for (k, line) in self.lines.iter().enumerate() {
            if k > 0 {
                out.push('\n');
            }
            let Some(line) = line else {
                out.push('\\');
                continue;
            };
            let continued = k + 1 < self.lines.len();
            let content = if continued {
                line.trim_end().strip_suffix(escape).unwrap_or(line)
            } else {
                line
            };
            for c in content.chars() {
                if left > 0 {
                    left -= 1;
                    out.push(if c == '\t' { '\t' } else { ' ' });
                } else {
                    out.push(c);
                }
            }
            if continued {
                out.push('\\');
            }
        }
        if with_heredocs {
            for (_, body, delimiter) in &self.heredocs {
                for line in body.iter().chain([delimiter]) {
                    out.push('\n');
                    out.push_str(line);
                }
            }
            out.push('\n');
        }
        out
    }
}

/// `<<EOF`, `<<-EOF`, `<<'EOF'`, `<<"EOF"` outside quotes, in order: the
/// delimiter and whether leading tabs are stripped.
fn heredoc_markers(logical: &str) -> Vec<(String, bool)> {
    let chars: Vec<char> = logical.chars().collect();
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                } else if c == '\\' && q == '"' {
                    i += 1;
                }
                i += 1;
                continue;
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                i += 1;
                continue;
            }
            None if c == '\\' => {
                i += 2;
                continue;
            }
            None => {}
        }
        if c == '<' && chars.get(i + 1) == Some(&'<') && chars.get(i + 2) != Some(&'<') {
            let mut k = i + 2;
            let strip_tabs = chars.get(k) == Some(&'-');
            if strip_tabs {
                k += 1;
            }
            let quoted = chars.get(k).copied().filter(|q| *q == '\'' || *q == '"');
            if quoted.is_some() {
                k += 1;
            }
            let start = k;
            while chars
                .get(k)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            {
                k += 1;
            }
            if k > start {
                out.push((chars[start..k].iter().collect(), strip_tabs));
                if let Some(q) = quoted
                    && chars.get(k) == Some(&q)
                {
                    k += 1;
                }
                i = k;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Shell-like words of an instruction's arguments (quotes removed), each with
/// its char offset in `text`.
fn words(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    let mut quote: Option<char> = None;
    for (i, c) in text.chars().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.get_or_insert((i, String::new())).1.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                current.get_or_insert((i, String::new()));
            }
            None if c.is_whitespace() => {
                if let Some(word) = current.take() {
                    out.push(word);
                }
            }
            None => current.get_or_insert((i, String::new())).1.push(c),
        }
    }
    out.extend(current);
    out
}

/// A `FROM` line's image (as written) and the name after `AS`; its
/// `--platform=…` flags left out.
fn from_words(rest: &str) -> (String, Option<String>) {
    let parts: Vec<String> = words(rest)
        .into_iter()
        .map(|(_, w)| w)
        .filter(|w| !w.starts_with("--"))
        .collect();
    let image = parts.first().cloned().unwrap_or_default();
    let name = match parts.as_slice() {
        [_, as_, name, ..] if as_.eq_ignore_ascii_case("as") => Some(name.clone()),
        _ => None,
    };
    (image, name)
}

/// What a build stage holds so far.
#[derive(Debug, Clone, Default)]
struct Stage {
    name: Option<String>,
    mounts: Vec<Mount>,
    workdir: String,
    env: BTreeMap<String, String>,
    /// The program of `SHELL ["/bin/bash", "-c"]`; `/bin/sh` when unset.
    shell: Option<String>,
}

struct Reader {
    phase: Phase,
    global_args: BTreeMap<String, String>,
    stages: Vec<Stage>,
    out: Vec<Script>,
}

/// `a/./b/../c` → `a/c`; keeps a leading `/`.
fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// `$NAME` and `${NAME}` replaced from `env`; unknown names stay as written.
fn expand(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = match after.strip_prefix('{') {
            Some(inner) => match inner.find('}') {
                Some(end) => (&inner[..end], end + 2),
                None => ("", 0),
            },
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        match env.get(name) {
            Some(value) if !name.is_empty() => out.push_str(value),
            _ => out.push_str(&rest[at..at + 1 + len]),
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

impl Reader {
    fn stage(&mut self) -> &mut Stage {
        if self.stages.is_empty() {
            self.stages.push(Stage {
                workdir: "/".to_string(),
                ..Stage::default()
            });
        }
        let last = self.stages.len() - 1;
        &mut self.stages[last]
    }

    /// The stage a `--from=` names: by name (the latest stage of that
    /// name so far, as the builder takes it) or by index.
    fn named(&self, from: &str) -> Option<&Stage> {
        self.stages
            .iter()
            .rev()
            .find(|s| {
                s.name
                    .as_deref()
                    .is_some_and(|n| n.eq_ignore_ascii_case(from))
            })
            .or_else(|| from.parse::<usize>().ok().and_then(|i| self.stages.get(i)))
    }

    /// An image path in `from` (a stage) or the context, as a context path.
    fn context_source(&self, from: Option<&str>, source: &str) -> Option<(String, bool)> {
        match from {
            None => Some((normalize(source.trim_start_matches('/')), false)),
            Some(stage) => {
                let stage = self.named(stage)?;
                let path = normalize(&if source.starts_with('/') {
                    source.to_string()
                } else {
                    format!("{}/{source}", stage.workdir)
                });
                stage
                    .mounts
                    .iter()
                    .rev()
                    .find_map(|m| m.candidates(&path).into_iter().next())
                    .map(|s| (s, true))
            }
        }
    }

    fn instruction(&mut self, ins: &Instruction<'_>, escape: char) {
        let (keyword, rest) = ins.keyword();
        match keyword.as_str() {
            "FROM" => self.from(rest),
            "ENV" | "ARG" => self.env(&keyword, rest),
            "WORKDIR" => {
                let stage = self.stage();
                let dir = expand(rest.trim(), &stage.env);
                stage.workdir = normalize(&if dir.starts_with('/') {
                    dir
                } else {
                    format!("{}/{dir}", stage.workdir)
                });
            }
            "COPY" | "ADD" => self.copy(rest),
            "SHELL" => {
                let argv = serde_json::from_str::<Vec<String>>(rest.trim());
                self.stage().shell = argv.ok().and_then(|argv| argv.into_iter().next());
            }
            "RUN" => self.run(ins, escape, rest),
            "ONBUILD" => {
                // `ONBUILD RUN …` runs when a child image is built.
                let inner = rest.trim_start();
                if inner
                    .get(..3)
                    .is_some_and(|w| w.eq_ignore_ascii_case("RUN"))
                {
                    let after = &inner[3..];
                    self.run(ins, escape, after);
                }
            }
            _ => {}
        }
    }

    fn from(&mut self, rest: &str) {
        let (image, name) = from_words(rest);
        let mut stage = self.named(&image).cloned().unwrap_or_else(|| Stage {
            workdir: "/".to_string(),
            ..Stage::default()
        });
        stage.name = name;
        self.stages.push(stage);
    }

    fn env(&mut self, keyword: &str, rest: &str) {
        let parts = words(rest);
        // ARGs before the first FROM are global: a stage sees one only when
        // it declares it again (`ARG NAME` takes the global default).
        if keyword == "ARG" && self.stages.is_empty() {
            for (_, part) in parts {
                if let Some((k, v)) = part.split_once('=') {
                    let value = expand(v, &self.global_args);
                    self.global_args.insert(k.to_string(), value);
                }
            }
            return;
        }
        if keyword == "ARG" {
            let globals = self.global_args.clone();
            let stage = self.stage();
            for (_, part) in parts {
                match part.split_once('=') {
                    Some((k, v)) => {
                        let value = expand(v, &stage.env);
                        if value.contains('$') {
                            stage.env.remove(k);
                        } else {
                            stage.env.insert(k.to_string(), value);
                        }
                    }
                    None => {
                        if let Some(v) = globals.get(&part) {
                            stage.env.insert(part, v.clone());
                        }
                    }
                }
            }
            return;
        }
        let stage = self.stage();
        // Values expand what is already set; one still holding an unknown
        // variable is not a literal and is dropped.
        let set = |env: &mut BTreeMap<String, String>, k: &str, v: &str| {
            let value = expand(v, env);
            if value.contains('$') {
                env.remove(k);
            } else {
                env.insert(k.to_string(), value);
            }
        };
        // Legacy `ENV NAME value with spaces`.
        if keyword == "ENV"
            && let Some((_, first)) = parts.first()
            && !first.contains('=')
        {
            // The text after the name as written (quotes in the name would
            // make its unquoted length wrong; found by fuzzing).
            let value = rest
                .trim_start()
                .split_once(char::is_whitespace)
                .map_or("", |(_, v)| v)
                .trim()
                .to_string();
            set(&mut stage.env, first, &value);
            return;
        }
        for (_, part) in parts {
            if let Some((k, v)) = part.split_once('=') {
                set(&mut stage.env, k, v);
            }
        }
    }

    fn copy(&mut self, rest: &str) {
        if rest.contains("<<") {
            return;
        }
        let mut from = None;
        let mut args = Vec::new();
        let trimmed = rest.trim_start();
        let parts: Vec<String> = if trimmed.starts_with('[') {
            serde_json::from_str(trimmed).unwrap_or_default()
        } else {
            words(rest).into_iter().map(|(_, w)| w).collect()
        };
        for part in parts {
            if let Some(stage) = part.strip_prefix("--from=") {
                from = Some(stage.to_string());
            } else if !part.starts_with("--") {
                args.push(part);
            }
        }
        let Some(dest) = args.pop() else { return };
        if args.is_empty() {
            return;
        }
        let stage_env = self.stage().env.clone();
        let workdir = self.stage().workdir.clone();
        let dest = expand(&dest, &stage_env);
        // `COPY x .`, `COPY x /app/` and a copy to the WORKDIR land in a
        // directory, as do several sources.
        let dir_named =
            dest.ends_with('/') || matches!(dest.as_str(), "." | "..") || dest.ends_with("/.");
        let target = normalize(&if dest.starts_with('/') {
            dest
        } else {
            format!("{workdir}/{dest}")
        });
        let into_dir = dir_named || args.len() > 1 || target == normalize(&workdir);
        let mut mounts = Vec::new();
        for source in &args {
            if source.contains("://") {
                continue;
            }
            let source = expand(source, &stage_env);
            let Some((source, _)) = self.context_source(from.as_deref(), &source) else {
                continue;
            };
            mounts.push(Mount {
                target: target.clone(),
                source,
                into_dir,
            });
        }
        self.stage().mounts.extend(mounts);
    }

    /// `--mount=type=bind,source=…,target=…[,from=…]` of one RUN.
    fn bind_mount(&self, flag: &str) -> Option<Mount> {
        let spec = flag.strip_prefix("--mount=")?;
        let mut kind = "bind";
        let (mut source, mut target, mut from) = ("", None, None);
        for field in spec.split(',') {
            let (k, v) = field.split_once('=').unwrap_or((field, ""));
            match k {
                "type" => kind = v,
                "source" | "src" => source = v,
                "target" | "dst" | "destination" => target = Some(v),
                "from" => from = Some(v),
                _ => {}
            }
        }
        if kind != "bind" {
            return None;
        }
        let (source, _) = self.context_source(from, source)?;
        Some(Mount {
            target: normalize(target?),
            source,
            into_dir: false,
        })
    }

    fn run(&mut self, ins: &Instruction<'_>, escape: char, rest: &str) {
        // Flags come first: `--mount=…`, `--network=…`, `--security=…`.
        let mut mounts = self.stage().mounts.clone();
        let mut body = rest.trim_start();
        while body.starts_with("--") {
            let (flag, after) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
            mounts.extend(self.bind_mount(flag));
            body = after.trim_start();
        }
        let skip = ins.logical.chars().count() - body.chars().count();
        let stage = self.stage().clone();
        let script = |text: String, layout: Layout| Script {
            text,
            layout,
            job: None,
            phase: self.phase,
            env: stage.env.clone(),
            working_dir: Some(stage.workdir.clone()),
            mounts: mounts.clone(),
            shell: Some(stage.shell.clone().unwrap_or_else(|| "/bin/sh".to_string())),
        };
        let first_line = ins.first + 1;
        if body.starts_with('[')
            && let Ok(argv) = serde_json::from_str::<Vec<String>>(body.trim_end())
        {
            let text = argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
            let (line, column) = position(skip, first_line, &ins.lines);
            let s = script(
                text,
                Layout::Folded {
                    start: Pos { line, column },
                },
            );
            self.out.push(s);
            return;
        }
        let heredoc_only =
            !ins.heredocs.is_empty() && body.split_whitespace().all(|w| w.starts_with("<<"));
        if heredoc_only {
            // `RUN <<EOF`: the body is the script, unless a shebang names
            // something other than a shell.
            let (start, lines, _) = &ins.heredocs[0];
            if lines.first().is_some_and(|l| {
                l.starts_with("#!")
                    && !["sh", "bash", "dash", "zsh"].iter().any(|s| {
                        l.trim_end().ends_with(&format!("/{s}")) || l.ends_with(&format!(" {s}"))
                    })
            }) {
                return;
            }
            let mut text = lines.join("\n");
            text.push('\n');
            let s = script(
                text,
                Layout::Lines {
                    start: Pos {
                        line: start + 1,
                        column: 1,
                    },
                },
            );
            self.out.push(s);
            return;
        }
        let text = ins.shell_text(skip, escape, !ins.heredocs.is_empty());
        let s = script(
            text,
            Layout::Lines {
                start: Pos {
                    line: first_line,
                    column: 1,
                },
            },
        );
        self.out.push(s);
    }
}

/// File position of char `offset` of the logical text.
fn position(offset: usize, first_line: usize, lines: &[Option<&str>]) -> (usize, usize) {
    let mut left = offset;
    for (k, line) in lines.iter().enumerate() {
        let Some(line) = line else { continue };
        let len = line
            .trim_end()
            .chars()
            .count()
            .saturating_sub(usize::from(k + 1 < lines.len()));
        if left < len || k + 1 == lines.len() {
            return (first_line + k, left + 1);
        }
        left -= len;
    }
    (first_line, offset + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_forms() {
        let text = "FROM x\nARG V=1\nRUN --mount=type=cache,target=/c pip install a \\\n    b\n# c\nRUN [\"bash\", \"-c\", \"pip install c\"]\nRUN <<EOF\nuv pip install d\nEOF\n";
        let s = scripts(text).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(
            s[0].text,
            format!("{}pip install a \\\n    b", " ".repeat(33))
        );
        assert_eq!(
            s[0].layout.map(1, 35),
            Pos {
                line: 3,
                column: 35
            }
        );
        assert_eq!(s[1].text, "bash -c 'pip install c'");
        assert_eq!(s[1].layout.map(1, 1), Pos { line: 6, column: 5 });
        assert_eq!(s[2].text, "uv pip install d\n");
        assert_eq!(s[2].layout.map(1, 1), Pos { line: 8, column: 1 });
        assert_eq!(s[0].env.get("V").map(String::as_str), Some("1"));
        let staged = scripts("ARG V=1\nARG W=2\nFROM x\nARG V\nRUN a\n").unwrap();
        assert_eq!(staged[0].env.get("V").map(String::as_str), Some("1"));
        assert_eq!(staged[0].env.get("W"), None);
    }

    #[test]
    fn a_legacy_env_with_a_quoted_name_is_read_without_panicking() {
        let s =
            scripts("FROM x\nENV \"\u{e9}\"\u{e9} y\nENV \"AB\" \nRUN pip install a\n").unwrap();
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn dropped_lines_keep_their_place() {
        let text = "FROM x\nRUN apt-get update \\\n\n    # a comment\n    && pip install foo \\\n        bar\n";
        let s = scripts(text).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].text.lines().count(), 5);
        assert_eq!(s[0].text.lines().nth(1), Some("\\"));
    }

    #[test]
    fn copies_map_image_paths_to_the_context() {
        let text = "FROM base AS build\nWORKDIR /src\nCOPY requirements/ci.txt /opt/ci/t.txt\nCOPY tools tools\nFROM base\nCOPY --from=build /opt/ci/t.txt /t.txt\nRUN --mount=type=bind,source=scripts,target=/s bash /s/x.sh\n";
        let s = scripts(text).unwrap();
        let mounts = &s[0].mounts;
        let found: Vec<String> = mounts
            .iter()
            .flat_map(|m| m.candidates("/t.txt"))
            .chain(mounts.iter().flat_map(|m| m.candidates("/s/x.sh")))
            .collect();
        assert_eq!(found, vec!["requirements/ci.txt", "scripts/x.sh"]);
    }

    #[test]
    fn a_copy_to_a_directory_lands_under_its_own_name() {
        for dest in [".", "./", "/app", "/app/", "sub/."] {
            let text =
                format!("FROM base\nWORKDIR /app\nCOPY install.sh {dest}\nRUN bash install.sh\n");
            let s = scripts(&text).unwrap();
            let found: Vec<String> = s[0]
                .mounts
                .iter()
                .flat_map(|m| {
                    let image = if dest == "sub/." {
                        "/app/sub/install.sh"
                    } else {
                        "/app/install.sh"
                    };
                    m.candidates(image)
                })
                .collect();
            assert!(
                found.contains(&"install.sh".to_string()),
                "{dest}: {found:?}"
            );
        }
    }

    #[test]
    fn a_stage_name_given_twice_means_the_later_stage() {
        let text = "FROM base AS deps
COPY old.txt /r.txt
FROM base AS deps
COPY requirements/ci.txt /r.txt
FROM base
COPY --from=deps /r.txt /r.txt
RUN pip install -r /r.txt
";
        let s = scripts(text).unwrap();
        let found: Vec<String> = s[0]
            .mounts
            .iter()
            .flat_map(|m| m.candidates("/r.txt"))
            .collect();
        assert_eq!(found, vec!["requirements/ci.txt"]);
    }
}
