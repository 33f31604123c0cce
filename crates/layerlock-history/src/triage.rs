//! placeholder
use std::path::PathBuf;
/// One report file and the job it belongs to.
#[derive(Debug, Clone)]
pub struct ReportInput {
    pub job: Option<String>,
    pub path: PathBuf,
    /// How the path is shown.
    pub shown: String,
}

/// When the jobs went dark.
#[derive(Debug, Clone)]
pub enum DarkSince {
    /// A revision on the main line (the commit that disabled the job).
    Rev(String),
    /// A date; commits on the main line after it.
    Date(String),
    /// For each job (its key), the last commit that removed its step.
    FromBlocks { paths: Vec<String> },
}
