//! The walker under every CI check: all file reads (CI files, the scripts
//! and Dockerfiles they lead to, `git ls-files`), confined to the root, and
//! one model of how CI commands run other commands. Checks (audit, tether,
//! steps) see commands through [`Visitor`] and never read files themselves.

mod arrays;
mod branches;
mod frame;
mod loops;
mod path_map;
mod paths;
pub mod pipelines;
mod place;
mod read;
mod recipes;
mod site;
mod via;
mod walker;
mod wrappers;

pub use path_map::{PathMap, PathMapError};
pub use paths::normalize;
pub use read::{MAX_FILE_BYTES, Refused, read_bounded};
pub use site::{Arg, CommandSite, Location, Reach, RequirementFiles};
pub use via::Via;
pub use walker::{FileError, ScanOptions, Visitor, Walked, walk};
pub use wrappers::{
    Container, RUN_VALUE_OPTIONS, is_python, program, project_runner, run_command_start,
    strip_to_runner, strip_wrappers, unwrap,
};
