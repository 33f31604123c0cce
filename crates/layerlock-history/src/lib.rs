//! Checks against git history: restored CI steps and failure triage.
//!
//! This crate reads what a failed CI job left behind and what the failing
//! tests are made of, without running any of it:
//! - [`junit`]: JUnit XML and Buildkite Test Engine JSON reports, as test cases
//!   with outcomes and the line of each case in its report;
//! - [`pyimports`]: the static imports of Python files, and the in-repository
//!   files a test file reaches through them;
//! - [`xfail`]: the `xfail` marker that applies to one pytest node.
//!
//! Only [`pyimports::closure`] touches the file system; everything else works
//! on text the caller has read (and bounded).

pub mod junit;
mod lexer;
pub mod pyimports;
pub mod xfail;
