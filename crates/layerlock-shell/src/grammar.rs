//! Which shell reads a text decides part of its grammar. Bash reads `((…))`
//! as an arithmetic command; a POSIX shell such as dash (`/bin/sh` on
//! Debian and Ubuntu, and so in most images' `RUN` lines) reads it as two
//! nested subshells, so `((pip install x))` installs there. Bash keeps its
//! reading in `set -o posix` mode.

/// The grammar a text is read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Grammar {
    #[default]
    Bash,
    Posix,
    /// Windows `cmd.exe` batch text, read as the POSIX text it is
    /// rewritten to line for line (`cmd.rs`).
    Cmd,
    /// PowerShell text: its command lines, read as POSIX text (`pwsh.rs`).
    Pwsh,
}

impl Grammar {
    /// The grammar of a shell program named by path or name (`/bin/sh`,
    /// `dash`, `bash`); `None` when it is no shell this reader knows.
    pub fn of_program(program: &str) -> Option<Self> {
        let name = program.rsplit('/').next().unwrap_or(program);
        match name {
            "sh" | "dash" | "ash" | "posh" => Some(Self::Posix),
            "bash" | "zsh" | "ksh" | "mksh" => Some(Self::Bash),
            "cmd" | "cmd.exe" => Some(Self::Cmd),
            "pwsh" | "powershell" | "pwsh.exe" | "powershell.exe" => Some(Self::Pwsh),
            _ => None,
        }
    }

    /// The grammar a script's shebang line names (`#!/bin/sh`,
    /// `#!/usr/bin/env bash`, `#!/usr/bin/env -S bash -e`).
    pub fn of_shebang(text: &str) -> Option<Self> {
        let line = text.strip_prefix("#!")?.lines().next()?;
        let mut words = line.split_whitespace();
        let first = words.next()?;
        if first.rsplit('/').next() == Some("env") {
            return words
                .find(|w| !w.starts_with('-'))
                .and_then(Self::of_program);
        }
        Self::of_program(first)
    }
}

#[cfg(test)]
mod tests {
    use super::Grammar;

    #[test]
    fn programs_and_shebangs_name_their_grammar() {
        assert_eq!(Grammar::of_program("/bin/sh"), Some(Grammar::Posix));
        assert_eq!(Grammar::of_program("bash"), Some(Grammar::Bash));
        assert_eq!(Grammar::of_program("python3"), None);
        assert_eq!(Grammar::of_shebang("#!/bin/sh -e\nx"), Some(Grammar::Posix));
        assert_eq!(
            Grammar::of_shebang("#!/usr/bin/env -S bash -eu\n"),
            Some(Grammar::Bash)
        );
        assert_eq!(Grammar::of_shebang("echo hi"), None);
    }

    #[test]
    fn double_parentheses_are_commands_to_a_posix_shell_only() {
        let text = "((pip install x))\n";
        let posix = crate::parse_as(text, Grammar::Posix).unwrap();
        assert_eq!(posix.commands.len(), 1);
        assert_eq!(posix.commands[0].text, "pip install x");
        assert_eq!(posix.commands[0].column, 3);
        assert!(crate::parse(text).unwrap().commands.is_empty());
        // `$((…))` is arithmetic to both.
        let expansion = crate::parse_as("echo $((1 + 2))\n", Grammar::Posix).unwrap();
        assert_eq!(expansion.commands.len(), 1);
    }

    #[test]
    fn a_shell_string_is_read_with_the_grammar_of_the_shell_it_is_given_to() {
        let text = "sh -c '((pip install a))'\nbash -c '((pip install b))'\n";
        let script = crate::parse(text).unwrap();
        let texts: Vec<&str> = script.commands.iter().map(|c| c.text.as_str()).collect();
        assert!(texts.contains(&"pip install a"), "{texts:?}");
        assert!(!texts.contains(&"pip install b"), "{texts:?}");
    }
}
