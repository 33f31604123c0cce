//! The audit: find job-time package installs in CI configuration. Rules,
//! findings, the scanner that follows scripts, policy (allowlist, inline
//! ignores) and the report formats.

mod finding;
mod install;
mod paths;
pub mod pipelines;
mod policy;
mod pytest;
mod report;
mod rules;
mod scan;
mod steps;
mod tether;
mod wrappers;

pub use finding::{Finding, Location, Severity};
pub use install::{Arg, Class, Install, RequirementFiles, classify};
pub use policy::{AllowEntry, Excused, PolicyError, Sorted, Stale, apply, parse_allowlist};
pub use pytest::{Selection, fnmatch, selection};
pub use report::{github, json, rule_list, sarif, text};
pub use rules::CommandSite;
pub use rules::{Rule, registry};
pub use scan::{FileError, ScanOptions, ScanResult, Visitor, scan, walk};
pub use steps::{StepInfo, StepProblem, StepsReport, check_steps};
pub use tether::{
    StaleEntry, StepRun, TetherOptions, TetherReport, check as check_tether,
    collect as collect_runs, diagnose, explain, inventory, parse_tether_allowlist,
};
pub use wrappers::{Container, strip_wrappers, unwrap};
