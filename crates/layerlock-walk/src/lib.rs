//! The walker under every CI check: every read of a CI file and of the
//! scripts, recipes and Dockerfiles it leads to, confined to the root, and
//! one model of how CI commands run other commands. Checks (audit, tether,
//! steps) see commands through [`Visitor`] and never read CI files
//! themselves. It judges no command: what a command means is the checks'.

mod arrays;
mod branches;
mod census;
mod frame;
mod loops;
mod path_map;
mod paths;
pub mod pipelines;
mod place;
mod read;
mod recipes;
mod site;
mod systems;
mod via;
mod walker;
mod wrappers;

pub use census::{Hit, Origin, census};
pub use path_map::{PathMap, PathMapError};
pub use paths::normalize;
pub use read::{MAX_FILE_BYTES, Refused, SourceLines, read_bounded};
pub use site::{Arg, CommandSite, Location, Reach, RequirementFiles};
pub use systems::{system_of, unread_ci_files};
pub use via::Via;
pub use walker::{FileError, ScanOptions, Visitor, Walked, walk};
pub use wrappers::{
    Container, RUN_VALUE_OPTIONS, is_python, program, project_runner, run_command_start,
    strip_to_runner, strip_wrappers, unwrap,
};
