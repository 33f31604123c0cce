//! One file per subcommand.

pub mod audit;
pub mod blocks;
pub mod compile;
pub mod cooldown;
pub mod covers;
pub mod docs;
pub mod install;
pub mod steps;
pub mod tether;
pub mod triage;
pub mod verify;
