//! Recognises commands that run a shell on a string (`bash -c '…'`) or on
//! its standard input (`bash <<EOF`), so the script they run can be parsed.

use crate::word_builder::RawWord;

const SHELLS: [&str; 4] = ["bash", "sh", "dash", "zsh"];

/// Commands that run the command given after them (their own options and
/// operands in between): a shell word after one of these still runs a
/// shell. Anything else (`echo bash -c …`) merely mentions one.
const WRAPPERS: &[&str] = &[
    "apptainer",
    "builtin",
    "chroot",
    "command",
    "conda",
    "devcontainer",
    "docker",
    "doas",
    "dumb-init",
    "env",
    "exec",
    "flock",
    "gosu",
    "hatch",
    "ionice",
    "kubectl",
    "mamba",
    "micromamba",
    "nerdctl",
    "nice",
    "nix",
    "nohup",
    "oc",
    "pipenv",
    "pixi",
    "podman",
    "poetry",
    "runuser",
    "setsid",
    "singularity",
    "ssh",
    "stdbuf",
    "su-exec",
    "sudo",
    "taskset",
    "timeout",
    "tini",
    "unbuffer",
    "uv",
    "xargs",
    "xvfb-run",
];

/// Where the shell a command runs takes its script from.
#[derive(Debug)]
pub(crate) enum ShellInput<'w> {
    /// The word after `-c`.
    String(&'w RawWord),
    /// Standard input: no script file operand, or `-s`.
    Stdin,
}

/// What a command that starts a shell gives it to run; indices are into the
/// words given to [`shell_run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellRun {
    /// `-c WORD`: the word at this index is the script.
    String(usize),
    /// The script is read from standard input (`sh`, `sh -s -- args`).
    Stdin,
    /// The script file at this index; the words after it are its arguments.
    File(usize),
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_shell(value: &str) -> bool {
    SHELLS.contains(&basename(value))
}

/// If these words (static values, `None` where computed) start a shell,
/// where its script comes from. The shell may follow a wrapper such as
/// `sudo`, `env` or `docker run IMAGE`.
pub fn shell_run(words: &[Option<&str>]) -> Option<ShellRun> {
    let first = (*words.first()?)?;
    // `su USER -c STRING`, `runuser -l u --command STRING` and `nix-shell
    // --run STRING` run a string with the user's (or nix's) shell.
    if matches!(basename(first), "su" | "runuser" | "nix-shell") {
        let names: &[&str] = if basename(first) == "nix-shell" {
            &["--run", "--command"]
        } else {
            &["-c", "--command"]
        };
        let at = words
            .iter()
            .position(|w| w.is_some_and(|w| names.contains(&w)))?;
        return (at + 1 < words.len()).then_some(ShellRun::String(at + 1));
    }
    let shell = if is_shell(first) {
        0
    } else if WRAPPERS.contains(&basename(first)) {
        words.iter().position(|w| w.is_some_and(is_shell))?
    } else {
        return None;
    };
    let mut i = shell + 1;
    let mut runs_string = false;
    let mut reads_stdin = false;
    let operand = loop {
        let Some(word) = words.get(i) else {
            break None;
        };
        let Some(text) = word else {
            break Some(i);
        };
        match *text {
            "--" => break (i + 1 < words.len()).then_some(i + 1),
            "-" => {
                reads_stdin = true;
                break None;
            }
            _ => {}
        }
        if let Some(long) = text.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                i += 1;
            }
            i += 1;
            continue;
        }
        let Some(flags) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) else {
            break Some(i);
        };
        runs_string |= flags.contains('c');
        reads_stdin |= flags.contains('s');
        // `-o pipefail`, `-O extglob`: the option name is not an operand.
        if flags.contains('o') || flags.contains('O') {
            i += 1;
        }
        i += 1;
    };
    if runs_string {
        return operand.map(ShellRun::String);
    }
    // With `-s` the operands are the arguments of a script read from stdin.
    if reads_stdin || operand.is_none() {
        return Some(ShellRun::Stdin);
    }
    operand.map(ShellRun::File)
}

/// The script source of the shell `words` run, if they run one and it is
/// not a script file.
pub(crate) fn shell_input(words: &[RawWord]) -> Option<ShellInput<'_>> {
    let values: Vec<Option<&str>> = words.iter().map(|w| w.word.value.as_deref()).collect();
    match shell_run(&values)? {
        ShellRun::String(i) => words.get(i).map(ShellInput::String),
        ShellRun::Stdin => Some(ShellInput::Stdin),
        ShellRun::File(_) => None,
    }
}
