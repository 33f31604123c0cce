//! The config file: `layerlock.toml`, or `[tool.layerlock]` in
//! `pyproject.toml`, found in the working directory or above it. It names
//! layers so that `layerlock compile` with no arguments handles them all.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

pub use layerlock_compile::{CooldownConfig, LAYER_KEYS, LayerConfig, OneOrMany, TARGET_KEYS};

// The CI checks' tables live beside the checks, with their keys.
pub use layerlock_audit::{AuditConfig, StepsConfig, TetherConfig};

/// `[blocks]`: the expected edits of restored steps.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct BlocksConfig {
    #[serde(default)]
    pub paths: Vec<String>,
    #[serde(default)]
    pub rewrite: Vec<String>,
    #[serde(default)]
    pub drop_line: Vec<String>,
}

/// `[triage]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TriageConfig {
    pub main: Option<String>,
    pub depth: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ConfigFile {
    #[serde(default)]
    pub cooldown: Option<CooldownConfig>,
    #[serde(default)]
    pub tether: Option<TetherConfig>,
    #[serde(default)]
    pub steps: Option<StepsConfig>,
    #[serde(default)]
    pub audit: Option<AuditConfig>,
    #[serde(default)]
    pub blocks: Option<BlocksConfig>,
    #[serde(default)]
    pub triage: Option<TriageConfig>,
    #[serde(flatten)]
    pub defaults: LayerConfig,
    #[serde(default, rename = "layer")]
    pub layers: Vec<LayerConfig>,
}

/// A config file that was found and read.
#[derive(Debug, Clone)]
pub struct Config {
    pub path: PathBuf,
    /// Paths in the file are relative to this directory.
    pub root: PathBuf,
    pub file: ConfigFile,
}

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<PyprojectTool>,
}

#[derive(Deserialize)]
struct PyprojectTool {
    layerlock: Option<toml::Value>,
}

impl Config {
    /// Read `explicit`, or search upwards from `cwd`.
    pub fn find(explicit: Option<&Path>, cwd: &Path) -> Result<Option<Self>> {
        if let Some(path) = explicit {
            return Self::read(path).map(Some);
        }
        for dir in cwd.ancestors() {
            // Present but not a regular file (a FIFO, a directory) is an
            // error when read, never a reason to look elsewhere.
            let toml = dir.join("layerlock.toml");
            if fs_err::symlink_metadata(&toml).is_ok() {
                return Self::read(&toml).map(Some);
            }
            let pyproject = dir.join("pyproject.toml");
            if fs_err::symlink_metadata(&pyproject).is_ok()
                && let Some(config) = Self::read_pyproject(&pyproject)?
            {
                return Ok(Some(config));
            }
        }
        Ok(None)
    }

    fn root_of(path: &Path) -> PathBuf {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    }

    fn read(path: &Path) -> Result<Self> {
        if path.file_name().is_some_and(|n| n == "pyproject.toml") {
            return Self::read_pyproject(path)?
                .with_context(|| format!("{} has no [tool.layerlock] table", path.display()));
        }
        let text = layerlock_lock::read_text(path)?;
        let value: toml::Value = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.to_string().trim_end()))?;
        check_keys(&value, &path.display().to_string(), &text)?;
        let file: ConfigFile = value.clone().try_into().map_err(|e: toml::de::Error| {
            type_error(&path.display().to_string(), &value, &text, &e)
        })?;
        Self::check(path, &file)?;
        Ok(Self {
            path: path.to_path_buf(),
            root: Self::root_of(path),
            file,
        })
    }

    fn read_pyproject(path: &Path) -> Result<Option<Self>> {
        let text = layerlock_lock::read_text(path)?;
        let project: Pyproject = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.to_string().trim_end()))?;
        let Some(value) = project.tool.and_then(|t| t.layerlock) else {
            return Ok(None);
        };
        check_keys(
            &value,
            &format!("{}: [tool.layerlock]", path.display()),
            &text,
        )?;
        let file: ConfigFile = value.clone().try_into().map_err(|e: toml::de::Error| {
            type_error(
                &format!("{}: [tool.layerlock]", path.display()),
                &value,
                &text,
                &e,
            )
        })?;
        Self::check(path, &file)?;
        Ok(Some(Self {
            path: path.to_path_buf(),
            root: Self::root_of(path),
            file,
        }))
    }

    fn check(path: &Path, file: &ConfigFile) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for (i, layer) in file.layers.iter().enumerate() {
            let name = layer.name.clone().unwrap_or_else(|| format!("#{}", i + 1));
            if !seen.insert(name.clone()) {
                bail!("{}: two layers are named `{name}`", path.display());
            }
            if layer.inputs.is_empty() {
                bail!("{}: layer `{name}` has no `inputs`", path.display());
            }
        }
        Ok(())
    }

    /// Each layer with the file's defaults filled in.
    pub fn layers(&self) -> Vec<LayerConfig> {
        layerlock_compile::with_defaults(&self.file.defaults, &self.file.layers)
    }
}

/// The tables and their keys.
const TABLES: &[(&str, &[&str])] = &[
    ("cooldown", &["min-age", "exempt", "allow-missing-time"]),
    ("tether", TetherConfig::KEYS),
    ("steps", StepsConfig::KEYS),
    ("audit", AuditConfig::KEYS),
    ("blocks", &["paths", "rewrite", "drop-line"]),
    ("triage", &["main", "depth"]),
];

/// An unknown key is an error, not silence: `exclude-newr = …` would drop
/// the very date that makes a lock reproducible. The message names the
/// nearest valid key.
fn check_keys(value: &toml::Value, origin: &str, text: &str) -> Result<()> {
    let Some(top) = value.as_table() else {
        bail!("{origin}: the configuration is not a table");
    };
    let table_names: Vec<&str> = TABLES.iter().map(|(name, _)| *name).collect();
    let mut top_keys: Vec<&str> = LAYER_KEYS.to_vec();
    top_keys.extend(&table_names);
    top_keys.push("layer");
    let mut checks: Vec<(String, &toml::Table, &[&str])> = Vec::new();
    for key in top.keys() {
        unknown(key, &top_keys, origin, text)?;
    }
    for (name, keys) in TABLES {
        if let Some(table) = top.get(*name).and_then(toml::Value::as_table) {
            checks.push((format!("[{name}]"), table, keys));
        }
    }
    if top.get("layer").is_some_and(|l| !l.is_array()) {
        let line = text
            .lines()
            .position(|l| l.trim() == "[layer]" || l.trim_start().starts_with("layer"))
            .map_or_else(String::new, |i| format!(" (line {})", i + 1));
        bail!(
            "{origin}{line}: `layer` is a list of tables: write each as [[layer]] (two brackets)"
        );
    }
    if let Some(layers) = top.get("layer").and_then(toml::Value::as_array) {
        for (i, layer) in layers.iter().enumerate() {
            if let Some(table) = layer.as_table() {
                checks.push((format!("[[layer]] #{}", i + 1), table, LAYER_KEYS));
                let targets = table.get("target").and_then(toml::Value::as_array);
                for (j, target) in targets.into_iter().flatten().enumerate() {
                    if let Some(t) = target.as_table() {
                        checks.push((
                            format!("[[layer]] #{} [[layer.target]] #{}", i + 1, j + 1),
                            t,
                            TARGET_KEYS,
                        ));
                    }
                }
            }
        }
    }
    let exempt_keys: &[&str] = &["package", "version", "reason", "until"];
    if let Some(exempt) = top
        .get("cooldown")
        .and_then(|c| c.get("exempt"))
        .and_then(toml::Value::as_array)
    {
        for (i, item) in exempt.iter().enumerate() {
            if let Some(table) = item.as_table() {
                checks.push((
                    format!("[[cooldown.exempt]] #{}", i + 1),
                    table,
                    exempt_keys,
                ));
            }
        }
    }
    for (place, table, keys) in checks {
        for key in table.keys() {
            unknown(key, keys, &format!("{origin}: {place}"), text)?;
        }
    }
    Ok(())
}

/// A value of the wrong type, named by its key and line: the key is found
/// by reading the configuration one key at a time (the model's flattened
/// defaults keep the reader from saying where).
fn type_error(origin: &str, value: &toml::Value, text: &str, e: &toml::de::Error) -> anyhow::Error {
    let message = e.message().trim_end();
    let fails = |v: toml::Value| -> Option<String> {
        let err = v.try_into::<ConfigFile>().err()?;
        (!err.message().contains("missing field")).then(|| err.message().trim_end().to_string())
    };
    let top = value.as_table().cloned().unwrap_or_default();
    for (key, v) in &top {
        let alone =
            |inner: toml::Value| toml::Value::Table([(key.clone(), inner)].into_iter().collect());
        if fails(alone(v.clone())).is_none() {
            continue;
        }
        // Inside a table, or a [[layer]]: which of its keys.
        let rows: Vec<(Option<usize>, &toml::Table)> = match v {
            toml::Value::Table(t) => vec![(None, t)],
            toml::Value::Array(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| Some((Some(i), item.as_table()?)))
                .collect(),
            _ => Vec::new(),
        };
        for (index, table) in rows {
            for (inner_key, inner) in table {
                let one: toml::Table = [(inner_key.clone(), inner.clone())].into_iter().collect();
                let wrapped = match index {
                    Some(_) => toml::Value::Array(vec![toml::Value::Table(one)]),
                    None => toml::Value::Table(one),
                };
                if let Some(why) = fails(alone(wrapped)) {
                    let (place, header) = match index {
                        Some(i) => (
                            format!("[[{key}]] #{}: `{inner_key}`", i + 1),
                            (format!("[[{key}]]"), i),
                        ),
                        None => (format!("[{key}]: `{inner_key}`"), (format!("[{key}]"), 0)),
                    };
                    return anyhow::anyhow!(
                        "{origin}{}: {place}: {why}",
                        at_line(text, inner_key, Some((&header.0, header.1)))
                    );
                }
            }
        }
        return anyhow::anyhow!("{origin}{}: `{key}`: {message}", at_line(text, key, None));
    }
    anyhow::anyhow!("{origin}: {message}")
}

/// ` (line N)` of the first line that sets `key` (after the `n`-th
/// `header` line, when given), or nothing.
fn at_line(text: &str, key: &str, header: Option<(&str, usize)>) -> String {
    let skip = match header {
        Some((header, n)) => text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim() == header)
            .nth(n)
            .map_or(0, |(i, _)| i + 1),
        None => 0,
    };
    text.lines()
        .enumerate()
        .skip(skip)
        .find(|(_, l)| {
            let l = l.trim_start();
            [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
                .iter()
                .any(|k| {
                    l.strip_prefix(k.as_str())
                        .is_some_and(|rest| rest.trim_start().starts_with('='))
                })
        })
        .map_or_else(String::new, |(i, _)| format!(" (line {})", i + 1))
}

fn unknown(key: &str, known: &[&str], origin: &str, text: &str) -> Result<()> {
    if known.contains(&key) {
        return Ok(());
    }
    let origin = format!("{origin}{}", at_line(text, key, None));
    let origin = origin.as_str();
    let nearest = known
        .iter()
        .map(|k| (edit_distance(key, k), *k))
        .min()
        .filter(|(d, _)| *d <= 3);
    match nearest {
        Some((_, k)) => bail!("{origin}: unknown key `{key}`; did you mean `{k}`?"),
        None => bail!(
            "{origin}: unknown key `{key}`; the keys here are {}",
            known.join(", ")
        ),
    }
}

/// Levenshtein distance, for suggesting the key meant.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(current + 1);
            previous = current;
        }
    }
    row[b.len()]
}
