//! What one command does to the walk, read from its words alone: the
//! script or shell it runs, the directory and variables it changes, the
//! file its heredoc is written to, and what cannot be known until it runs.

use std::collections::BTreeMap;

use layerlock_shell::ShellRun;

use super::{ScanOptions, Vars};
use crate::paths::normalize;
use crate::place::Place;
use crate::site::Arg;

/// `"$cmd"`, `${CMD}`, `"$@"`, `$*` as written.
pub(super) fn is_lone_variable(raw: &str) -> bool {
    let text = raw.trim_matches('"');
    let name = text
        .strip_prefix("${")
        .and_then(|t| t.strip_suffix('}'))
        .or_else(|| text.strip_prefix('$'));
    name.is_some_and(|n| {
        n == "@"
            || n == "*"
            || (!n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    })
}

/// Variables CI systems set to the checkout directory.
pub(super) const WORKSPACE_VARS: &[&str] = &[
    "GITHUB_WORKSPACE",
    "BUILDKITE_BUILD_CHECKOUT_PATH",
    "CI_PROJECT_DIR",
    "PWD",
];

/// The file a heredoc is written to: `cat <<EOF > f`, `tee f <<EOF`.
pub(super) fn heredoc_target(
    command: &layerlock_shell::Command,
    inner: &[Arg],
    vars: &BTreeMap<String, String>,
) -> Option<String> {
    if let Some(word) = &command.stdout {
        return word.value.clone().or_else(|| word.expand(vars));
    }
    let program = inner.first()?.value.as_deref()?;
    if program.rsplit('/').next() == Some("tee") {
        return inner[1..]
            .iter()
            .filter_map(|a| a.value.as_deref())
            .find(|v| !v.starts_with('-'))
            .map(str::to_string);
    }
    None
}

/// `export A=b`, `cd DIR` at the top level of a script change what later
/// commands see.
pub(super) fn track_env_and_cwd(
    args: &[Arg],
    vars: &mut Vars,
    place: &mut Place,
    options: &ScanOptions,
) {
    let Some(first) = args.first().and_then(|a| a.value.as_deref()) else {
        return;
    };
    match first {
        "export" | "local" | "declare" | "typeset" | "readonly" => {
            for arg in &args[1..] {
                match arg.value.as_deref().and_then(|a| a.split_once('=')) {
                    Some((k, v)) => vars.set(k.to_string(), v.to_string()),
                    // `export X="$(step)"`: not known, so no earlier value
                    // holds any more.
                    None if arg.value.is_none() => {
                        if let Some((k, _)) = arg.raw.split_once('=') {
                            vars.values.remove(k);
                        }
                    }
                    None => {}
                }
            }
        }
        "cd" | "pushd" => {
            let Some(dir) = args.get(1).and_then(|a| a.value.as_deref()) else {
                return;
            };
            // In an image the directory is the image's: the repository's
            // files are where they were copied.
            if let Some(image) = &place.image {
                *place = image.in_dir(dir).place();
                return;
            }
            let mapped = options.path_map.map(dir);
            place.cwd = Some(normalize(
                &place
                    .cwd
                    .clone()
                    .unwrap_or_else(|| options.root.clone())
                    .join(mapped),
            ));
        }
        _ => {}
    }
}

/// The script a command runs, if it runs one, with the arguments it gets:
/// `bash x.sh a b`, `sh -e x.sh`, `source x.sh`, `. x.sh`, `./x.sh`,
/// `path/to/x.sh`. Not `sh -s -- args` (the script is standard input).
pub(super) fn script_call(args: &[Arg]) -> Option<(String, Vec<Arg>)> {
    let first = args.first()?.value.as_deref()?;
    let values: Vec<Option<&str>> = args.iter().map(|a| a.value.as_deref()).collect();
    let program = first.rsplit('/').next().unwrap_or(first);
    if matches!(program, "bash" | "sh" | "dash" | "zsh") {
        return match layerlock_shell::shell_run(&values)? {
            ShellRun::File(i) => Some((args[i].value.clone()?, args[i + 1..].to_vec())),
            _ => None,
        };
    }
    if first == "source" || first == "." {
        return Some((args.get(1)?.value.clone()?, args.get(2..)?.to_vec()));
    }
    if first.ends_with(".sh") || first.ends_with(".bash") || first.starts_with("./") {
        return Some((first.to_string(), args[1..].to_vec()));
    }
    None
}

/// `.venv/bin/activate`, `venv\Scripts\activate`, `$VENV/bin/activate`.
pub(super) fn is_activation(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let dir = path[..path.len() - name.len()].trim_end_matches(['/', '\\']);
    matches!(name, "activate" | "activate.sh" | "activate.bash")
        && (dir.ends_with("bin") || dir.ends_with("Scripts"))
}

/// `$PIP install x`, `"${UV}" pip install x` with the program held in a
/// variable nothing sets: the program as written.
pub(super) fn computed_installer(args: &[Arg]) -> Option<String> {
    let first = args.first()?;
    if first.value.is_some() || crate::wrappers::program(first).is_some() {
        return None;
    }
    let words: Vec<&str> = args[1..3.min(args.len())]
        .iter()
        .map(|a| a.value.as_deref().unwrap_or(""))
        .collect();
    matches!(
        words.as_slice(),
        ["install" | "sync" | "add", ..] | ["pip", "install" | "sync"]
    )
    .then(|| first.raw.clone())
}

/// The script operand of `bash X`, `source X`, `. X` when it is computed
/// (`bash $dir/run-$NAME.sh`), as written.
pub(super) fn computed_script(args: &[Arg]) -> Option<String> {
    let first = args.first()?.value.as_deref()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    let operand = if matches!(program, "bash" | "sh" | "dash" | "zsh") {
        let values: Vec<Option<&str>> = args.iter().map(|a| a.value.as_deref()).collect();
        match layerlock_shell::shell_run(&values)? {
            ShellRun::File(i) => &args[i],
            _ => return None,
        }
    } else if program == "source" || program == "." {
        args.get(1)?
    } else {
        return None;
    };
    operand.value.is_none().then(|| operand.raw.clone())
}

/// `$(command -v uv)`, `$(which pip3)`, `` `type -P uv` ``: the program's
/// path, known by its name (`uv_bin=$(command -v uv)` … `"$uv_bin" sync`).
pub(super) fn program_lookup(raw: &str) -> Option<String> {
    let text = raw.trim_matches('"');
    let inner = text
        .strip_prefix("$(")
        .and_then(|t| t.strip_suffix(')'))
        .or_else(|| text.strip_prefix('`').and_then(|t| t.strip_suffix('`')))?;
    // `command -v uv 2>/dev/null || true`: the lookup is what comes first.
    let inner = inner.split("||").next().unwrap_or(inner);
    let words: Vec<&str> = inner
        .split_whitespace()
        .filter(|w| !w.contains('>'))
        .collect();
    let name = match words.as_slice() {
        ["command", "-v", name] | ["which", name] | ["type", "-P" | "-p", name] => *name,
        _ => return None,
    };
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        .then(|| name.to_string())
}

/// `$1`…, `$@`, `$*` and `$#` for these arguments (`$@` only when every
/// argument is known).
pub(super) fn set_positional(
    vars: &mut BTreeMap<String, String>,
    positional: &[Arg],
    called: bool,
) {
    vars.retain(|k, _| !is_positional(k));
    for (i, arg) in positional.iter().enumerate() {
        if let Some(v) = &arg.value {
            vars.insert((i + 1).to_string(), v.clone());
        }
    }
    if called && positional.iter().all(|a| a.value.is_some()) {
        let all: Vec<&str> = positional
            .iter()
            .filter_map(|a| a.value.as_deref())
            .collect();
        vars.insert("@".to_string(), all.join(" "));
        vars.insert("*".to_string(), all.join(" "));
        vars.insert("#".to_string(), all.len().to_string());
    }
}

/// `$1`…, `$@`, `$*`, `$#`: a script's own arguments, never inherited.
pub(super) fn is_positional(name: &str) -> bool {
    matches!(name, "@" | "*" | "#") || name.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<Arg> {
        Arg::words(text)
    }

    #[test]
    fn scripts_a_command_runs() {
        let call = |t: &str| script_call(&args(t)).map(|(s, a)| (s, a.len()));
        assert_eq!(call("bash ci/x.sh a b"), Some(("ci/x.sh".to_string(), 2)));
        assert_eq!(call("source ./env.sh"), Some(("./env.sh".to_string(), 0)));
        assert_eq!(call("./run"), Some(("./run".to_string(), 0)));
        assert_eq!(call("sh -s -- a"), None);
        assert_eq!(call("echo x.sh"), None);
        assert_eq!(
            computed_script(&args("bash $DIR/run-$X.sh")).as_deref(),
            Some("$DIR/run-$X.sh")
        );
        assert_eq!(computed_script(&args("bash ci/x.sh")), None);
    }

    #[test]
    fn what_cannot_be_known_and_what_need_not_be() {
        assert_eq!(
            computed_installer(&args("$PIP install x")).as_deref(),
            Some("$PIP")
        );
        assert_eq!(
            computed_installer(&args("$UV pip install x")).as_deref(),
            Some("$UV")
        );
        assert_eq!(computed_installer(&args("$VENV/bin/pip install x")), None);
        assert_eq!(computed_installer(&args("$RUNNER test")), None);
        assert!(is_activation(".venv/bin/activate"));
        assert!(is_activation("$VENV/bin/activate"));
        assert!(is_activation("venv\\Scripts\\activate"));
        assert!(!is_activation("ci/activate"));
        assert_eq!(
            program_lookup("\"$(command -v uv 2>/dev/null || true)\"").as_deref(),
            Some("uv")
        );
        assert_eq!(program_lookup("`which pip3`").as_deref(), Some("pip3"));
        assert_eq!(program_lookup("$(cat x)"), None);
    }
}
