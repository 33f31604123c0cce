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

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_shell(value: &str) -> bool {
    SHELLS.contains(&basename(value))
}

fn value(word: &RawWord) -> Option<&str> {
    word.word.value.as_deref()
}

/// The script source of the shell `words` run, if they run one and it is
/// not a script file.
pub(crate) fn shell_input(words: &[RawWord]) -> Option<ShellInput<'_>> {
    let first = value(words.first()?)?;
    let shell = if is_shell(first) {
        0
    } else if WRAPPERS.contains(&basename(first)) {
        words.iter().position(|w| value(w).is_some_and(is_shell))?
    } else {
        return None;
    };
    let mut rest = words.iter().skip(shell + 1);
    let mut runs_string = false;
    let mut reads_stdin = false;
    let operand = loop {
        let Some(word) = rest.next() else {
            break None;
        };
        let Some(text) = value(word) else {
            break Some(word);
        };
        match text {
            "--" => break rest.next(),
            "-" => {
                reads_stdin = true;
                break None;
            }
            _ => {}
        }
        if let Some(long) = text.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                rest.next();
            }
            continue;
        }
        let Some(flags) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) else {
            break Some(word);
        };
        runs_string |= flags.contains('c');
        reads_stdin |= flags.contains('s');
        // `-o pipefail`, `-O extglob`: the option name is not an operand.
        if flags.contains('o') || flags.contains('O') {
            rest.next();
        }
    };
    if runs_string {
        return operand.map(ShellInput::String);
    }
    (reads_stdin || operand.is_none()).then_some(ShellInput::Stdin)
}
