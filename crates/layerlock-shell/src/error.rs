//! The error `parse` returns for text that is not valid shell.

/// A syntax error at a 1-based line and column of the parsed text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ShellError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}
