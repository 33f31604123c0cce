//! What changed between two locks of a layer: packages added, removed,
//! upgraded and downgraded, what asks for each and, where the caller knows
//! them, why each moved and when each version was uploaded. Rendered as
//! text, JSON, or Markdown to paste into a pull request.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use jiff::Timestamp;
use uv_normalize::PackageName;
use uv_pep440::Version;

use crate::model::{Lock, LockTarget, LockedPackage};
use crate::targets::target_values;

/// How one package moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChangeKind {
    Added,
    Removed,
    Upgraded,
    Downgraded,
    /// The same version from another source: another git commit, or a
    /// directory instead of an index release.
    SourceChanged,
}

impl ChangeKind {
    /// The stable name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Upgraded => "upgraded",
            Self::Downgraded => "downgraded",
            Self::SourceChanged => "source-changed",
        }
    }
}

/// One package that moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub name: PackageName,
    /// The package's marker when it carries one (a lock for several
    /// environments lists a package once a marker).
    pub marker: Option<String>,
    pub kind: ChangeKind,
    pub old: Option<Version>,
    pub new: Option<Version>,
    /// What asks for it (the new lock's `via`; the old one's when removed).
    pub via: Vec<String>,
    /// Why it moved, when the caller knows (`-P`, a kept pin the inputs no
    /// longer allow, now in the image).
    pub why: Option<String>,
    /// When the old and the new version were uploaded (the earliest file).
    pub old_uploaded: Option<Timestamp>,
    pub new_uploaded: Option<Timestamp>,
    /// Where each side comes from when not from an index (a git URL at
    /// its commit, a directory).
    pub old_source: Option<String>,
    pub new_source: Option<String>,
}

/// Every change between two locks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Changes {
    /// Sorted by name, then marker.
    pub changes: Vec<Change>,
    /// Packages at the same version in both.
    pub kept: usize,
    /// How many packages the image (the bases) pins, when known. A layer
    /// never changes one of their versions: they are fixed facts of its
    /// resolution.
    pub image: Option<usize>,
    /// What the file check saw of the image, when it ran.
    pub files: Option<ImageFiles>,
}

/// The image's distributions as the file check saw them, on every target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageFiles {
    /// Compared file by file with the layer's wheels (on the target that
    /// compared fewest).
    pub compared: usize,
    /// Whose files could not be listed (on the target that listed fewest).
    pub unlisted: usize,
    /// `name==version`: replaced on purpose.
    pub replaced: Vec<String>,
}

type Key = (PackageName, Option<String>);

fn key(p: &LockedPackage) -> Key {
    let marker = p.marker.contents().map(|m| m.to_string());
    (p.name.clone(), marker)
}

/// The earliest upload time among a package's locked files.
pub fn uploaded(p: &LockedPackage) -> Option<Timestamp> {
    p.files.iter().filter_map(|f| f.upload_time).min()
}

/// What changed from `old` to `new`. Between locks of several targets,
/// each target's packages are compared, and a change that happened on some
/// targets only carries the marker that selects them.
pub fn changes(old: &Lock, new: &Lock) -> Changes {
    let mut targets: Vec<LockTarget> = old.header.targets.clone();
    for t in &new.header.targets {
        if !targets.contains(t) {
            targets.push(t.clone());
        }
    }
    // Per target when a lock serves several (and markers tell them apart);
    // one lock of one target against another of another is compared by
    // name, as before: moving a layer to a new Python is no removal.
    let several = old.header.targets.len() > 1 || new.header.targets.len() > 1;
    let values: Option<Vec<[String; 3]>> = targets.iter().map(target_values).collect();
    match values {
        Some(values) if several && crate::check_distinct(&targets).is_ok() => {
            per_target(old, new, &targets, &values)
        }
        _ => by_marker(old, new),
    }
}

/// The packages of `lock` on `target`: those its markers select, when the
/// lock was compiled for the target (or names none); else none.
fn on_target<'a>(lock: &'a Lock, target: &LockTarget) -> BTreeMap<PackageName, &'a LockedPackage> {
    let names = &lock.header.targets;
    if !names.is_empty() && !names.contains(target) {
        return BTreeMap::new();
    }
    let Ok(t) = layerlock_dist::Target::new(&target.python, &target.platform) else {
        return BTreeMap::new();
    };
    lock.packages
        .iter()
        .filter(|p| p.marker.evaluate(t.markers(), &[]))
        .map(|p| (p.name.clone(), p))
        .collect()
}

/// A change without its marker, as targets share it.
type Moved = (
    PackageName,
    ChangeKind,
    Option<Version>,
    Option<Version>,
    Option<String>,
    Option<String>,
);

fn per_target(old: &Lock, new: &Lock, targets: &[LockTarget], values: &[[String; 3]]) -> Changes {
    let mut moved: BTreeMap<Moved, (Vec<bool>, Change)> = BTreeMap::new();
    let mut kept: std::collections::BTreeSet<(PackageName, Version)> = Default::default();
    let mut touched: std::collections::BTreeSet<PackageName> = Default::default();
    for (i, target) in targets.iter().enumerate() {
        let (before, after) = (on_target(old, target), on_target(new, target));
        let mut names: Vec<&PackageName> = before.keys().chain(after.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let (was, is) = (before.get(name).copied(), after.get(name).copied());
            let Some(change) = change(name, None, was, is) else {
                if let Some(p) = is {
                    kept.insert((p.name.clone(), p.version.clone()));
                }
                continue;
            };
            touched.insert(name.clone());
            let key = (
                change.name.clone(),
                change.kind,
                change.old.clone(),
                change.new.clone(),
                change.old_source.clone(),
                change.new_source.clone(),
            );
            let slot = moved
                .entry(key)
                .or_insert_with(|| (vec![false; targets.len()], change));
            slot.0[i] = true;
        }
    }
    let mut out = Changes {
        kept: kept.iter().filter(|(n, _)| !touched.contains(n)).count(),
        ..Changes::default()
    };
    for (_, (on, mut change)) in moved {
        change.marker = crate::marker_for(values, &on)
            .contents()
            .map(|m| m.to_string());
        out.changes.push(change);
    }
    out.changes
        .sort_by(|a, b| (&a.name, &a.marker).cmp(&(&b.name, &b.marker)));
    out
}

/// How one package moved between `was` and `is`, if it did.
fn change(
    name: &PackageName,
    marker: Option<String>,
    was: Option<&LockedPackage>,
    is: Option<&LockedPackage>,
) -> Option<Change> {
    let kind = match (was, is) {
        (None, Some(_)) => ChangeKind::Added,
        (Some(_), None) => ChangeKind::Removed,
        (Some(a), Some(b)) if a.version < b.version => ChangeKind::Upgraded,
        (Some(a), Some(b)) if a.version > b.version => ChangeKind::Downgraded,
        (Some(a), Some(b)) if a.direct != b.direct => ChangeKind::SourceChanged,
        _ => return None,
    };
    Some(Change {
        name: name.clone(),
        marker,
        kind,
        old: was.map(|p| p.version.clone()),
        new: is.map(|p| p.version.clone()),
        via: is.or(was).map(|p| p.via.clone()).unwrap_or_default(),
        why: None,
        old_uploaded: was.and_then(uploaded),
        new_uploaded: is.and_then(uploaded),
        old_source: was.and_then(|p| p.direct.as_ref()).map(|d| d.url()),
        new_source: is.and_then(|p| p.direct.as_ref()).map(|d| d.url()),
    })
}

/// Packages compared by name and marker (a lock of one target, or whose
/// targets do not read).
fn by_marker(old: &Lock, new: &Lock) -> Changes {
    let before: BTreeMap<Key, &LockedPackage> = old.packages.iter().map(|p| (key(p), p)).collect();
    let after: BTreeMap<Key, &LockedPackage> = new.packages.iter().map(|p| (key(p), p)).collect();
    let mut out = Changes::default();
    let mut keys: Vec<&Key> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let (was, is) = (before.get(k).copied(), after.get(k).copied());
        match change(&k.0, k.1.clone(), was, is) {
            Some(c) => out.changes.push(c),
            None => out.kept += 1,
        }
    }
    out
}

/// What the layer does to the image, said with what the file check saw:
/// `; changes none of the image's 307 packages, file by file`, or which
/// it replaces on purpose and how many could not be listed.
fn image_sentence(image: usize, files: Option<&ImageFiles>) -> String {
    let all = plural(image, "package", "packages");
    let Some(files) = files else {
        return format!("; changes none of the image's {all}");
    };
    let mut out = if files.replaced.is_empty() {
        format!("; changes none of the image's {all}")
    } else {
        format!(
            "; replaces {} of the image's {all} on purpose ({}) and changes none of the others",
            files.replaced.len(),
            files.replaced.join(", ")
        )
    };
    if files.unlisted == 0 {
        out.push_str(", file by file");
    } else {
        let _ = write!(
            out,
            ": versions of all, files of the {} listed ({} could not be listed)",
            files.compared, files.unlisted
        );
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `2026-10-01 (35 days old)`, or the date alone without `now`.
fn when(t: Option<Timestamp>, now: Option<Timestamp>) -> String {
    let Some(t) = t else {
        return String::new();
    };
    let date = t.strftime("%Y-%m-%d").to_string();
    match now {
        Some(now) => {
            let days = now.duration_since(t).as_secs().max(0) / 86_400;
            format!("{date} ({})", plural(days as usize, "day old", "days old"))
        }
        None => date,
    }
}

impl Changes {
    fn count(&self, kind: ChangeKind) -> usize {
        self.changes.iter().filter(|c| c.kind == kind).count()
    }

    /// Whether nothing moved.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// One sentence: `adds 16 packages, upgrades 1, removes none, keeps 3;
    /// changes none of the image's 214 packages`.
    pub fn summary(&self) -> String {
        let verbs = [
            (ChangeKind::Added, "adds"),
            (ChangeKind::Upgraded, "upgrades"),
            (ChangeKind::Downgraded, "downgrades"),
            (ChangeKind::Removed, "removes"),
            (ChangeKind::SourceChanged, "moves the source of"),
        ];
        let mut parts: Vec<String> = verbs
            .iter()
            .filter(|(kind, _)| self.count(*kind) > 0)
            .map(|(kind, verb)| format!("{verb} {}", self.count(*kind)))
            .collect();
        if parts.is_empty() {
            parts.push("changes no package".to_string());
        } else if let Some(first) = parts.first_mut() {
            // The first count names its noun: "adds 16 packages, upgrades 1".
            first.push_str(if first.ends_with(" 1") {
                " package"
            } else {
                " packages"
            });
        }
        let mut out = parts.join(", ");
        let _ = write!(out, ", keeps {}", self.kept);
        if let Some(image) = self.image {
            out.push_str(&image_sentence(image, self.files.as_ref()));
        }
        out
    }

    fn version_cell(c: &Change) -> String {
        let side = |v: &Option<Version>, source: &Option<String>| match (v, source) {
            (Some(v), Some(s)) => Some(format!("{v} ({s})")),
            (Some(v), None) => Some(v.to_string()),
            (None, _) => None,
        };
        match (side(&c.old, &c.old_source), side(&c.new, &c.new_source)) {
            (Some(a), Some(b)) => format!("{a} -> {b}"),
            (None, Some(b)) => b,
            (Some(a), None) => a,
            (None, None) => String::new(),
        }
    }

    fn uploaded_cell(c: &Change, now: Option<Timestamp>) -> String {
        match c.kind {
            ChangeKind::Removed => when(c.old_uploaded, now),
            _ => when(c.new_uploaded, now),
        }
    }

    /// Plain text, a line a change.
    pub fn text(&self, now: Option<Timestamp>) -> String {
        let mut out = format!("{}\n", self.summary());
        for c in &self.changes {
            let mut line = format!(
                "  {:<10} {}{} {}",
                c.kind.name(),
                c.name,
                c.marker
                    .as_ref()
                    .map_or(String::new(), |m| format!(" ; {m}")),
                Self::version_cell(c)
            );
            let uploaded = Self::uploaded_cell(c, now);
            if !uploaded.is_empty() {
                let _ = write!(line, ", uploaded {uploaded}");
            }
            if !c.via.is_empty() {
                let _ = write!(line, ", via {}", c.via.join(", "));
            }
            if let Some(why) = &c.why {
                let _ = write!(line, ": {why}");
            }
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// A table to paste into a pull request.
    pub fn markdown(&self, now: Option<Timestamp>) -> String {
        let summary = self.summary();
        let mut first = summary.chars();
        let summary: String = first
            .next()
            .map(|c| c.to_uppercase().chain(first).collect())
            .unwrap_or_default();
        let mut out = format!("**{summary}.**\n");
        if self.changes.is_empty() {
            return out;
        }
        let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        // The columns every row has, then those some row fills: a diff of
        // two requirements files knows no upload times, and leaves that
        // column out rather than print it empty.
        let rows: Vec<[String; 6]> = self
            .changes
            .iter()
            .map(|c| {
                let name = match &c.marker {
                    Some(m) => format!("`{}` ; `{}`", c.name, cell(m)),
                    None => format!("`{}`", c.name),
                };
                [
                    c.kind.name().to_string(),
                    name,
                    cell(&Self::version_cell(c)),
                    cell(&Self::uploaded_cell(c, now)),
                    cell(&c.via.join(", ")),
                    cell(c.why.as_deref().unwrap_or_default()),
                ]
            })
            .collect();
        let titles = ["change", "package", "version", "uploaded", "via", "why"];
        let shown: Vec<usize> = (0..titles.len())
            .filter(|&i| i < 3 || rows.iter().any(|r| !r[i].trim().is_empty()))
            .collect();
        let line = |cells: Vec<&str>| format!("| {} |\n", cells.join(" | "));
        out.push('\n');
        out.push_str(&line(shown.iter().map(|&i| titles[i]).collect()));
        out.push_str(&line(shown.iter().map(|_| "---").collect()).replace(" --- ", "---"));
        for row in &rows {
            out.push_str(&line(shown.iter().map(|&i| row[i].as_str()).collect()));
        }
        out
    }

    /// The machine-readable form.
    pub fn json(&self, now: Option<Timestamp>) -> String {
        let time = |t: Option<Timestamp>| t.map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
        let age = |t: Option<Timestamp>| Some(now?.duration_since(t?).as_secs().max(0) / 86_400);
        let changes: Vec<serde_json::Value> = self
            .changes
            .iter()
            .map(|c| {
                serde_json::json!({
                    "name": c.name.as_ref(),
                    "marker": c.marker,
                    "change": c.kind.name(),
                    "old": c.old.as_ref().map(ToString::to_string),
                    "new": c.new.as_ref().map(ToString::to_string),
                    "old_uploaded": time(c.old_uploaded),
                    "new_uploaded": time(c.new_uploaded),
                    "old_age_days": age(c.old_uploaded),
                    "new_age_days": age(c.new_uploaded),
                    "old_source": c.old_source,
                    "new_source": c.new_source,
                    "via": c.via,
                    "why": c.why,
                })
            })
            .collect();
        let mut counts = serde_json::Map::new();
        for kind in [
            ChangeKind::Added,
            ChangeKind::Removed,
            ChangeKind::Upgraded,
            ChangeKind::Downgraded,
            ChangeKind::SourceChanged,
        ] {
            counts.insert(kind.name().to_string(), self.count(kind).into());
        }
        counts.insert("kept".to_string(), self.kept.into());
        let report = serde_json::json!({
            "layerlock_changes": 1,
            "summary": self.summary(),
            "counts": counts,
            "image": self.image.map(|n| serde_json::json!({"packages": n, "changed": 0})),
            "changes": changes,
        });
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
    }
}
