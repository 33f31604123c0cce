//! What compiling a layer had to say beside its lock, as data, in the
//! order it happened; [`Note::lines`] words each for stderr.

use layerlock_resolve::{Divergence, HeldBack, HeldTogether};

use crate::resolve::eligible_at;

/// One thing worth telling about a compile.
#[derive(Debug, Clone)]
pub enum Note {
    /// A resolution's warning, or one about the lock it keeps.
    Warning(String),
    /// What the cooldown (`min_age`, as written) held back.
    HeldBack {
        min_age: String,
        held: Vec<HeldBack>,
    },
    /// Kept pins younger than the cooldown; `target` named when the layer
    /// has several.
    YoungKept {
        target: Option<String>,
        young: Vec<HeldBack>,
    },
    /// Packages whose versions differ between the targets, and why.
    Divergent(Vec<Divergence>),
    /// Packages a target holds lower than it would alone, to share a
    /// version with another target.
    HeldTogether(Vec<HeldTogether>),
    /// Distributions whose files could not be listed (`name==version
    /// (why)`), for `target` when the layer has several.
    Unchecked {
        target: Option<String>,
        items: Vec<String>,
    },
    /// The image's distributions the layer replaces on purpose.
    Replaces(Vec<String>),
    /// Base pins the layer uses whose dependencies the base does not pin,
    /// and those whose dependencies could not be read; `target` named when
    /// the layer has several.
    OpenBase {
        target: Option<String>,
        report: crate::closure::ClosureReport,
    },
    /// Packages taken older than newer releases whose dependencies are
    /// dynamic, one line each; `target` named when the layer has several.
    WalkedBack {
        target: Option<String>,
        lines: Vec<String>,
    },
}

impl Note {
    /// The note as stderr shows it, one line each.
    pub fn lines(&self) -> Vec<String> {
        match self {
            Self::Warning(text) => vec![format!("warning: {text}")],
            Self::HeldBack { min_age, held } => held_back(min_age, held),
            Self::YoungKept { target, young } => young_kept(target.as_deref(), young),
            Self::Divergent(apart) => divergent(apart),
            Self::HeldTogether(held) => held_together(held),
            Self::Unchecked { target, items } => unchecked(target.as_deref(), items),
            Self::WalkedBack { target, lines } => walked_back(target.as_deref(), lines),
            Self::OpenBase { target, report } => open_base(target.as_deref(), report),
            Self::Replaces(replaced) => vec![format!(
                "the layer replaces the image's {} on purpose (recorded in the lock; install removes {} first)",
                replaced.join(", "),
                if replaced.len() == 1 { "it" } else { "them" }
            )],
        }
    }
}

fn open_base(target: Option<&str>, report: &crate::closure::ClosureReport) -> Vec<String> {
    let on = target.map(|t| format!(" on {t}")).unwrap_or_default();
    let mut lines: Vec<String> = report
        .open
        .iter()
        .map(|open| {
            let names: Vec<&str> = open.missing.iter().map(AsRef::as_ref).collect();
            let them = if names.len() == 1 { "it" } else { "them" };
            format!(
                "warning: the base pins {} but not what it needs{on}: {}; layerlock takes {them} to be in the image at a version nobody wrote down (pin {them} in the base, or give --base-env to read the image itself)",
                open.pin,
                names.join(", ")
            )
        })
        .collect();
    if !report.unchecked.is_empty() {
        lines.push(format!(
            "not checked for dependencies the base does not pin{on} ({} base pin{} the layer uses):",
            report.unchecked.len(),
            plural(report.unchecked.len())
        ));
        lines.extend(report.unchecked.iter().map(|item| format!("  {item}")));
    }
    lines
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn held_back(min_age: &str, held: &[HeldBack]) -> Vec<String> {
    let mut lines = vec![format!(
        "the cooldown ({min_age}) held back {} package{}:",
        held.len(),
        plural(held.len())
    )];
    for h in held {
        lines.push(format!(
            "  {}: {} instead of {} (eligible at {})",
            h.name,
            h.chosen
                .as_ref()
                .map_or("not needed".to_string(), ToString::to_string),
            h.skipped,
            eligible_at(h.eligible)
        ));
    }
    lines
}

fn young_kept(target: Option<&str>, young: &[HeldBack]) -> Vec<String> {
    let mut lines = vec![format!(
        "kept {} pin{} younger than the cooldown{} (kept pins are not newly introduced; free one with --upgrade-package PKG):",
        young.len(),
        plural(young.len()),
        target.map_or(String::new(), |t| format!(" for {t}"))
    )];
    for y in young {
        lines.push(format!(
            "  {}=={} (eligible at {})",
            y.name,
            y.skipped,
            eligible_at(y.eligible)
        ));
    }
    lines
}

fn divergent(apart: &[Divergence]) -> Vec<String> {
    let mut lines = vec![format!(
        "{} differ between the targets:",
        if apart.len() == 1 {
            "1 package's versions".to_string()
        } else {
            format!("{} packages' versions", apart.len())
        }
    )];
    for d in apart {
        let each: Vec<String> = d
            .versions
            .iter()
            .map(|(label, version, why)| match why {
                Some(why) => format!("{version} on {label} ({why})"),
                None => format!("{version} on {label}"),
            })
            .collect();
        lines.push(format!("  {}: {}", d.name, each.join("; ")));
    }
    lines
}

fn held_together(held: &[HeldTogether]) -> Vec<String> {
    let mut lines = vec![format!(
        "{} package{} held to the version another target takes:",
        held.len(),
        if held.len() == 1 { " is" } else { "s are" }
    )];
    for h in held {
        lines.push(format!(
            "  {} {} on {} (alone it would take {}; {} takes {})",
            h.name,
            h.version,
            h.target,
            h.alone,
            if h.with.is_empty() {
                "another target"
            } else {
                &h.with
            },
            h.version
        ));
    }
    lines
}

fn unchecked(target: Option<&str>, items: &[String]) -> Vec<String> {
    let mut lines = vec![format!(
        "not checked for files written over ({} distribution{}{}; named in the lock's header):",
        items.len(),
        plural(items.len()),
        target.map_or(String::new(), |t| format!(" for {t}"))
    )];
    lines.extend(items.iter().map(|i| format!("  {i}")));
    lines
}

fn walked_back(target: Option<&str>, lines: &[String]) -> Vec<String> {
    let whom = target.map(|t| format!(" for {t}")).unwrap_or_default();
    let mut out = vec![format!(
        "taken older than newer releases that only say their dependencies by building{whom}:"
    )];
    out.extend(lines.iter().map(|l| format!("  {l}")));
    out
}
