//! One file per subcommand.

pub mod compile;
pub mod covers;
pub mod install;
pub mod verify;
