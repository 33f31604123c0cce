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
];

/// The command line that regenerates the output, in one normal form: flags
/// that do not change the lock dropped, `--flag=value` written
/// `--flag value`, and paths shown from `root` (`-o ./lock.txt` run from
/// the root and `-o ../lock.txt` run from a subdirectory record the same
/// command). An index URL's credentials never reach it.
pub fn regenerate_command(argv: &[String], cwd: &Path, root: &Path) -> String {
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
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

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
