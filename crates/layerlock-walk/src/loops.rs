//! `for v in a b; do …/$v/bin/pip install x; done`: a command inside a
//! loop that uses the loop's variable is read once for each of the loop's
//! literal values.

use std::path::{Path, PathBuf};

use layerlock_shell::{Command, Loop};

/// A loop variable's value for one pass (`None`: unset, not known).
pub(crate) type Binding = Vec<(String, Option<String>)>;

/// At most this many values of one loop are tried, and this many passes
/// over one command in all (loops nest).
const MAX_VALUES: usize = 16;
const MAX_PASSES: usize = 64;

/// The variable bindings to read `command` with: one pass per combination
/// of the values of the loops around it whose variables it uses; a single
/// pass with none when it uses none. A value not known (a computed word
/// of the list, or one past the limits) is `None`: the variable is unset
/// for that pass, so the command is read as computed, never as the
/// variable's earlier value.
pub(crate) fn passes(loops: &[Loop], command: &Command) -> Vec<Binding> {
    let uses = |name: &str| {
        command
            .words
            .iter()
            .chain(command.assignments.iter().map(|(_, w)| w))
            .chain(command.stdout.iter())
            .any(|w| w.variables.iter().any(|v| v == name))
    };
    let mut out: Vec<Binding> = vec![Vec::new()];
    if loops.is_empty() {
        return out;
    }
    for l in loops
        .iter()
        .filter(|l| l.contains(command.line, command.column) && uses(&l.name))
    {
        let mut values: Vec<Option<&String>> = l
            .values
            .iter()
            .flatten()
            .take(MAX_VALUES)
            .map(Some)
            .collect();
        let unknown = l.values.iter().any(Option::is_none)
            || l.values.len() > MAX_VALUES
            || out.len() * (values.len() + 1) > MAX_PASSES;
        if unknown || values.is_empty() {
            values.truncate(MAX_PASSES / out.len().max(1) - 1);
            values.push(None);
        }
        let mut next = Vec::new();
        for pass in &out {
            for value in &values {
                let mut pass = pass.clone();
                pass.push((l.name.clone(), value.cloned()));
                next.push(pass);
            }
        }
        out = next;
    }
    out
}

/// The loops with their glob words (`for t in tests/*-test.sh`) expanded
/// to the files they match where the script runs (`dir`): sorted, as the
/// shell sorts them, and inside `root`. A word whose directory part is
/// not plain, or that matches nothing, stays as written (bash without
/// `nullglob`). Only the last segment may hold the pattern.
pub(crate) fn expand_globs<'a>(
    loops: &'a [Loop],
    dir: &Path,
    root: &Path,
) -> std::borrow::Cow<'a, [Loop]> {
    // Nearly every script: no glob, nothing to copy.
    let globs = loops.iter().any(|l| {
        l.values
            .iter()
            .flatten()
            .any(|v| layerlock_ci::glob::is_glob(v))
    });
    if !globs {
        return std::borrow::Cow::Borrowed(loops);
    }
    let expanded = loops
        .iter()
        .map(|l| {
            let mut values = Vec::new();
            for value in &l.values {
                match value.as_deref().filter(|v| layerlock_ci::glob::is_glob(v)) {
                    Some(pattern) => match glob_files(pattern, dir, root) {
                        Some(found) if !found.is_empty() => {
                            values.extend(found.into_iter().map(Some));
                        }
                        _ => values.push(value.clone()),
                    },
                    None => values.push(value.clone()),
                }
            }
            Loop {
                values,
                ..l.clone()
            }
        })
        .collect();
    std::borrow::Cow::Owned(expanded)
}

/// At most this many entries of a directory are looked at for one glob.
const MAX_ENTRIES: usize = 4096;

fn glob_files(pattern: &str, dir: &Path, root: &Path) -> Option<Vec<String>> {
    let (parent, name) = match pattern.rsplit_once('/') {
        Some((parent, name)) => (Some(parent), name),
        None => (None, pattern),
    };
    if parent.is_some_and(layerlock_ci::glob::is_glob) {
        return None;
    }
    let base = match parent {
        Some(p) if p.starts_with('/') => PathBuf::from(p),
        Some(p) => dir.join(p),
        None => dir.to_path_buf(),
    };
    let base = crate::paths::normalize(&base);
    if !base.starts_with(root) {
        return None;
    }
    let mut out: Vec<String> = fs_err::read_dir(&base)
        .ok()?
        .take(MAX_ENTRIES)
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') && layerlock_ci::glob::fnmatch(name, n))
        .map(|n| match parent {
            Some(p) => format!("{p}/{n}"),
            None => n,
        })
        .collect();
    out.sort();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bindings(text: &str) -> Vec<Vec<Binding>> {
        let script = layerlock_shell::parse(text).unwrap();
        script
            .commands
            .iter()
            .map(|c| passes(&script.loops, c))
            .collect()
    }

    #[test]
    fn each_literal_value_is_a_pass() {
        let got =
            bindings("for v in 3.11 3.12; do\n  .venv$v/bin/pip install x\n  echo done\ndone\n");
        let pair = |v: &str| vec![("v".to_string(), Some(v.to_string()))];
        assert_eq!(got[0], vec![pair("3.11"), pair("3.12")]);
        assert_eq!(got[1], vec![Vec::new()]);
        let nested = bindings("for a in x y; do for b in 1 2; do pip install $a==$b; done; done\n");
        assert_eq!(nested[0].len(), 4);
        let computed = bindings("for f in $FILES; do pip install $f; done\n");
        assert_eq!(computed[0], vec![vec![("f".to_string(), None)]]);
        let many: Vec<String> = (0..20).map(|i| format!("p{i}==1")).collect();
        let long = bindings(&format!(
            "for v in {}; do pip install $v; done\n",
            many.join(" ")
        ));
        // 16 values, then one pass with the value unknown.
        assert_eq!(long[0].len(), 17);
        assert_eq!(long[0][16], vec![("v".to_string(), None)]);
    }
}
