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

    pub(crate) fn hinted(message: String, hint: &str) -> Self {
        Self::Hinted {
            message,
            hints: vec![hint.to_string()],
        }
    }
}
