//! Whether a package may be locked older than newer releases the resolver
//! skipped only because their dependencies are dynamic (sdists that only a
//! build could read). A single release uploaded in the last
//! [`FRESH_DAYS`] days is the usual gap between an sdist and its wheels,
//! and is told; more, or an older one, would lock a release from long ago
//! without a word (`dkimpy` 0.7.1 of 2018 for 1.1.8), and is refused
//! unless `--allow-walk-back` names the package.

use jiff::{SignedDuration, Timestamp};
use layerlock_resolve::{OnlyBinary, Unread, WalkedBack};

use crate::error::CompileError;
use crate::notes::Note;
use crate::resolve::Resolved;

/// How many releases a fall-back may skip and pass with a note.
pub const MAX_SKIPPED: usize = 1;

/// How old (in days, at `--exclude-newer`, else now) the skipped release
/// may be and still pass: about the time projects take to publish wheels
/// after the sdist.
pub const FRESH_DAYS: i64 = 14;

/// When the resolver may stop downloading a package's older sdists: a
/// fall-back past [`MAX_SKIPPED`] releases, or past one older than
/// [`FRESH_DAYS`] at the lock's moment, is refused anyway.
pub(crate) fn reads(layer: &crate::plan::LayerPlan) -> layerlock_resolve::DynamicReads {
    let at = layer
        .exclude_newer
        .or(layer.cooldown.as_ref().map(|c| c.policy.for_resolver().now))
        .unwrap_or_else(Timestamp::now);
    layerlock_resolve::DynamicReads {
        limit: MAX_SKIPPED + 1,
        stale_before: at
            .checked_sub(SignedDuration::from_hours(FRESH_DAYS * 24))
            .ok(),
        allow: layer.allow_walk_back.clone(),
    }
}

/// What `r`'s walk-backs say: the notes and the lock's header records,
/// or the refusal of those past the threshold that `allow` does not name.
pub(crate) fn judge(
    r: &Resolved,
    allow: &OnlyBinary,
    several: bool,
) -> Result<(Vec<Note>, Vec<String>), CompileError> {
    let request = &r.prepared.request;
    let walked: Vec<&WalkedBack> = r.resolution.walked_back.values().collect();
    if walked.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    // The lock's moment: `--exclude-newer` makes it the same tomorrow.
    let at = request
        .exclude_newer
        .or(request.cooldown.as_ref().map(|c| c.now))
        .unwrap_or_else(Timestamp::now);
    let target = request.target.describe();
    let (mut lines, mut records, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    for w in walked {
        let allowed = allow.covers(&w.name);
        if !allowed && !within(w, at) {
            refused.push(w);
            continue;
        }
        lines.push(told(w, allowed));
        if allowed {
            records.push(record(w));
        }
    }
    if !refused.is_empty() {
        return Err(refusal(&refused, &target));
    }
    let notes = vec![Note::WalkedBack {
        target: several.then_some(target),
        lines,
    }];
    Ok((notes, records))
}

/// At most [`MAX_SKIPPED`] releases skipped, the newest uploaded no more
/// than [`FRESH_DAYS`] before `at`. An unknown upload time is not fresh.
fn within(w: &WalkedBack, at: Timestamp) -> bool {
    let fresh = SignedDuration::from_hours(FRESH_DAYS * 24);
    w.skipped.len() <= MAX_SKIPPED
        && w.newest()
            .and_then(|s| s.uploaded)
            .is_some_and(|t| at.duration_since(t) <= fresh)
}

fn day(t: Option<Timestamp>) -> String {
    t.map_or_else(
        || "upload date unknown".to_string(),
        |t| format!("uploaded {}", t.strftime("%Y-%m-%d")),
    )
}

fn releases(n: usize) -> String {
    if n == 1 {
        "1 newer release is an sdist".to_string()
    } else {
        format!("{n} newer releases are sdists")
    }
}

/// The note: what was taken, past what.
fn told(w: &WalkedBack, allowed: bool) -> String {
    let newest = w
        .newest()
        .map(|s| s.version.to_string())
        .unwrap_or_default();
    format!(
        "{}=={} ({}) taken: {} with dynamic metadata, newest {newest}{}",
        w.name,
        w.chosen,
        day(w.chosen_uploaded),
        releases(w.skipped.len()),
        if allowed { " (--allow-walk-back)" } else { "" }
    )
}

/// The header record: `name==old (N newer releases …, newest NEWEST)`.
fn record(w: &WalkedBack) -> String {
    let newest = w
        .newest()
        .map(|s| s.version.to_string())
        .unwrap_or_default();
    format!(
        "{}=={} ({} with dynamic metadata, newest {newest})",
        w.name,
        w.chosen,
        releases(w.skipped.len())
    )
}

/// Refused: each package, its newest release and why it cannot be read,
/// what it would fall back to and when that was uploaded; the ways out.
fn refusal(refused: &[&WalkedBack], target: &str) -> CompileError {
    let mut message = format!(
        "{} for {target} would be locked far behind {}: the newer releases only say what they need by building, and layerlock never builds:",
        names(refused),
        if refused.len() == 1 {
            "its newest release"
        } else {
            "their newest releases"
        }
    );
    for w in refused {
        let Some(newest) = w.newest() else { continue };
        let unread = match w.not_read {
            0 => String::new(),
            n => format!(" and {n} older sdist-only not downloaded"),
        };
        message.push_str(&format!(
            "\n  {}: {} newer release{} skipped{unread}, the newest {} ({}): {}; it would fall back to {} ({})",
            w.name,
            w.skipped.len(),
            if w.skipped.len() == 1 { "" } else { "s" },
            newest.version,
            day(newest.uploaded),
            newest.why,
            w.chosen,
            day(w.chosen_uploaded),
        ));
    }
    let first = refused[0];
    let newest = first
        .newest()
        .map(|s| s.version.to_string())
        .unwrap_or_default();
    let list = refused
        .iter()
        .map(|w| w.name.to_string())
        .collect::<Vec<_>>();
    let hints = vec![
        format!(
            "pin it if the old release is meant (`{}=={}` in the requirements or a constraint)",
            first.name, first.chosen
        ),
        format!(
            "give a wheel of {}=={newest} for this target with --find-links DIR",
            first.name
        ),
        format!(
            "--only-binary {} takes only releases with a wheel, on purpose",
            list.join(",")
        ),
        format!(
            "--allow-walk-back {} (or `allow-walk-back = [{}]` in the layer's config) takes the fall-back and records it in the lock",
            list.join(","),
            list.iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ];
    CompileError::Hinted { message, hints }
}

/// Refused before a fall-back was found: two releases needed a build, and
/// the older sdists were not downloaded, since falling back past two would
/// be refused anyway. The same ways out, `--allow-walk-back` reading on.
pub(crate) fn unread_refusal(unread: &[Unread], target: &str) -> CompileError {
    let list: Vec<String> = unread.iter().map(|u| u.name.to_string()).collect();
    let mut message = format!(
        "{} for {target} cannot be locked at a release layerlock can read: the newest releases only say what they need by building, and layerlock never builds:",
        list.join(", ")
    );
    for u in unread {
        let Some(newest) = u.skipped.first() else {
            continue;
        };
        let shown: Vec<String> = u.skipped.iter().map(|s| s.version.to_string()).collect();
        message.push_str(&format!(
            "\n  {}: {} need{} a build, the newest {} ({}): {}; {} older sdist-only release{} not downloaded, since a fall-back past {} is refused anyway",
            u.name,
            shown.join(" and "),
            if shown.len() == 1 { "s" } else { "" },
            newest.version,
            day(newest.uploaded),
            newest.why,
            u.not_read,
            if u.not_read == 1 { " was" } else { "s were" },
            shown.join(" and "),
        ));
    }
    let quoted: Vec<String> = list.iter().map(|n| format!("\"{n}\"")).collect();
    let hints = vec![
        format!(
            "pin a release of {} that has a wheel for this target, if an old one is meant",
            list[0]
        ),
        format!(
            "give a wheel of {} for this target with --find-links DIR",
            list[0]
        ),
        format!(
            "--allow-walk-back {} (or `allow-walk-back = [{}]` in the layer's config) reads the older releases and takes the newest one it can read, recorded in the lock",
            list.join(","),
            quoted.join(", ")
        ),
    ];
    CompileError::Hinted { message, hints }
}

fn names(refused: &[&WalkedBack]) -> String {
    refused
        .iter()
        .map(|w| w.name.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
