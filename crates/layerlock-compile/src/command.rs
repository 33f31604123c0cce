//! The command a lock's header names to make it again: the command line
//! as given, less what does not change the lock, with paths shown from the
//! repository and credentials left out.

use std::path::Path;

use crate::plan::{UserPath, interpreter_path};

/// Flags that do not change the lock and so stay out of its header.
const VOLATILE_WITH_VALUE: &[&str] = &[
    "--cache-dir",
    "--config",
    "--timeout",
    "--custom-compile-command",
    "--stats",
    "--upgrade-package",
    "-P",
    "--report",
    "--report-format",
];
/// `--upgrade` and `-P` are what one run does to the pins, not how the
/// lock is made: the next run keeps the pins they chose.
const VOLATILE: &[&str] = &[
    "--check",
    "--offline",
    "--no-cache",
    "--quiet",
    "-q",
    "--upgrade",
    "-U",
    "--diff",
];
/// Flags whose value is a file or directory, shown from the root.
const PATH_VALUED: &[&str] = &[
    "--base",
    "--output",
    "-o",
    "--find-links",
    "--base-env",
    "--constraint",
    "-c",
    "--override",
];
/// Every other flag of `compile` that takes a value.
const WITH_VALUE: &[&str] = &[
    "--python-version",
    "--platform",
    "--python-platform",
    "--owned",
    "--replace",
    "--owned-over",
    "--exclude-newer",
    "--prerelease",
    "--min-age",
    "--min-age-exempt",
    "--now",
    "--layer",
    "--index-url",
    "--extra-index-url",
    "--hashes",
    "--format",
    "--extra",
    "--group",
    "--only-binary",
    "--allow-walk-back",
    "--read-whole-sdist",
];

/// The command line that regenerates the output, in one normal form: flags
/// that do not change the lock dropped, `--flag=value` written
/// `--flag value`, and paths shown from `root` (`-o ./lock.txt` run from
/// the root and `-o ../lock.txt` run from a subdirectory record the same
/// command). An index URL's credentials never reach it.
pub fn regenerate_command(argv: &[String], cwd: &Path, root: &Path) -> String {
    regenerate_words(argv, cwd, root).join(" ")
}

/// The command a config layer's lock names: `layerlock VERB --layer NAME`
/// and every flag given beside the config that shapes the lock (`--hashes
/// target`, `--now …`), so the command makes the same lock again. `-o`
/// and `--layer` are the caller's to add.
pub fn layer_command(argv: &[String], cwd: &Path, root: &Path, verb: &str, name: &str) -> String {
    let words = regenerate_words(argv, cwd, root);
    let mut out = vec![
        "layerlock".to_string(),
        verb.to_string(),
        "--layer".to_string(),
        layerlock_shell::quote(name),
    ];
    // The verb and then the flags, less the layers and output they name.
    let mut rest = words.into_iter().skip(2);
    while let Some(word) = rest.next() {
        if word == "--layer" || word == "-o" {
            rest.next();
            continue;
        }
        out.push(word);
    }
    out.join(" ")
}

/// Flags a config layer's lock may record that `compile --check` takes
/// from it when the command line names none: how the lock is written and
/// the moment it was judged at. What chooses where packages come from or
/// which versions may be picked (indexes, bases, constraints, cutoffs) is
/// never taken from a file the check is checking.
const TAKEN_FROM_HEADER: &[&str] = &["--hashes", "--now", "--format"];

/// What `--check` makes of the command a config layer's lock records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// The command is this layer's own, with these flags to apply
    /// (`--hashes target`), each followed by its value.
    Take(Vec<String>),
    /// A command for this layer with flags `--check` does not take from a
    /// file; it is named when the lock is stale.
    Leave(String),
    /// Not a command of this layer (another layer's, a custom command).
    Other,
}

/// Read the command a config layer `name`'s lock records, as written in
/// its header, for `compile --check` run with no flags of its own.
pub fn recorded_flags(recorded: &str, verb: &str, name: &str) -> Recorded {
    let Ok(script) = layerlock_shell::parse(recorded) else {
        return Recorded::Other;
    };
    let [command] = script.commands.as_slice() else {
        return Recorded::Other;
    };
    let Some(words) = command
        .words
        .iter()
        .map(|w| w.value.clone())
        .collect::<Option<Vec<String>>>()
    else {
        return Recorded::Other;
    };
    let head = ["layerlock", verb, "--layer", name];
    if words.len() < head.len() || words[..head.len()].iter().zip(head).any(|(w, h)| w != h) {
        return Recorded::Other;
    }
    let flags = &words[head.len()..];
    let taken = flags.chunks(2).all(|pair| {
        pair.len() == 2
            && TAKEN_FROM_HEADER.contains(&pair[0].as_str())
            && !pair[1].starts_with('-')
    });
    if taken {
        Recorded::Take(flags.to_vec())
    } else {
        Recorded::Leave(recorded.to_string())
    }
}

/// [`regenerate_command`]'s words, each quoted for a shell.
fn regenerate_words(argv: &[String], cwd: &Path, root: &Path) -> Vec<String> {
    let path = |arg: &str| -> String {
        if arg.is_empty() {
            return String::new();
        }
        UserPath::from_arg(Path::new(arg), cwd, root).shown
    };
    let mut out = vec!["layerlock".to_string()];
    let mut args = argv.iter().skip(1).map(String::as_str);
    let mut options_done = false;
    while let Some(arg) = args.next() {
        if options_done || !arg.starts_with('-') || arg == "-" {
            // Positional: the verb, then input files.
            let shown = if out.len() == 1 {
                arg.to_string()
            } else {
                path(arg)
            };
            out.push(layerlock_shell::quote(&layerlock_index::redact_text(
                &shown,
            )));
            continue;
        }
        if arg == "--" {
            options_done = true;
            out.push(arg.to_string());
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
            _ if arg.len() > 2 && ["-o", "-c", "-P"].iter().any(|f| arg.starts_with(f)) => {
                let value = &arg[2..];
                (&arg[..2], Some(value.strip_prefix('=').unwrap_or(value)))
            }
            _ => (arg, None),
        };
        let flag = if flag == "--output" { "-o" } else { flag };
        if VOLATILE.contains(&flag) {
            continue;
        }
        let takes_value = VOLATILE_WITH_VALUE.contains(&flag)
            || PATH_VALUED.contains(&flag)
            || WITH_VALUE.contains(&flag);
        if !takes_value {
            out.push(layerlock_shell::quote(flag));
            continue;
        }
        let value = match inline {
            Some(v) => Some(v),
            None => args.next(),
        };
        if VOLATILE_WITH_VALUE.contains(&flag) {
            continue;
        }
        out.push(flag.to_string());
        if let Some(value) = value {
            let value = if flag == "--base-env" {
                interpreter_path(Path::new(value), cwd, root).shown
            } else if PATH_VALUED.contains(&flag) && value != "-" {
                path(value)
            } else {
                // An index URL's credentials never reach the lock header,
                // in any spelling (`--index-url URL`, an invalid URL).
                layerlock_index::redact_text(value)
            };
            out.push(layerlock_shell::quote(&value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_layers_command_keeps_the_flags_given_beside_it() {
        let argv: Vec<String> = [
            "layerlock",
            "compile",
            "--config",
            "examples/kv/layerlock.toml",
            "--layer=kv",
            "--hashes",
            "target",
            "--now",
            "2026-12-01T00:00:00Z",
            "--check",
            "-o",
            "x.txt",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            layer_command(
                &argv,
                Path::new("/repo"),
                Path::new("/repo"),
                "compile",
                "kv"
            ),
            "layerlock compile --layer kv --hashes target --now 2026-12-01T00:00:00Z"
        );
    }

    #[test]
    fn check_takes_only_how_a_lock_is_written_from_its_header() {
        let take = |flags: &[&str]| Recorded::Take(flags.iter().map(|f| f.to_string()).collect());
        assert_eq!(
            recorded_flags(
                "layerlock compile --layer kv --hashes target",
                "compile",
                "kv"
            ),
            take(&["--hashes", "target"])
        );
        assert_eq!(
            recorded_flags(
                "layerlock compile --layer 'kv' --now 2026-12-01T00:00:00Z",
                "compile",
                "kv"
            ),
            take(&["--now", "2026-12-01T00:00:00Z"])
        );
        assert_eq!(
            recorded_flags("layerlock compile --layer kv", "compile", "kv"),
            take(&[])
        );
        // Where packages come from is never read from the file checked.
        let index = "layerlock compile --layer kv --index-url https://elsewhere/simple";
        assert_eq!(
            recorded_flags(index, "compile", "kv"),
            Recorded::Leave(index.into())
        );
        assert_eq!(
            recorded_flags("layerlock compile --layer other", "compile", "kv"),
            Recorded::Other
        );
        assert_eq!(
            recorded_flags("make lock", "compile", "kv"),
            Recorded::Other
        );
        assert_eq!(
            recorded_flags(
                "layerlock compile --layer kv --now $(date)",
                "compile",
                "kv"
            ),
            Recorded::Other
        );
    }

    #[test]
    fn regenerate_command_drops_volatile_flags() {
        let argv: Vec<String> = [
            "/abs/target/layerlock",
            "compile",
            "in.txt",
            "--cache-dir",
            "/tmp/x",
            "--check",
            "--stats",
            "/tmp/stats.json",
            "--owned",
            "nccl==2.1",
            "--exclude-newer",
            "2026-01-01T00:00:00Z",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            regenerate_command(&argv, Path::new("/repo"), Path::new("/repo")),
            "layerlock compile in.txt --owned nccl==2.1 --exclude-newer 2026-01-01T00:00:00Z"
        );
    }

    #[test]
    fn regenerate_command_is_the_same_from_any_directory() {
        let argv = |args: &[&str]| -> Vec<String> {
            std::iter::once("layerlock")
                .chain(args.iter().copied())
                .map(str::to_string)
                .collect()
        };
        let root = Path::new("/repo");
        let from_root = regenerate_command(
            &argv(&[
                "compile",
                "./in.txt",
                "--base=base.txt",
                "-o",
                "./locks/kv.txt",
            ]),
            root,
            root,
        );
        let from_sub = regenerate_command(
            &argv(&[
                "compile",
                "../in.txt",
                "--base",
                "../base.txt",
                "--output=kv.txt",
                "--timeout",
                "5",
            ]),
            Path::new("/repo/locks"),
            root,
        );
        assert_eq!(
            from_root,
            "layerlock compile in.txt --base base.txt -o locks/kv.txt"
        );
        assert_eq!(from_sub, from_root);
        let secret = regenerate_command(
            &argv(&[
                "compile",
                "in.txt",
                "--index-url=https://u:tok@host/simple/",
            ]),
            root,
            root,
        );
        assert!(!secret.contains("tok"), "{secret}");
    }
}
