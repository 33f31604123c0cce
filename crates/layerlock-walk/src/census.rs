//! The census: a second, simple pass that checks the walk. It decides its
//! own file set (every CI configuration file of every system it knows,
//! every Dockerfile, Makefile, justfile, tox and nox file, every script
//! those name by path, and every file the walk read) and greps each line
//! for the words a person would grep for an install. The audit then
//! reconciles each hit with its findings: an install the walk did not
//! account for is named, never silent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::read::read_bounded;
use crate::systems::system_of;
use crate::walker::is_dockerfile_name;

/// How deep below the root files are looked for, and how many rounds of
/// "a script names a script" are followed: bounds on a hostile tree.
const DEPTH: usize = 8;
const ROUNDS: usize = 3;

/// Why a file is in the census.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The walk read it.
    Read,
    /// A configuration file of a CI system the walk does not read.
    Unmodelled(&'static str),
    /// A CI, image or recipe file the walk did not read.
    Unread,
    /// A script a census file names by path (the first place it is named)
    /// that the walk did not read.
    Named(String),
}

/// One line that looks like an install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub line: usize,
    /// The line, trimmed.
    pub text: String,
    pub origin: Origin,
    /// Why it is not an install after all, when it only looks like one.
    pub look_alike: Option<&'static str>,
}

/// Every install-looking line of the census's files under `targets` (the
/// walk's `read` files are relative to `root`).
pub fn census(root: &Path, targets: &[std::path::PathBuf], read: &BTreeSet<String>) -> Vec<Hit> {
    let mut files: BTreeMap<String, Origin> = BTreeMap::new();
    for target in targets {
        if target.is_dir() {
            let prefix = target
                .strip_prefix(root)
                .map(|p| slash(&p.to_string_lossy()))
                .unwrap_or_default();
            let prefix = if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            };
            crate::systems::each_file(target, DEPTH, &mut |relative, _| {
                if let Some(origin) = origin_of(relative) {
                    files.insert(format!("{prefix}{relative}"), origin);
                }
            });
        }
    }
    for path in read {
        files.insert(path.clone(), Origin::Read);
    }
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    let mut fresh: Vec<String> = files.keys().cloned().collect();
    for _ in 0..ROUNDS {
        let mut named = Vec::new();
        for path in &fresh {
            let Some(text) = text_of(root, path) else {
                continue;
            };
            for (line, name) in named_scripts(&text) {
                let at = format!("{path}:{line}");
                // `${SCRIPT_DIR}/x.sh`: a directory known only at run time
                // is most often the naming script's own.
                if let Some((dir, file)) = name.rsplit_once('/')
                    && dir.contains('$')
                    && !file.contains('$')
                {
                    let own = path
                        .rsplit_once('/')
                        .map_or(String::new(), |(d, _)| format!("{d}/"));
                    named.push((format!("{own}{file}"), at));
                    continue;
                }
                if let Some(name) = from_root(&name) {
                    named.push((name, at));
                }
            }
            texts.insert(path.clone(), text);
        }
        fresh.clear();
        let named: Vec<(String, String)> = named
            .into_iter()
            .flat_map(|(name, at)| {
                matching(root, &name)
                    .into_iter()
                    .map(move |path| (path, at.clone()))
            })
            .collect();
        for (candidate, at) in named {
            if !files.contains_key(&candidate) && root.join(&candidate).is_file() {
                files.insert(candidate.clone(), Origin::Named(at));
                fresh.push(candidate);
            }
        }
    }
    let mut hits = Vec::new();
    for (path, origin) in &files {
        let Some(text) = texts.get(path) else {
            continue;
        };
        let mut text_of = PrintedText::default();
        for (i, line) in text.lines().enumerate() {
            let printed = text_of.inside(line);
            if let Some(look_alike) = install_looking(path, line) {
                hits.push(Hit {
                    path: path.clone(),
                    line: i + 1,
                    text: line.trim().chars().take(1000).collect(),
                    origin: origin.clone(),
                    look_alike: printed.or(look_alike),
                });
            }
        }
    }
    hits
}

/// A path with `/` between its parts, however it was written (`a\\b`,
/// Groovy's `a\\\\b`, `a//b`).
fn slash(path: &str) -> String {
    let mut out = path.replace('\\', "/");
    while out.contains("//") {
        out = out.replace("//", "/");
    }
    out
}

/// A file's text, read bounded and only inside the root; `None` for a
/// file that cannot be read or is binary.
fn text_of(root: &Path, path: &str) -> Option<String> {
    let bytes = read_bounded(&root.join(path), root).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// A script named as written, as a path relative to the root (most CI
/// runs from there); `None` for one outside it.
fn from_root(name: &str) -> Option<String> {
    let name = name.trim_start_matches("./");
    if name.starts_with('/') || name.contains("..") {
        return None;
    }
    Some(name.to_string())
}

/// The files a named script can be: itself, or for a name with a value
/// known only at run time in its file name (`task_${backend}_test.sh`)
/// every file of its directory that fits the rest, at most 50.
fn matching(root: &Path, name: &str) -> Vec<String> {
    if !name.contains('$') {
        return vec![name.to_string()];
    }
    let (dir, file) = name.rsplit_once('/').unwrap_or(("", name));
    if dir.contains('$') {
        return Vec::new();
    }
    let pieces = literal_pieces(file);
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .take(10_000)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|candidate| fits(candidate, &pieces))
        .map(|candidate| {
            if dir.is_empty() {
                candidate
            } else {
                format!("{dir}/{candidate}")
            }
        })
        .collect();
    out.sort();
    out.truncate(50);
    out
}

/// A file name cut at its expansions (`a_${x}_b.sh` → `a_`, `_b.sh`).
fn literal_pieces(file: &str) -> Vec<String> {
    let mut pieces = vec![String::new()];
    let mut chars = file.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            if let Some(p) = pieces.last_mut() {
                p.push(c);
            }
            continue;
        }
        if chars.peek() == Some(&'{') {
            for c in chars.by_ref() {
                if c == '}' {
                    break;
                }
            }
        } else {
            while chars
                .peek()
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                chars.next();
            }
        }
        pieces.push(String::new());
    }
    pieces
}

/// Whether `name` is the pieces in order with anything between them.
fn fits(name: &str, pieces: &[String]) -> bool {
    let (Some(first), Some(last)) = (pieces.first(), pieces.last()) else {
        return false;
    };
    if !name.starts_with(first.as_str()) || !name.ends_with(last.as_str()) {
        return false;
    }
    let mut rest = &name[first.len()..];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece.as_str()) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len()
}

/// Every token of `text` that names a script by path (`ci/x.sh`,
/// `tools\build.bat`), with its line.
fn named_scripts(text: &str) -> Vec<(usize, String)> {
    const ENDINGS: &[&str] = &[".sh", ".bash", ".bat", ".cmd", ".ps1"];
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for token in line.split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '"' | '\'' | '`' | '(' | ')' | ';' | '&' | '|' | '=' | ','
                )
        }) {
            let token = slash(token);
            if ENDINGS.iter().any(|e| token.ends_with(e)) && token.len() > 3 {
                out.push((i + 1, token));
            }
        }
    }
    out
}

/// Lines that are text a command prints or writes, not commands: the
/// body of a heredoc fed to `cat`, `tee` or an annotation, and a quoted
/// string an `echo` or `printf` opens on one line and closes on a later
/// one.
#[derive(Default)]
struct PrintedText {
    /// The heredoc's terminator, while inside one.
    heredoc: Option<String>,
    /// Inside an echoed string that spans lines.
    quoted: bool,
}

impl PrintedText {
    /// Whether `line` is such text (why, if so); moves past it.
    fn inside(&mut self, line: &str) -> Option<&'static str> {
        let trimmed = line.trim();
        if let Some(end) = &self.heredoc {
            if trimmed == end {
                self.heredoc = None;
            }
            return Some("text a heredoc prints or writes, not run");
        }
        if self.quoted {
            if unescaped_quotes(line) % 2 == 1 {
                self.quoted = false;
            }
            return Some("printed, not run");
        }
        let first = trimmed.split_whitespace().next().unwrap_or("");
        let prints = matches!(first, "echo" | "printf");
        if let Some(at) = trimmed.find("<<")
            && (matches!(first, "cat" | "tee" | "echo" | "printf") || trimmed.contains("annotate"))
        {
            let word = trimmed[at + 2..]
                .trim_start_matches(['-', '~'])
                .trim_start();
            let end: String = word
                .trim_start_matches(['\'', '"'])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !end.is_empty() {
                self.heredoc = Some(end);
            }
        } else if prints && unescaped_quotes(line) % 2 == 1 {
            self.quoted = true;
        }
        None
    }
}

/// How many `"` of a line are not escaped.
fn unescaped_quotes(line: &str) -> usize {
    let mut count = 0;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => count += 1,
            _ => escaped = false,
        }
        if c != '\\' {
            escaped = false;
        }
    }
    count
}

/// Whether a file found in the tree belongs in the census, and as what.
fn origin_of(relative: &str) -> Option<Origin> {
    if let Some(system) = system_of(relative) {
        return Some(Origin::Unmodelled(system));
    }
    let name = relative.rsplit('/').next().unwrap_or(relative);
    let lower = name.to_ascii_lowercase();
    let ci_yaml = (lower.ends_with(".yml") || lower.ends_with(".yaml"))
        && (relative.starts_with(".github/workflows/")
            || relative.contains("/.github/workflows/")
            || relative.starts_with(".github/actions/")
            || name == "action.yml"
            || name == "action.yaml"
            || relative.starts_with(".buildkite/")
            || relative.contains("/.buildkite/")
            || lower.contains("gitlab-ci"));
    // A modelled system's configuration files; a script kept beside them
    // is in the census only when something names it.
    let config = lower.ends_with(".yml") || lower.ends_with(".yaml");
    let modelled = (config && layerlock_ci::System::from_path(relative).is_some())
        || lower == "jenkinsfile"
        || lower.starts_with("jenkinsfile.");
    // pyproject.toml and pixi.toml hold tasks runners run (pixi, hatch,
    // poe).
    let recipe = matches!(
        lower.as_str(),
        "makefile"
            | "gnumakefile"
            | "justfile"
            | ".justfile"
            | "tox.ini"
            | "noxfile.py"
            | "pyproject.toml"
            | "pixi.toml"
    ) || lower.ends_with(".mk");
    (ci_yaml || modelled || recipe || is_dockerfile_name(name)).then_some(Origin::Unread)
}

/// Whether a line looks like an install: `None` when it does not,
/// `Some(None)` when it does, `Some(Some(why))` when it only looks like
/// one (printed, a step's name).
fn install_looking(path: &str, line: &str) -> Option<Option<&'static str>> {
    let trimmed = line.trim_start();
    let lower_path = path.to_ascii_lowercase();
    let batch = lower_path.ends_with(".bat") || lower_path.ends_with(".cmd");
    let lower_line = trimmed.to_ascii_lowercase();
    let comment = trimmed.starts_with('#')
        || trimmed.starts_with("//")
        || (batch && (lower_line.starts_with("rem ") || trimmed.starts_with("::")));
    if comment {
        return None;
    }
    let words: Vec<&str> = trimmed
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '`' | '='))
        .map(|w| w.trim_matches(|c| matches!(c, '"' | '\'' | '[' | ']')))
        .filter(|w| !w.is_empty())
        .collect();
    let at = install_at(&words)?;
    let before = &words[..at];
    let printers = [
        "echo",
        "printf",
        "print",
        "console.log",
        "core.info",
        "core.notice",
        "puts",
    ];
    let assigned = trimmed
        .split_whitespace()
        .take_while(|w| !w.contains("install"))
        .any(|w| w.contains("=\"") || w.contains("='"));
    // `echo "X=pip install y" >> "$GITHUB_ENV"` or `> run.sh`: written
    // where something may run it, not only printed.
    let redirected = trimmed.contains(">>") || trimmed.contains("> ") || trimmed.contains("| tee ");
    let look_alike = if before.iter().any(|w| printers.contains(w)) && !redirected {
        Some("printed, not run")
    } else if assigned {
        Some("a command line assigned to a variable; it runs where the variable is used")
    } else if before
        .first()
        .is_some_and(|w| matches!(*w, "-" | "name:" | "description:" | "label:" | "title:"))
        && before.iter().take(2).any(|w| {
            w.ends_with(':')
                && *w != "run:"
                && *w != "script:"
                && *w != "command:"
                && *w != "cmd:"
                && *w != "bash:"
                && *w != "sh:"
                && *w != "pwsh:"
                && *w != "ps:"
                && *w != "powershell:"
                && *w != "shell:"
        })
    {
        Some("a step's name, not a command")
    } else if words.contains(&"--dry-run") {
        Some("a dry run")
    } else {
        None
    };
    Some(look_alike)
}

/// The index of the word that starts an install in `words`, if any.
fn install_at(words: &[&str]) -> Option<usize> {
    let is_pip = |w: &str| {
        let name = w.rsplit('/').next().unwrap_or(w);
        name == "pip"
            || name
                .strip_prefix("pip")
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    // The next word that is not an option.
    let next_plain = |from: usize| {
        words[from..]
            .iter()
            .position(|w| !w.starts_with('-'))
            .map(|i| i + from)
    };
    for (i, w) in words.iter().enumerate() {
        let after = |k: usize| words.get(i + k).copied();
        let verb = |k: usize, verbs: &[&str]| {
            next_plain(i + k)
                .and_then(|j| words.get(j))
                .is_some_and(|v| verbs.contains(v))
        };
        let name = w.rsplit('/').next().unwrap_or(w);
        let hit = (is_pip(w) && verb(1, &["install"]))
            || (*w == "-mpip" && verb(1, &["install"]))
            || (*w == "-m" && after(1).is_some_and(is_pip) && verb(2, &["install"]))
            || (name == "uv" && after(1) == Some("pip") && verb(2, &["install", "sync"]))
            || (name == "uv" && verb(1, &["sync", "add"]))
            || (name == "uv" && after(1) == Some("tool") && verb(2, &["install"]))
            || (matches!(name, "pipx" | "pip-sync" | "easy_install"))
            || (matches!(name, "conda" | "mamba" | "micromamba") && verb(1, &["install"]))
            || (matches!(name, "poetry" | "pdm") && verb(1, &["install", "sync", "add"]))
            || (name == "setup.py" && verb(1, &["install", "develop"]))
            || w.contains("session.install(");
        if hit {
            // `-m pip`: the command starts at the interpreter before it.
            let start = if *w == "-m" || *w == "-mpip" {
                i.saturating_sub(1)
            } else {
                i
            };
            return Some(start);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_are_told_from_their_look_alikes() {
        let looks = |line: &str| install_looking("ci/x.sh", line);
        for line in [
            "pip install x",
            "python -m pip install -r req.txt",
            "python3 -mpip install x",
            "\"$PY\" -m pip install x",
            "sudo pip3.11 install x",
            "uv pip install --system x",
            "uv sync --frozen",
            "conda install -y numpy",
            "pip --quiet install x",
            "run: pip install x",
            "  - pip install x",
            "python setup.py develop",
        ] {
            assert_eq!(looks(line), Some(None), "{line}");
        }
        for line in [
            "# pip install x",
            "pip uninstall -y x",
            "pip download x",
            "pip freeze",
            "uv run pytest",
            "pip-compile req.in",
        ] {
            assert_eq!(looks(line), None, "{line}");
        }
        assert_eq!(
            looks("echo \"run pip install x\""),
            Some(Some("printed, not run"))
        );
        assert_eq!(
            looks("- name: pip install deps"),
            Some(Some("a step's name, not a command"))
        );
        assert_eq!(install_looking("ci/x.bat", "rem pip install x"), None);
        assert_eq!(looks("ask: 'how (pip install, or conda)'"), None);
        assert_eq!(
            looks("echo \"CIBW_BEFORE_BUILD=pip install x\" >> $GITHUB_ENV"),
            Some(None)
        );
        for line in [
            "ARG PIP=\"python3 -m pip install --no-cache-dir\"",
            "console.log('pip install x')",
            "CMD=\"python -m pip install numpy\"",
        ] {
            assert!(looks(line).is_some_and(|l| l.is_some()), "{line}");
        }
    }

    #[test]
    fn text_a_command_prints_is_not_a_command() {
        let mut printed = PrintedText::default();
        let said: Vec<_> = [
            "cat <<'EOF'",
            "pip install x",
            "EOF",
            "pip install y",
            "echo \"",
            "  run pip install z",
            "\"",
            "pip install w",
        ]
        .iter()
        .map(|l| printed.inside(l).is_some())
        .collect();
        assert_eq!(said, [false, true, true, false, false, true, true, false]);
    }

    #[test]
    fn the_census_reads_ci_files_and_the_scripts_they_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let write = |p: &str, text: &str| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            ".github/workflows/ci.yml",
            "steps:\n  - run: bash ci/a.sh\n",
        );
        write("ci/a.sh", "pip install x\n");
        write(".travis.yml", "script:\n  - pip install y\n");
        write("docs/other.sh", "pip install z\n");
        write(
            ".github/workflows/b.yml",
            "steps:\n  - run: bash ci/t_${B}.sh\n",
        );
        write("ci/t_gpu.sh", "pip install g\n");
        write("tools/deps.sh", "${SCRIPT_DIR}/pre.sh\n");
        write("tools/pre.sh", "pip install p\n");
        write(
            ".github/workflows/c.yml",
            "steps:\n  - run: bash tools/deps.sh\n",
        );
        let hits = census(&root, std::slice::from_ref(&root), &BTreeSet::new());
        let got: Vec<(&str, usize, &Origin)> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.line, &h.origin))
            .collect();
        assert_eq!(
            got,
            [
                (".travis.yml", 2, &Origin::Unmodelled("Travis CI")),
                (
                    "ci/a.sh",
                    1,
                    &Origin::Named(".github/workflows/ci.yml:2".into())
                ),
                (
                    "ci/t_gpu.sh",
                    1,
                    &Origin::Named(".github/workflows/b.yml:2".into())
                ),
                ("tools/pre.sh", 1, &Origin::Named("tools/deps.sh:1".into())),
            ]
        );
    }
}
