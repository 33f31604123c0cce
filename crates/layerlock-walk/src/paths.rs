//! Paths as CI writes them, mapped into the repository: normalised
//! lexically, confined to the scan root (after resolving symlinks), and
//! worked out from the shell idioms that name the repository root
//! (`$(git rev-parse --show-toplevel)`, `$(dirname "$0")/..`,
//! `$(cd "$(dirname "$0")/../.." && pwd)`, `$PWD`).

use std::path::{Path, PathBuf};

pub use layerlock_lock::normalize;

/// The existing file `candidate`, if it is inside `root` once symlinks are
/// resolved: CI text must never make the scan read outside the repository.
pub fn confined_file(candidate: &Path, root: &Path) -> Option<PathBuf> {
    let real = fs_err::canonicalize(candidate).ok()?;
    (real.starts_with(root) && real.is_file()).then(|| normalize(candidate))
}

/// What the current script knows when it evaluates a directory expression.
pub struct Here<'a> {
    pub root: &'a Path,
    /// The script file being read (for `$0` and `BASH_SOURCE`), if any.
    pub script: Option<&'a Path>,
    /// The directory commands run in, if known.
    pub cwd: Option<&'a Path>,
}

/// The directory a word such as `"$(git rev-parse --show-toplevel)"/tests`
/// or `$(cd "$(dirname "$0")/.." && pwd)` names, as an absolute path, when
/// it can be worked out from the text.
pub fn eval_dir(raw: &str, here: &Here<'_>) -> Option<PathBuf> {
    let stripped = strip_quotes(raw);
    let text = stripped.as_str();
    let (base, rest) = if let Some(inner) = text.strip_prefix("$(") {
        let close = matching_paren(inner)?;
        (
            eval_substitution(inner[..close].trim(), here)?,
            &inner[close + 1..],
        )
    } else if let Some(rest) = text
        .strip_prefix("${PWD}")
        .or_else(|| text.strip_prefix("$PWD"))
    {
        (here.cwd.unwrap_or(here.root).to_path_buf(), rest)
    } else {
        return None;
    };
    let rest = unquote(rest);
    if !rest.is_empty() && !rest.starts_with('/') {
        return None;
    }
    Some(normalize(&base.join(rest.trim_start_matches('/'))))
}

/// The commands of a `$(…)` that prints a directory.
fn eval_substitution(inner: &str, here: &Here<'_>) -> Option<PathBuf> {
    let words: Vec<&str> = inner.split_whitespace().collect();
    match words.as_slice() {
        ["git", "rev-parse", "--show-toplevel"] => return Some(here.root.to_path_buf()),
        ["pwd"] | ["pwd", "-P"] => return Some(here.cwd.unwrap_or(here.root).to_path_buf()),
        _ => {}
    }
    if let Some(arg) = inner
        .strip_prefix("dirname")
        .map(|a| a.trim().trim_start_matches("-- ").trim())
    {
        let arg = unquote(arg);
        let script = matches!(
            arg,
            "$0" | "${0}" | "${BASH_SOURCE[0]}" | "${BASH_SOURCE}" | "$BASH_SOURCE"
        );
        return if script {
            here.script?.parent().map(Path::to_path_buf)
        } else {
            eval_dir(arg, here)?.parent().map(Path::to_path_buf)
        };
    }
    for prefix in ["realpath -s ", "realpath ", "readlink -f ", "readlink -e "] {
        if let Some(arg) = inner.strip_prefix(prefix) {
            let arg = unquote(arg.trim());
            // `$(realpath "$0")`: the script itself.
            if matches!(
                arg,
                "$0" | "${0}" | "${BASH_SOURCE[0]}" | "${BASH_SOURCE}" | "$BASH_SOURCE"
            ) {
                return here.script.map(Path::to_path_buf);
            }
            return eval_dir(arg, here);
        }
    }
    // `cd DIR && pwd`, `cd DIR; pwd -P`.
    let cd = inner.strip_prefix("cd ")?;
    let end = cd.find("&&").or_else(|| cd.find(';'))?;
    let after = cd[end..].trim_start_matches(['&', ';']).trim();
    if !matches!(after, "pwd" | "pwd -P") {
        return None;
    }
    let dir = cd[..end].trim().trim_start_matches("-- ").trim();
    eval_dir(dir, here).or_else(|| {
        let plain = unquote(dir);
        (!plain.contains('$')).then(|| normalize(&here.cwd.unwrap_or(here.root).join(plain)))
    })
}

/// Index of the `)` closing a `$(` whose body starts `text`.
fn matching_paren(text: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Quotes dropped from a word as written (`"$(dirname "$0")"/..` →
/// `$(dirname $0)/..` is not wanted: only outer and whole-part quotes).
fn unquote(text: &str) -> &str {
    let t = text.trim();
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|r| r.strip_suffix(q))
            && !inner.contains(q)
        {
            return inner;
        }
    }
    t
}

/// A word as written, with the double quotes around expansions removed:
/// `"${ROOT}"/tests` → `${ROOT}/tests`, `"$(git rev-parse
/// --show-toplevel)"/x` → `$(git rev-parse --show-toplevel)/x`.
pub fn strip_quotes(raw: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' if chars.peek() == Some(&'(') => {
                depth += 1;
                out.push(c);
            }
            ')' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            '"' | '\'' if depth == 0 => {}
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_idioms() {
        let root = Path::new("/r");
        let script = Path::new("/r/ci/scripts/run.sh");
        let here = Here {
            root,
            script: Some(script),
            cwd: None,
        };
        let eval = |raw: &str| eval_dir(&strip_quotes(raw), &here);
        assert_eq!(eval("$(git rev-parse --show-toplevel)"), Some("/r".into()));
        assert_eq!(
            eval("\"$(git rev-parse --show-toplevel)\"/tests/a"),
            Some("/r/tests/a".into())
        );
        assert_eq!(eval("$(dirname \"$0\")/../.."), Some("/r".into()));
        assert_eq!(
            eval("$(cd \"$(dirname \"${BASH_SOURCE[0]}\")/..\" && pwd)"),
            Some("/r/ci".into())
        );
        assert_eq!(eval("$(date)"), None);
        assert_eq!(
            normalize(Path::new("tests/../tools/x.sh")),
            PathBuf::from("tools/x.sh")
        );
    }
}
