//! Checks against git history: restored CI steps and failure triage.
//!
//! This crate reads what a failed CI job left behind, without running any of it:
//! - [`junit`]: JUnit XML and Buildkite Test Engine JSON reports, as test cases
//!   with outcomes and the line of each case in its report.

pub mod junit;
