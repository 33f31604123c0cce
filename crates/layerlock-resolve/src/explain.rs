//! Turns PubGrub's derivation tree into plain words: which base pin, which
//! platform, which requires-python ruled versions out.

use std::collections::BTreeSet;

use pubgrub::{
    DefaultStringReporter, DerivationTree, Derived, External, Map, ReportFormatter, Reporter, Term,
};
use uv_normalize::PackageName;
use uv_pep440::strip_local_version_sentinels;

use crate::Exclusion;

use crate::provider::{Pkg, Provider, Range};

/// Render `range` for a reader: no internal local-version sentinels, and
/// nothing at all for "any version".
pub(crate) fn show_range(range: &Range) -> String {
    let range = strip_local_version_sentinels(range);
    if range == Range::full() {
        String::new()
    } else if let Some(v) = range.as_singleton() {
        format!("=={v}")
    } else {
        range.to_string()
    }
}

fn pkg_range(pkg: &Pkg, range: &Range) -> String {
    match pkg {
        Pkg::Root => pkg.to_string(),
        _ => {
            let r = show_range(range);
            if r.is_empty() {
                pkg.to_string()
            } else if r.starts_with("==") || r.starts_with(['<', '>', '!', '~']) {
                format!("{pkg}{r}")
            } else {
                format!("{pkg} {r}")
            }
        }
    }
}

pub(crate) struct Formatter<'a, 'b> {
    pub(crate) provider: &'a Provider<'b>,
}

impl Formatter<'_, '_> {
    fn external(&self, external: &External<Pkg, Range, String>) -> String {
        match external {
            External::NotRoot(..) => "we are resolving your requirements".to_string(),
            External::NoVersions(pkg, range) => {
                let Some(name) = pkg.name() else {
                    return "your requirements cannot be met".to_string();
                };
                if let Some(pin) = self.provider.request.base.get(name) {
                    let who = if pin.source == layerlock_lock::BaseSource::Owned {
                        "the image owns"
                    } else {
                        "the base pins"
                    };
                    return match &pin.version {
                        Some(v) => format!("{who} {name}=={v} ({})", pin.origin),
                        None => format!("{who} {name} ({})", pin.origin),
                    };
                }
                if let Some(asked) = self.provider.state.borrow().not_found.get(name) {
                    return format!("{name} is not on any index asked ({})", asked.join(", "));
                }
                let unlisted = strip_local_version_sentinels(range)
                    .as_singleton()
                    .cloned()
                    .filter(|v| {
                        let state = self.provider.state.borrow();
                        state
                            .candidates
                            .get(name)
                            .is_some_and(|c| c.get(v).is_none())
                    });
                if let Some(v) = unlisted {
                    format!("{name} {v} is not on the index")
                } else if *range == Range::full() {
                    format!("no version of {name} is usable on {}", self.target())
                } else if let Some(v) = strip_local_version_sentinels(&range.complement())
                    .as_singleton()
                    .cloned()
                {
                    format!(
                        "no version of {name} other than {v} is usable on {}",
                        self.target()
                    )
                } else {
                    format!(
                        "no version of {name} that is usable on {} matches {}",
                        self.target(),
                        show_range(range)
                    )
                }
            }
            External::FromDependencyOf(pkg, range, dep, dep_range) => match pkg {
                Pkg::Root => self.required(dep, dep_range),
                _ => format!(
                    "{} depends on {}",
                    pkg_range(pkg, range),
                    pkg_range(dep, dep_range)
                ),
            },
            External::Custom(pkg, range, why) => {
                format!("{} cannot be used: {why}", pkg_range(pkg, range))
            }
        }
    }

    fn target(&self) -> String {
        self.provider.request.target.describe()
    }

    /// A requirement of the layer, at the lines that write it; lines that
    /// ask for versions no one version meets (`six==1.16.0` and
    /// `six==1.15.0`) are named each with its own.
    fn required(&self, dep: &Pkg, range: &Range) -> String {
        let Some(name) = dep.name() else {
            return format!("you require {}", pkg_range(dep, range));
        };
        let written: Vec<(String, &str)> = self
            .provider
            .request
            .direct
            .iter()
            .filter(|d| d.requirement.name == *name && !d.origin.is_empty())
            .map(|d| (d.requirement.to_string(), d.origin.as_str()))
            .collect();
        let at = |list: &[(String, &str)]| {
            list.iter()
                .map(|(r, o)| format!("{r} ({o})"))
                .collect::<Vec<_>>()
                .join(" and ")
        };
        if range.is_empty() && written.len() > 1 {
            return format!(
                "you require {} and no version of {name} is all of them",
                at(&written)
            );
        }
        match written.as_slice() {
            [] => format!("you require {}", pkg_range(dep, range)),
            [(_, origin)] => format!("you require {} ({origin})", pkg_range(dep, range)),
            many => format!("you require {} ({})", pkg_range(dep, range), at(many)),
        }
    }

    fn terms(&self, terms: &Map<Pkg, Term<Range>>) -> String {
        let mut list: Vec<(&Pkg, &Term<Range>)> = terms.iter().collect();
        list.sort_by(|a, b| a.0.cmp(b.0));
        match list.as_slice() {
            [] => "the requirements cannot be met".to_string(),
            [(Pkg::Root, Term::Positive(_))] => "your requirements cannot be met".to_string(),
            [(pkg, Term::Positive(range))] => format!("{} cannot be used", pkg_range(pkg, range)),
            [(pkg, Term::Negative(range))] => format!("{} is required", pkg_range(pkg, range)),
            [(p1, Term::Positive(r1)), (p2, Term::Negative(r2))] => {
                format!("{} requires {}", pkg_range(p1, r1), pkg_range(p2, r2))
            }
            [(p1, Term::Negative(r1)), (p2, Term::Positive(r2))] => {
                format!("{} requires {}", pkg_range(p2, r2), pkg_range(p1, r1))
            }
            many => {
                let parts: Vec<String> = many
                    .iter()
                    .map(|(p, t)| match t {
                        Term::Positive(r) => pkg_range(p, r),
                        Term::Negative(r) => format!("not {}", pkg_range(p, r)),
                    })
                    .collect();
                format!("these cannot all hold: {}", parts.join("; "))
            }
        }
    }
}

impl ReportFormatter<Pkg, Range, String> for Formatter<'_, '_> {
    type Output = String;

    fn format_external(&self, external: &External<Pkg, Range, String>) -> String {
        self.external(external)
    }

    fn format_terms(&self, terms: &Map<Pkg, Term<Range>>) -> String {
        self.terms(terms)
    }

    fn explain_both_external(
        &self,
        e1: &External<Pkg, Range, String>,
        e2: &External<Pkg, Range, String>,
        terms: &Map<Pkg, Term<Range>>,
    ) -> String {
        format!(
            "Because {} and {}, {}.",
            self.external(e1),
            self.external(e2),
            self.terms(terms)
        )
    }

    fn explain_both_ref(
        &self,
        id1: usize,
        d1: &Derived<Pkg, Range, String>,
        id2: usize,
        d2: &Derived<Pkg, Range, String>,
        terms: &Map<Pkg, Term<Range>>,
    ) -> String {
        format!(
            "Because {} ({id1}) and {} ({id2}), {}.",
            self.terms(&d1.terms),
            self.terms(&d2.terms),
            self.terms(terms)
        )
    }

    fn explain_ref_and_external(
        &self,
        id: usize,
        derived: &Derived<Pkg, Range, String>,
        external: &External<Pkg, Range, String>,
        terms: &Map<Pkg, Term<Range>>,
    ) -> String {
        format!(
            "Because {} ({id}) and {}, {}.",
            self.terms(&derived.terms),
            self.external(external),
            self.terms(terms)
        )
    }

    fn and_explain_external(
        &self,
        external: &External<Pkg, Range, String>,
        terms: &Map<Pkg, Term<Range>>,
    ) -> String {
        format!(
            "And because {}, {}.",
            self.external(external),
            self.terms(terms)
        )
    }

    fn and_explain_ref(
        &self,
        id: usize,
        derived: &Derived<Pkg, Range, String>,
        terms: &Map<Pkg, Term<Range>>,
    ) -> String {
        format!(
            "And because {} ({id}), {}.",
            self.terms(&derived.terms),
            self.terms(terms)
        )
    }

    fn and_explain_prior_and_external(
        &self,
        prior: &External<Pkg, Range, String>,
        external: &External<Pkg, Range, String>,
        terms: &Map<Pkg, Term<Range>>,
    ) -> String {
        format!(
            "And because {} and {}, {}.",
            self.external(prior),
            self.external(external),
            self.terms(terms)
        )
    }
}

/// Why a package had no usable version, from the leaves of the tree: what
/// a caller can act on without reading the report.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    /// A base pin (or an owned package) fixed it.
    Base(PackageName),
    /// No index asked lists it.
    NotFound(PackageName),
    /// Versions exist, but none has a wheel for the target (only source
    /// distributions, other platforms, other Pythons).
    NoWheel(PackageName),
    /// The cooldown holds back the versions that would do.
    Cooldown(PackageName),
    /// Anything else (yanked, `--exclude-newer`, a range nothing meets).
    Other(PackageName),
}

/// The report, `hint:` lines on the versions each failing package lost,
/// and the causes.
pub(crate) fn explain(
    provider: &Provider<'_>,
    tree: &DerivationTree<Pkg, Range, String>,
) -> (String, Vec<String>, Vec<Cause>) {
    let formatter = Formatter { provider };
    let report = DefaultStringReporter::report_with_formatter(tree, &formatter);
    let mut hints = BTreeSet::new();
    let mut causes = BTreeSet::new();
    collect_hints(provider, tree, &mut hints, &mut causes);
    (
        report,
        hints.into_iter().collect(),
        causes.into_iter().collect(),
    )
}

/// The cause for `name`, whose versions in `range` were all ruled out.
fn cause(name: &PackageName, range: &Range, candidates: &crate::Candidates) -> Cause {
    let mut kinds = candidates
        .iter_where(|v| range.contains(v))
        .filter_map(|(_, c)| c.exclusion.as_ref())
        .peekable();
    if kinds.peek().is_none() {
        return Cause::Other(name.clone());
    }
    let mut no_wheel = true;
    let mut cooldown = false;
    for kind in kinds {
        match kind {
            Exclusion::SdistOnly | Exclusion::NoCompatibleWheel | Exclusion::RequiresPython(_) => {}
            Exclusion::TooYoung { .. } => cooldown = true,
            _ => no_wheel = false,
        }
    }
    if cooldown {
        Cause::Cooldown(name.clone())
    } else if no_wheel {
        Cause::NoWheel(name.clone())
    } else {
        Cause::Other(name.clone())
    }
}

/// A pin of a version the index does not list at all (a typo, a dev
/// build from another index): say so, with the newest version it has and
/// the newest usable on the target.
fn not_on_index(
    name: &PackageName,
    range: &Range,
    candidates: &crate::candidates::Candidates,
) -> Option<String> {
    let pinned = strip_local_version_sentinels(range).as_singleton()?.clone();
    if candidates.get(&pinned).is_some() {
        return None;
    }
    let newest = candidates.iter().next_back().map(|(v, _)| v.clone());
    let usable = candidates
        .iter()
        .rev()
        .find(|(_, c)| c.exclusion.is_none())
        .map(|(v, _)| v.clone());
    let has = match (newest, usable) {
        (None, _) => "it lists no version of it".to_string(),
        (Some(newest), Some(usable)) if usable == newest => format!("its newest is {newest}"),
        (Some(newest), Some(usable)) => {
            format!("its newest is {newest}; the newest usable on this target is {usable}")
        }
        (Some(newest), None) => {
            format!("its newest is {newest}, and none is usable on this target")
        }
    };
    Some(format!(
        "{name}=={pinned} is not on the index ({has}): pin a version it has, or add the index that serves this build"
    ))
}

fn collect_hints(
    provider: &Provider<'_>,
    tree: &DerivationTree<Pkg, Range, String>,
    hints: &mut BTreeSet<String>,
    causes: &mut BTreeSet<Cause>,
) {
    match tree {
        DerivationTree::External(External::NoVersions(pkg, range)) => {
            let Some(name) = pkg.name() else { return };
            if provider.request.base.contains_key(name) {
                causes.insert(Cause::Base(name.clone()));
                return;
            }
            if provider.state.borrow().not_found.contains_key(name) {
                causes.insert(Cause::NotFound(name.clone()));
                return;
            }
            let Some(candidates) = provider.state.borrow().candidates.get(name).cloned() else {
                causes.insert(Cause::Other(name.clone()));
                return;
            };
            causes.insert(cause(name, range, &candidates));
            if let Some(hint) = not_on_index(name, range, &candidates) {
                hints.insert(hint);
            }
            let ruled_out: Vec<String> = candidates
                .iter_where(|v| range.contains(v))
                .rev()
                .filter_map(|(v, c)| c.exclusion.as_ref().map(|why| format!("{v}: {why}")))
                .take(6)
                .collect();
            if !ruled_out.is_empty() {
                hints.insert(format!(
                    "{name} versions ruled out on {}: {}",
                    provider.request.target.describe(),
                    ruled_out.join("; ")
                ));
            }
            let pre: Vec<String> = candidates
                .iter_where(|v| v.any_prerelease() && range.contains(v))
                .rev()
                .filter(|(_, c)| c.exclusion.is_none())
                .take(3)
                .map(|(v, _)| v.to_string())
                .collect();
            if !pre.is_empty() {
                hints.insert(format!(
                    "{name} has pre-releases in range ({}); pin one with == or pass --prerelease allow",
                    pre.join(", ")
                ));
            }
        }
        DerivationTree::External(External::Custom(pkg, _, _)) => {
            let Some(name) = pkg.name() else { return };
            let state = provider.state.borrow();
            let Some(reasons) = state.dynamic.get(name) else {
                return;
            };
            causes.insert(Cause::NoWheel(name.clone()));
            // The newest version tried says why; the rest are counted.
            if let Some(first) = reasons.first() {
                let mut others = match reasons.len() - 1 {
                    0 => String::new(),
                    1 => " (1 older version's sdist alike)".to_string(),
                    n => format!(" ({n} older versions' sdists alike)"),
                };
                // Past the bound, older sdists were not downloaded: a
                // fall-back that far would be refused anyway.
                if let Some(not_read) = state.not_read.get(name) {
                    others.push_str(&format!(
                        "; {} older sdist-only release{} not downloaded (--allow-walk-back {name} reads on, and takes an old release if one can be read)",
                        not_read.len(),
                        if not_read.len() == 1 { " was" } else { "s were" }
                    ));
                }
                hints.insert(format!(
                    "{first}{others}; layerlock never runs a build backend: pass --owned {name} if the image builds it, put a wheel of it in a --find-links folder, or pin a version that has a wheel"
                ));
            }
        }
        DerivationTree::External(_) => {}
        DerivationTree::Derived(derived) => {
            collect_hints(provider, &derived.cause1, hints, causes);
            collect_hints(provider, &derived.cause2, hints, causes);
        }
    }
}
