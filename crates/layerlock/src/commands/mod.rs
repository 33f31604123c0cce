//! One file per subcommand.

pub mod compile;
pub mod covers;
