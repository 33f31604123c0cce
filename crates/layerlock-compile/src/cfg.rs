//! The config file's layer tables (`[[layer]]`, its `[[layer.target]]`s,
//! the top-level defaults) and `[cooldown]`, with their keys. The binary
//! finds and reads the file; the tables live beside what compiles them,
//! as the CI checks' tables live beside the checks.

use serde::Deserialize;

use crate::plan::fill_output;

/// `hashes = "all" | "target"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashesKey {
    All,
    Target,
}

impl HashesKey {
    /// As the lock writer takes it.
    pub fn selection(self) -> layerlock_resolve::HashSelection {
        match self {
            Self::All => layerlock_resolve::HashSelection::All,
            Self::Target => layerlock_resolve::HashSelection::Target,
        }
    }
}

/// `prerelease = "allow" | "disallow" | "if-necessary"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrereleaseKey {
    Allow,
    Disallow,
    /// Stable versions first, pre-releases only when none fits (the default).
    /// `if-necessary-or-explicit`, uv's older name, means the same.
    #[serde(alias = "if-necessary-or-explicit")]
    IfNecessary,
}

impl PrereleaseKey {
    /// As the resolver takes it; none given is `if-necessary`.
    pub fn policy(key: Option<Self>) -> layerlock_resolve::Prerelease {
        match key {
            Some(Self::Allow) => layerlock_resolve::Prerelease::Allow,
            Some(Self::Disallow) => layerlock_resolve::Prerelease::Disallow,
            Some(Self::IfNecessary) | None => layerlock_resolve::Prerelease::IfNecessary,
        }
    }
}

/// Settings a layer may carry; top-level values are defaults for every layer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct LayerConfig {
    pub name: Option<String>,
    #[serde(default)]
    pub inputs: Vec<String>,
    #[serde(default)]
    pub bases: Vec<String>,
    pub output: Option<String>,
    /// `-c` files.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// `--override` files.
    #[serde(default)]
    pub overrides: Vec<String>,
    /// Extras of a `pyproject.toml` input.
    #[serde(default)]
    pub extras: Vec<String>,
    pub all_extras: Option<bool>,
    /// PEP 735 groups of a `pyproject.toml` input.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Packages that must come as wheels (`:all:` or names).
    #[serde(default)]
    pub only_binary: Vec<String>,
    /// Packages that may fall back past newer releases whose dependencies
    /// are dynamic (`:all:` or names).
    #[serde(default)]
    pub allow_walk_back: Vec<String>,
    /// One Python version, or several (`python-versions`): with
    /// `platform`, the matrix of targets the layer serves.
    #[serde(alias = "python-versions")]
    pub python_version: Option<OneOrMany>,
    /// One platform, or several (`platforms`).
    #[serde(alias = "platforms")]
    pub platform: Option<OneOrMany>,
    #[serde(default)]
    pub owned: Vec<String>,
    /// Versions the image installs over its own lock's pins.
    #[serde(default)]
    pub owned_over: Vec<String>,
    /// The image's packages the layer replaces on purpose.
    #[serde(default)]
    pub replace: Vec<String>,
    /// Whether a distribution whose files cannot be listed is an error.
    pub require_checked: Option<bool>,
    /// An interpreter whose installed distributions are base pins.
    pub base_env: Option<String>,
    pub hashes: Option<HashesKey>,
    pub prerelease: Option<PrereleaseKey>,
    pub exclude_newer: Option<String>,
    pub index_url: Option<String>,
    #[serde(default)]
    pub extra_index_url: Vec<String>,
    #[serde(default)]
    pub find_links: Vec<String>,
    pub no_index: Option<bool>,
    /// `[[layer.target]]`: targets each with its own keys (bases, owned,
    /// index), the layer's where a target does not set one.
    #[serde(default, rename = "target")]
    pub targets: Vec<TargetConfig>,
}

/// A target as (python, platform), with its base files as written.
pub type TargetBases = ((String, String), Vec<String>);

impl LayerConfig {
    /// A `[[layer.target]]`'s (python, platform): its own, else the
    /// layer's when the layer names one of each; `None` when neither.
    pub fn table_pair(&self, t: &TargetConfig) -> Option<(String, String)> {
        let (pythons, platforms) = self.matrix();
        let only = |v: Vec<String>| match v.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        };
        Some((
            t.python_version.clone().or_else(|| only(pythons))?,
            t.platform.clone().or_else(|| only(platforms))?,
        ))
    }

    /// The layer's `python-version`s and `platform`s, as lists.
    fn matrix(&self) -> (Vec<String>, Vec<String>) {
        let values = |k: &Option<OneOrMany>| k.as_ref().map(OneOrMany::values).unwrap_or_default();
        (values(&self.python_version), values(&self.platform))
    }

    /// The files the layer writes, each with the targets it holds and
    /// their bases: its output for every target, or one file per target
    /// when the output's name holds `{python}` or `{platform}`.
    pub fn outputs_by_target(&self) -> Vec<(String, Vec<TargetBases>)> {
        let Some(output) = &self.output else {
            return Vec::new();
        };
        let targets = self.targets_with_bases();
        if !output.contains("{python}") && !output.contains("{platform}") {
            return vec![(output.clone(), targets)];
        }
        let mut out: Vec<(String, Vec<_>)> = Vec::new();
        for ((python, platform), bases) in targets {
            let one = fill_output(output, &python, &platform);
            match out.iter_mut().find(|(o, _)| *o == one) {
                Some((_, held)) => held.push(((python, platform), bases)),
                None => out.push((one, vec![((python, platform), bases)])),
            }
        }
        out
    }

    /// Each target with its bases: a `[[layer.target]]`'s own, else the
    /// layer's.
    fn targets_with_bases(&self) -> Vec<TargetBases> {
        if self.targets.is_empty() {
            let (pythons, platforms) = self.matrix();
            return platforms
                .iter()
                .flat_map(|plat| pythons.iter().map(move |py| (py.clone(), plat.clone())))
                .map(|p| (p, self.bases.clone()))
                .collect();
        }
        self.targets
            .iter()
            .filter_map(|t| {
                let pair = self.table_pair(t)?;
                let bases = if t.bases.is_empty() {
                    &self.bases
                } else {
                    &t.bases
                };
                Some((pair, bases.clone()))
            })
            .collect()
    }
}

/// A key that takes one string or a list of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for OneOrMany {
    /// By hand, so that a wrong type is named (`invalid type: floating
    /// point 3.12, expected a string or a list of strings`).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany::One(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<OneOrMany, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<String>()? {
                    out.push(item);
                }
                Ok(OneOrMany::Many(out))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl OneOrMany {
    pub fn values(&self) -> Vec<String> {
        match self {
            Self::One(one) => vec![one.clone()],
            Self::Many(many) => many.clone(),
        }
    }
}

/// `[[layer.target]]`: one image the layer also serves.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TargetConfig {
    pub python_version: Option<String>,
    pub platform: Option<String>,
    #[serde(default)]
    pub bases: Vec<String>,
    pub base_env: Option<String>,
    #[serde(default)]
    pub owned: Vec<String>,
    pub index_url: Option<String>,
    #[serde(default)]
    pub extra_index_url: Vec<String>,
    #[serde(default)]
    pub find_links: Vec<String>,
    pub no_index: Option<bool>,
}

/// Keys of a `[[layer.target]]`.
pub const TARGET_KEYS: &[&str] = &[
    "python-version",
    "platform",
    "bases",
    "base-env",
    "owned",
    "index-url",
    "extra-index-url",
    "find-links",
    "no-index",
];

/// `[cooldown]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CooldownConfig {
    pub min_age: Option<String>,
    #[serde(default)]
    pub exempt: Vec<ExemptConfig>,
    pub allow_missing_time: Option<bool>,
}

/// `{ package = "nixl-cu13", reason = "…", until = "2026-11-05" }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ExemptConfig {
    pub package: String,
    /// Only this version is exempt.
    pub version: Option<String>,
    pub reason: String,
    pub until: Option<String>,
}

/// The cooldown flags of one command, as written.
#[derive(Debug, Clone, Copy, Default)]
pub struct CooldownFlagText<'a> {
    pub min_age: Option<&'a str>,
    pub exempt: &'a [String],
    pub now: Option<&'a str>,
    pub allow_missing_time: bool,
}

impl CooldownConfig {
    /// The cooldown of `flags` over this `[cooldown]` (`config`, when
    /// there is one): a flag's age wins, exemptions of both count, and time
    /// is measured at `--now`, else `now`. Flags are read even when no
    /// cooldown applies: a malformed `--now` or exemption is an error,
    /// never ignored.
    pub fn plan(
        config: Option<&Self>,
        flags: CooldownFlagText<'_>,
        now: jiff::Timestamp,
    ) -> Result<Option<crate::CooldownPlan>, layerlock_resolve::PolicyTextError> {
        use layerlock_resolve::{Exemption, exempt_target, parse_timestamp};
        let at = flags.now.map(parse_timestamp).transpose()?;
        let mut exemptions = Vec::new();
        for flag in flags.exempt {
            let (package, version) = exempt_target(flag, None, "--min-age-exempt")?;
            exemptions.push(Exemption {
                package,
                version,
                reason: "--min-age-exempt".to_string(),
                until: None,
            });
        }
        let Some(text) = flags
            .min_age
            .map(str::to_string)
            .or_else(|| config.and_then(|c| c.min_age.clone()))
        else {
            return Ok(None);
        };
        for (i, e) in config
            .map(|c| c.exempt.as_slice())
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let place = format!("[[cooldown.exempt]] #{}", i + 1);
            let (package, version) = exempt_target(&e.package, e.version.as_deref(), &place)?;
            exemptions.push(Exemption {
                package,
                version,
                reason: e.reason.clone(),
                until: e.until.as_deref().map(parse_timestamp).transpose()?,
            });
        }
        Ok(Some(crate::CooldownPlan {
            policy: layerlock_resolve::CooldownPolicy {
                min_age: layerlock_resolve::parse_age(&text)?,
                now: at.unwrap_or(now),
                exemptions,
                allow_missing_time: flags.allow_missing_time
                    || config.and_then(|c| c.allow_missing_time).unwrap_or(false),
            },
            min_age_text: text,
        }))
    }
}

/// A layer's list, else the top level's.
fn or_default(layer: &[String], defaults: &[String]) -> Vec<String> {
    if layer.is_empty() { defaults } else { layer }.to_vec()
}

/// Keys of a layer (also allowed at the top level, as defaults).
pub const LAYER_KEYS: &[&str] = &[
    "name",
    "inputs",
    "bases",
    "output",
    "constraints",
    "overrides",
    "extras",
    "all-extras",
    "groups",
    "only-binary",
    "allow-walk-back",
    "python-version",
    "python-versions",
    "platform",
    "platforms",
    "owned",
    "owned-over",
    "replace",
    "require-checked",
    "base-env",
    "hashes",
    "prerelease",
    "exclude-newer",
    "index-url",
    "extra-index-url",
    "find-links",
    "no-index",
    "target",
];

/// Each of `layers` with the file's `defaults` (its top-level keys)
/// filled in, and a name (`#N`) when it has none.
pub fn with_defaults(d: &LayerConfig, layers: &[LayerConfig]) -> Vec<LayerConfig> {
    layers
        .iter()
        .enumerate()
        .map(|(i, l)| LayerConfig {
            name: Some(l.name.clone().unwrap_or_else(|| format!("#{}", i + 1))),
            inputs: l.inputs.clone(),
            bases: if l.bases.is_empty() {
                d.bases.clone()
            } else {
                l.bases.clone()
            },
            output: l.output.clone(),
            constraints: or_default(&l.constraints, &d.constraints),
            overrides: or_default(&l.overrides, &d.overrides),
            extras: or_default(&l.extras, &d.extras),
            all_extras: l.all_extras.or(d.all_extras),
            groups: or_default(&l.groups, &d.groups),
            only_binary: or_default(&l.only_binary, &d.only_binary),
            allow_walk_back: or_default(&l.allow_walk_back, &d.allow_walk_back),
            python_version: l
                .python_version
                .clone()
                .or_else(|| d.python_version.clone()),
            platform: l.platform.clone().or_else(|| d.platform.clone()),
            owned: if l.owned.is_empty() {
                d.owned.clone()
            } else {
                l.owned.clone()
            },
            owned_over: or_default(&l.owned_over, &d.owned_over),
            replace: or_default(&l.replace, &d.replace),
            require_checked: l.require_checked.or(d.require_checked),
            base_env: l.base_env.clone().or_else(|| d.base_env.clone()),
            hashes: l.hashes.or(d.hashes),
            prerelease: l.prerelease.or(d.prerelease),
            exclude_newer: l.exclude_newer.clone().or_else(|| d.exclude_newer.clone()),
            index_url: l.index_url.clone().or_else(|| d.index_url.clone()),
            extra_index_url: if l.extra_index_url.is_empty() {
                d.extra_index_url.clone()
            } else {
                l.extra_index_url.clone()
            },
            find_links: if l.find_links.is_empty() {
                d.find_links.clone()
            } else {
                l.find_links.clone()
            },
            no_index: l.no_index.or(d.no_index),
            targets: if l.targets.is_empty() {
                d.targets.clone()
            } else {
                l.targets.clone()
            },
        })
        .collect()
}
