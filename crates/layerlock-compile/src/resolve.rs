//! One target of a layer resolved through its source, under the cooldown
//! (and told against the resolution without it), and a failure worded
//! for the user.

use std::sync::Arc;

use layerlock_index::FetchStats;
use layerlock_resolve::{HeldBack, Resolution, ResolveError, UnderCooldown};

use crate::CompileError;
use crate::notes::Note;
use crate::plan::LayerPlan;
use crate::prepare::{Keep, Prepared, prepare};
use crate::source::{Connect, LayerSource, index_choice};

/// A target resolved, with the source that read it (its pages stay at
/// hand for what the caller asks next, such as upload times).
pub struct Resolved {
    pub prepared: Prepared,
    pub resolution: Resolution,
    pub stats: FetchStats,
    pub source: Discarded<Arc<dyn LayerSource>>,
    /// What the resolution had to say: its warnings, and what the
    /// cooldown held back.
    pub notes: Vec<Note>,
}

/// A target that could not be resolved, and what its run fetched.
#[derive(Debug)]
pub struct Unresolved {
    pub error: CompileError,
    pub fetched: Option<Box<FetchStats>>,
}

impl From<CompileError> for Unresolved {
    fn from(error: CompileError) -> Self {
        Self {
            error,
            fetched: None,
        }
    }
}

/// Resolve one target of a layer (of no lock to keep but `keep`'s) on a
/// source of its own.
pub fn resolve(
    layer: &LayerPlan,
    cwd: &std::path::Path,
    connect: &dyn Connect,
    keep: &Keep,
) -> Result<Resolved, Unresolved> {
    let prepared = prepare(layer, keep)?;
    let source = connect.connect(&index_choice(layer, &prepared, cwd))?;
    resolve_on(layer, prepared, source)
}

/// Resolve `prepared` through `source` (which other targets of the layer
/// may share: its pages and metadata are read once for all). Under a
/// cooldown, the layer is also resolved without it, to say what was held
/// back (or that the cooldown made it unsolvable).
pub fn resolve_on(
    layer: &LayerPlan,
    prepared: Prepared,
    source: Arc<dyn LayerSource>,
) -> Result<Resolved, Unresolved> {
    let memo = Arc::default();
    let aimed = source.aim(&Arc::new(prepared.request.clone()), &memo);
    let UnderCooldown { outcome, held } =
        layerlock_resolve::resolve_under_cooldown(&*source, &prepared.request, &memo);
    // Resolved: no more guessing for it.
    drop(aimed);
    let resolution = match outcome {
        Ok(r) => r,
        Err(err) => {
            // What the failed run fetched is kept for --stats.
            let fetched = Some(Box::new(source.stats()));
            discard(source);
            return Err(Unresolved {
                error: failure(layer, &prepared, err, held.as_deref()),
                fetched,
            });
        }
    };
    let mut notes: Vec<Note> = resolution
        .warnings
        .iter()
        .map(|w| Note::Warning(w.clone()))
        .collect();
    if let (Some(settings), Some(held)) = (&layer.cooldown, held)
        && !held.is_empty()
    {
        notes.push(Note::HeldBack {
            min_age: settings.min_age_text.clone(),
            held,
        });
    }
    let stats = source.stats();
    Ok(Resolved {
        prepared,
        resolution,
        stats,
        source: Discarded(Some(source)),
        notes,
    })
}

/// A value dropped on a thread of its own: freeing the pages and metadata
/// a resolution read takes milliseconds nobody needs to wait for.
pub struct Discarded<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> std::ops::Deref for Discarded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0.as_ref().expect("present until dropped")
    }
}

impl<T: Send + 'static> Drop for Discarded<T> {
    fn drop(&mut self) {
        if let Some(value) = self.0.take() {
            discard(value);
        }
    }
}

/// Drop `value` on a thread of its own.
fn discard<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("discard".to_string())
        .spawn(move || drop(value));
}

/// A moment as reports show it: `2026-11-09 22:49 UTC`.
pub fn moment(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// `when`, or that it is not known.
pub(crate) fn eligible_at(when: Option<jiff::Timestamp>) -> String {
    when.map_or("an unknown time".to_string(), moment)
}

/// A resolution that failed, worded for the user: the conflict (or that
/// the cooldown alone causes it, with when each held version becomes
/// eligible), or the index's failure, with what to do.
pub(crate) fn failure(
    layer: &LayerPlan,
    prepared: &Prepared,
    err: ResolveError,
    held: Option<&[HeldBack]>,
) -> CompileError {
    match err {
        ResolveError::NoSolution { unread, .. } if !unread.is_empty() => {
            crate::walk_back::unread_refusal(&unread, &prepared.request.target.describe())
        }
        ResolveError::NoSolution {
            report,
            mut hints,
            causes,
            ..
        } => {
            let mut message = format!(
                "no layer for {} satisfies the requirements with the base fixed:\n{}",
                prepared.request.target.describe(),
                indent(&report)
            );
            if let (Some(cooldown), Some(settings), Some(held)) =
                (&prepared.request.cooldown, &layer.cooldown, held)
            {
                message = format!(
                    "the cooldown ({} before {}) makes this layer unsolvable:\n{}",
                    settings.min_age_text,
                    cooldown.now.strftime("%Y-%m-%d %H:%M UTC"),
                    indent(&report)
                );
                for h in held {
                    hints.push(format!(
                        "without the cooldown {}=={} would be used; it becomes eligible at {}",
                        h.name,
                        h.skipped,
                        eligible_at(h.eligible)
                    ));
                }
                hints.push("wait, or exempt a package with --min-age-exempt PKG (in the config: [cooldown] exempt, with a reason)".to_string());
            }
            CompileError::Unsolvable {
                message,
                hints,
                causes,
            }
        }
        err @ ResolveError::Source { .. } => {
            let hints = source_hints(&err);
            CompileError::Hinted {
                message: chain_text(&err),
                hints,
            }
        }
    }
}

/// What to do about an index that failed a resolution.
fn source_hints(err: &ResolveError) -> Vec<String> {
    let mut hints = Vec::new();
    let ResolveError::Source { source, .. } = err else {
        return hints;
    };
    match source {
        // Only for what the cache lacks: a damaged entry says itself
        // what to do, and a run online would be told the same.
        layerlock_dist::SourceError::Offline { .. } => {
            hints.push("run once without --offline to fill the cache".to_string());
        }
        layerlock_dist::SourceError::Network { url, .. } => {
            let host = url
                .split("://")
                .nth(1)
                .and_then(|rest| rest.split('/').next())
                .map(|authority| authority.rsplit('@').next().unwrap_or(authority))
                .unwrap_or("the index");
            hints.push(format!(
                "the index at {host} could not be reached: check the URL (--index-url, or index-url in the config) and the network or proxy (HTTPS_PROXY); a run with --offline uses only what the cache holds"
            ));
        }
        layerlock_dist::SourceError::Status {
            status: 401 | 403, ..
        } => {
            hints.push("the index wants credentials: put them in the index URL (https://user:token@host/simple/) or in ~/.netrc (or $NETRC)".to_string());
        }
        _ => {}
    }
    hints
}

/// `err` and every cause under it, on one line: `outer: inner: deepest`.
pub(crate) fn chain_text(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
