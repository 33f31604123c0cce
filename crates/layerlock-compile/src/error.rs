//! Why a layer could not be compiled, worded for the user: what went wrong,
//! where, and what to do (`hints`).

use layerlock_resolve::Cause;

/// A compile that could not be done.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// A problem with what to do about it.
    #[error("{message}")]
    Hinted { message: String, hints: Vec<String> },
    /// No choice of versions satisfies the layer over its base, with the
    /// causes a command can act on (`covers` tells "no wheel for the
    /// target" from a base conflict).
    #[error("{message}")]
    Unsolvable {
        message: String,
        hints: Vec<String>,
        causes: Vec<Cause>,
    },
    /// The layer writes over files of the image or of itself.
    #[error("{}", clash_message(target, clashes))]
    Clashes {
        target: String,
        clashes: Vec<crate::clash::Clash>,
    },
    /// `--require-checked`, and some files could not be listed.
    #[error("{}", unchecked_message(target, unchecked))]
    Unchecked {
        target: String,
        unchecked: Vec<String>,
    },
    /// Input that cannot be used, named by file and line.
    #[error("{0}")]
    Input(String),
    /// A requirement by URL whose source cannot be read.
    #[error(transparent)]
    Source(#[from] crate::sources::FixedSourceError),
    /// `error`, read or done as `context` says.
    #[error("{context}")]
    Context {
        context: String,
        #[source]
        error: Box<CompileError>,
    },
    #[error(transparent)]
    Lock(#[from] layerlock_lock::LockError),
    #[error(transparent)]
    Base(#[from] layerlock_lock::BaseError),
    #[error(transparent)]
    Merge(#[from] layerlock_lock::MergeError),
    #[error(transparent)]
    Target(#[from] layerlock_dist::TargetError),
    #[error(transparent)]
    Unhashed(#[from] layerlock_resolve::UnhashedFile),
    /// Something outside the layer failed (an interpreter, the index
    /// client), with what was being done.
    #[error("{context}")]
    Outside {
        context: String,
        #[source]
        error: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl CompileError {
    /// The hints that say what to do, if any.
    pub fn hints(&self) -> &[String] {
        match self {
            Self::Hinted { hints, .. } | Self::Unsolvable { hints, .. } => hints,
            Self::Context { error, .. } => error.hints(),
            _ => &[],
        }
    }

    /// This error, read or done as `context` says.
    pub fn context(self, context: impl Into<String>) -> Self {
        Self::Context {
            context: context.into(),
            error: Box::new(self),
        }
    }

    /// `error` from outside the layer, while doing `context`.
    pub fn outside(
        context: impl Into<String>,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Outside {
            context: context.into(),
            error: Box::new(error),
        }
    }

    /// The ways out, for the errors that have them.
    pub fn ways_out(&self) -> Vec<String> {
        match self {
            Self::Clashes { clashes, .. } => crate::clash::clash_hints(clashes),
            Self::Unchecked { .. } => vec![
                "give the index the wheels are on (--index-url, --extra-index-url, --find-links), or drop --require-checked to have them named in the lock instead".to_string(),
            ],
            Self::Context { error, .. } => error.ways_out(),
            other => other.hints().to_vec(),
        }
    }

    pub(crate) fn hinted(message: String, hint: &str) -> Self {
        Self::Hinted {
            message,
            hints: vec![hint.to_string()],
        }
    }
}

fn clash_message(target: &str, clashes: &[crate::clash::Clash]) -> String {
    let mut text = format!(
        "the layer for {target} cannot be installed without writing over files it does not own:"
    );
    for line in crate::clash::clash_lines(clashes) {
        text.push_str("\n  ");
        text.push_str(&line);
    }
    text
}

fn unchecked_message(target: &str, unchecked: &[String]) -> String {
    let mut text = format!(
        "--require-checked: the files of {} distribution{} for {target} cannot be listed:",
        unchecked.len(),
        if unchecked.len() == 1 { "" } else { "s" }
    );
    for item in unchecked {
        text.push_str("\n  ");
        text.push_str(item);
    }
    text
}
