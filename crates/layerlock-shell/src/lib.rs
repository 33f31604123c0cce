//! A tolerant, pure (no I/O) reader of POSIX/bash shell text that finds every
//! simple command in it — including those inside command substitutions,
//! subshells, `bash -c` strings and heredocs fed to a shell — so callers can
//! spot `pip install` and friends in CI scripts, workflow `run:` blocks and
//! Dockerfile `RUN` lines. It is not an interpreter: it reports argv words as
//! written, with their static values where the text alone determines them.

mod ansi_c;
mod assignment;
mod cmd;
mod command;
mod compound;
mod cursor;
mod error;
mod expansion;
mod grammar;
mod heredoc;
mod parser;
mod pwsh;
mod quote;
mod redirect;
mod script;
mod shell_invocation;
mod simple;
mod source;
mod word;
mod word_builder;
mod word_reader;

pub use command::{Command, Context, Function, If, Loop, Script};
pub use error::ShellError;
pub use grammar::Grammar;
pub use quote::quote;
pub use script::{parse, parse_as};
pub use shell_invocation::{ShellRun, shell_run};
pub use word::Word;
