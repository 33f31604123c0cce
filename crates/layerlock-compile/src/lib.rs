//! Compiling a layer: a typed [`LayerPlan`] in, hash-pinned locks and what
//! is worth telling out, with no flag, printer or terminal in between.
//!
//! [`compile_layer`] reads the layer's inputs and bases for each target
//! ([`prepare`]), finds each target's package source through a
//! [`Connect`] (the index client, or a test's in-memory source), resolves
//! the targets together and asks them to share versions, and returns the
//! locks to write ([`Compiled`]) with its [`Note`]s, or why it could not
//! ([`Failed`]). The binary prints; tests call it in-process.

mod cfg;
mod checks;
mod clash;
mod closure;
mod command;
mod cooldown;
mod error;
mod files;
mod layer;
mod notes;
mod plan;
mod prepare;
mod resolve;
mod source;
mod sources;
mod stats;
mod targets;
mod walk_back;

pub use cfg::{
    CooldownConfig, CooldownFlagText, ExemptConfig, HashesKey, LAYER_KEYS, LayerConfig, OneOrMany,
    PrereleaseKey, TARGET_KEYS, TargetBases, TargetConfig, with_defaults,
};
pub use checks::{check_outputs, check_split, check_targets};
pub use clash::{Clash, FileReport, check_files, clash_hints, clash_lines};
pub use closure::{ClosureReport, OpenPin, check_closure};
pub use command::{Recorded, layer_command, recorded_flags, regenerate_command};
pub use cooldown::{
    AlreadyThere, CooldownError, CooldownInput, CooldownOutcome, CooldownReport, CooldownRow,
    LayerOutput, UploadSource, already_there, check_cooldown, introduced_files, take_from_source,
};
pub use error::CompileError;
pub use files::{FilesError, PinFiles, WheelIndex, WheelLookup, find_overwrites, wheel_files};
pub use layer::{CompileOptions, Compiled, Failed, Written, compile_layer, freeze_tools_pinned};
pub use notes::Note;
pub use plan::{
    CooldownPlan, IndexPlan, LayerPlan, TargetPlan, UserPath, fill_output, interpreter_path,
    shown_from, venv_python,
};
pub use prepare::{BaseFiles, Keep, Prepared, prepare, prepare_with};
pub use resolve::{Discarded, Resolved, Unresolved, moment, resolve, resolve_on};
pub use source::{
    Clients, Connect, DEFAULT_INDEX, IndexChoice, LayerSource, Only, Plain, index_choice,
};
pub use sources::{FixedSourceError, SourceProblem};
pub use stats::{layer_stats, stats_report};
pub use targets::SHARING_ROUNDS;
pub use walk_back::{FRESH_DAYS, MAX_SKIPPED};
