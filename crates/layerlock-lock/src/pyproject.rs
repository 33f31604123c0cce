//! A `pyproject.toml` as a layer's input: its static `[project]`
//! dependencies (PEP 621), the optional dependencies of the extras asked
//! for, and PEP 735 `[dependency-groups]`. Nothing is built: a list the
//! project declares `dynamic` is refused, since only its build backend
//! could say what it holds.

use std::collections::BTreeSet;
use std::path::Path;

use toml::Value;

use crate::error::{LockError, Origin};
use crate::parse::{Entry, parse_requirement};

/// What a `pyproject.toml` input contributes beside `[project]
/// dependencies`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectParts {
    /// The extras whose optional dependencies count; `None`: all of them.
    pub extras: Option<Vec<String>>,
    /// `[dependency-groups]` to include.
    pub groups: Vec<String>,
}

impl Default for ProjectParts {
    fn default() -> Self {
        Self {
            extras: Some(Vec::new()),
            groups: Vec::new(),
        }
    }
}

/// Whether `path` is read as a project file rather than a requirements file.
pub fn is_pyproject(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "pyproject.toml")
}

/// Deepest chain of `{include-group = …}` (or of a project's extras naming
/// the project itself) followed.
const MAX_NESTING: usize = 32;

/// The requirements `parts` selects from the project file at `path`.
pub fn read_project(path: &Path, parts: &ProjectParts) -> Result<Vec<Entry>, LockError> {
    let text = crate::parse::read_text(path)?;
    parse_project(path, &text, parts)
}

/// [`read_project`] of `text`, as if read from `path`.
pub fn parse_project(
    path: &Path,
    text: &str,
    parts: &ProjectParts,
) -> Result<Vec<Entry>, LockError> {
    let invalid = |message: String| LockError::Invalid {
        at: path.display().to_string(),
        message,
    };
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].lines().count().max(1)
        });
        LockError::Invalid {
            at: format!("{}:{line}", path.display()),
            message: format!(
                "not valid TOML: {}",
                e.message().lines().next().unwrap_or_default()
            ),
        }
    })?;
    let reader = Reader {
        path,
        text,
        dir: path.parent().unwrap_or(Path::new(".")),
    };
    let project = doc.get("project").and_then(Value::as_table);
    let groups = doc.get("dependency-groups").and_then(Value::as_table);
    let dynamic: BTreeSet<&str> = project
        .and_then(|p| p.get("dynamic"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let refuse_dynamic = |key: &str| {
        invalid(format!(
            "[project] lists `{key}` as dynamic: only the project's build backend can say what it holds, and layerlock never runs one; list the requirements statically, or compile a requirements file"
        ))
    };
    let mut out = Vec::new();
    if let Some(project) = project {
        if dynamic.contains("dependencies") {
            return Err(refuse_dynamic("dependencies"));
        }
        let own_name = project.get("name").and_then(Value::as_str);
        out.extend(reader.list(project.get("dependencies"), "[project] dependencies")?);
        let optional = project.get("optional-dependencies");
        let wanted_extras = match &parts.extras {
            None => optional
                .and_then(Value::as_table)
                .map(|t| t.keys().cloned().collect())
                .unwrap_or_default(),
            Some(extras) => extras.clone(),
        };
        if !wanted_extras.is_empty() && dynamic.contains("optional-dependencies") {
            return Err(refuse_dynamic("optional-dependencies"));
        }
        let table = optional.and_then(Value::as_table);
        let mut seen = BTreeSet::new();
        let mut todo: Vec<(String, usize)> = wanted_extras.into_iter().map(|e| (e, 0)).collect();
        while let Some((extra, depth)) = todo.pop() {
            let normal = extra.to_lowercase().replace(['_', '.'], "-");
            if !seen.insert(normal.clone()) {
                continue;
            }
            if depth > MAX_NESTING {
                return Err(invalid(format!(
                    "extras name the project itself more than {MAX_NESTING} levels deep"
                )));
            }
            let Some((key, list)) = table.and_then(|t| {
                t.iter()
                    .find(|(k, _)| k.to_lowercase().replace(['_', '.'], "-") == normal)
            }) else {
                return Err(invalid(format!(
                    "--extra {extra}: [project.optional-dependencies] has no such extra"
                )));
            };
            for entry in reader.list(
                Some(list),
                &format!("[project.optional-dependencies] {key}"),
            )? {
                // `all = ["proj[a,b]"]`: the project's own extras, not a
                // package to install.
                let own = own_name.is_some_and(|n| {
                    n.parse::<uv_normalize::PackageName>().ok().as_ref()
                        == Some(&entry.requirement.name)
                });
                if own {
                    todo.extend(
                        entry
                            .requirement
                            .extras
                            .iter()
                            .map(|e| (e.to_string(), depth + 1)),
                    );
                } else {
                    out.push(entry);
                }
            }
        }
    } else if !matches!(&parts.extras, Some(e) if e.is_empty()) {
        return Err(invalid(
            "--extra / --all-extras: the file has no [project] table".to_string(),
        ));
    }
    for group in &parts.groups {
        reader.group(groups, group, 0, &mut Vec::new(), &mut out)?;
    }
    if project.is_none() && parts.groups.is_empty() {
        return Err(invalid(
            "no [project] table: nothing to resolve (pass --group NAME for [dependency-groups])"
                .to_string(),
        ));
    }
    Ok(out)
}

/// A project's core metadata from its static `[project]` table (PEP 621),
/// written as METADATA for the reader every wheel's goes through (see
/// [`layerlock_dist::from_pyproject`]). A field the project leaves
/// `dynamic` (its version too: nothing else says it) is refused with that
/// reason: only its build backend could say, and layerlock never runs one.
pub fn static_metadata(path: &Path, text: &str) -> Result<String, LockError> {
    layerlock_dist::from_pyproject(text, None).map_err(|why| LockError::Invalid {
        at: path.display().to_string(),
        message: format!(
            "{why}: only the project's build backend can say, and layerlock never runs one"
        ),
    })
}

struct Reader<'a> {
    path: &'a Path,
    text: &'a str,
    dir: &'a Path,
}

impl Reader<'_> {
    fn invalid(&self, message: String) -> LockError {
        LockError::Invalid {
            at: self.path.display().to_string(),
            message,
        }
    }

    /// The line a requirement string is written on: its first quoted
    /// occurrence (TOML values carry no positions once parsed).
    fn line_of(&self, requirement: &str) -> usize {
        ['"', '\'']
            .iter()
            .find_map(|q| self.text.find(&format!("{q}{requirement}{q}")))
            .map_or(1, |at| self.text[..at].lines().count().max(1))
    }

    /// A TOML array of requirement strings.
    fn list(&self, value: Option<&Value>, place: &str) -> Result<Vec<Entry>, LockError> {
        let Some(value) = value else {
            return Ok(Vec::new());
        };
        let Some(items) = value.as_array() else {
            return Err(self.invalid(format!("{place} must be a list of requirement strings")));
        };
        items
            .iter()
            .map(|item| {
                let Some(text) = item.as_str() else {
                    return Err(
                        self.invalid(format!("{place}: `{item}` is not a requirement string"))
                    );
                };
                self.requirement(text)
            })
            .collect()
    }

    fn requirement(&self, text: &str) -> Result<Entry, LockError> {
        let origin = Origin {
            path: self.path.to_path_buf(),
            line: self.line_of(text),
            column: 1,
        };
        parse_requirement(text, self.dir, &origin, 0)
    }

    /// PEP 735: a group's requirements and `{include-group = NAME}`s.
    fn group(
        &self,
        groups: Option<&toml::Table>,
        name: &str,
        depth: usize,
        path: &mut Vec<String>,
        out: &mut Vec<Entry>,
    ) -> Result<(), LockError> {
        let normal = |n: &str| n.to_lowercase().replace(['_', '.'], "-");
        if path.contains(&normal(name)) {
            return Err(self.invalid(format!(
                "[dependency-groups] {name} includes itself ({} -> {name})",
                path.join(" -> ")
            )));
        }
        if depth > MAX_NESTING {
            return Err(self.invalid(format!(
                "[dependency-groups] includes nest more than {MAX_NESTING} deep"
            )));
        }
        let Some((key, value)) =
            groups.and_then(|g| g.iter().find(|(k, _)| normal(k) == normal(name)))
        else {
            return Err(self.invalid(format!(
                "--group {name}: [dependency-groups] has no such group"
            )));
        };
        let Some(items) = value.as_array() else {
            return Err(self.invalid(format!("[dependency-groups] {key} must be a list")));
        };
        path.push(normal(name));
        for item in items {
            match item {
                Value::String(text) => out.push(self.requirement(text)?),
                Value::Table(t) => match t.get("include-group").and_then(Value::as_str) {
                    Some(included) if t.len() == 1 => {
                        self.group(groups, included, depth + 1, path, out)?;
                    }
                    _ => {
                        return Err(self.invalid(format!(
                            "[dependency-groups] {key}: `{item}` is neither a requirement string nor {{include-group = \"NAME\"}}"
                        )));
                    }
                },
                other => {
                    return Err(self.invalid(format!(
                        "[dependency-groups] {key}: `{other}` is not a requirement string"
                    )));
                }
            }
        }
        path.pop();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, parts: &ProjectParts) -> Result<Vec<String>, String> {
        parse_project(Path::new("pyproject.toml"), text, parts)
            .map(|e| e.iter().map(|e| e.requirement.to_string()).collect())
            .map_err(|e| e.to_string())
    }

    const PROJECT: &str = r#"
[project]
name = "Demo_App"
dependencies = ["requests>=2", "numpy; python_version >= '3.10'"]

[project.optional-dependencies]
fast = ["orjson"]
Test_Kit = ["pytest"]
all = ["demo-app[fast,test-kit]"]

[dependency-groups]
lint = ["ruff"]
dev = [{include-group = "lint"}, "mypy"]
loop-a = [{include-group = "loop-b"}]
loop-b = [{include-group = "loop-a"}]
"#;

    #[test]
    fn dependencies_extras_and_groups_are_read() {
        let plain = names(PROJECT, &ProjectParts::default()).unwrap();
        assert_eq!(
            plain,
            ["requests>=2", "numpy ; python_full_version >= '3.10'"]
        );
        let parts = ProjectParts {
            extras: Some(vec!["all".to_string()]),
            groups: vec!["dev".to_string()],
        };
        let all = names(PROJECT, &parts).unwrap();
        assert!(all.contains(&"orjson".to_string()), "{all:?}");
        assert!(all.contains(&"pytest".to_string()), "{all:?}");
        assert!(all.contains(&"ruff".to_string()), "{all:?}");
        assert!(all.contains(&"mypy".to_string()), "{all:?}");
        assert!(!all.iter().any(|r| r.starts_with("demo-app")), "{all:?}");
        let every = ProjectParts {
            extras: None,
            groups: Vec::new(),
        };
        assert_eq!(names(PROJECT, &every).unwrap().len(), 4);
    }

    #[test]
    fn static_metadata_reads_as_a_wheel_s() {
        let text = "[project]\nname = \"Demo\"\nversion = \"1.2\"\nrequires-python = \">=3.9\"\ndependencies = [\"a>=1\"]\n[project.optional-dependencies]\nx = [\"b; python_version < '4'\"]\n";
        let meta = static_metadata(Path::new("pyproject.toml"), text).unwrap();
        let parsed = layerlock_dist::CoreMetadata::parse(meta.as_bytes()).unwrap();
        assert_eq!(parsed.version.to_string(), "1.2");
        assert_eq!(parsed.requires_dist.len(), 1);
        assert_eq!(parsed.requires_all().count(), 2);
        assert_eq!(parsed.provides_extra.len(), 1);
        let dynamic = "[project]\nname = \"x\"\ndynamic = [\"version\"]\n";
        let err = static_metadata(Path::new("p"), dynamic)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`version` as dynamic"), "{err}");
    }

    #[test]
    fn dynamic_dependencies_are_refused_never_built() {
        let text = "[project]\nname = \"x\"\ndynamic = [\"dependencies\"]\n";
        let err = names(text, &ProjectParts::default()).unwrap_err();
        assert!(err.contains("dynamic"), "{err}");
        assert!(err.contains("never runs"), "{err}");
    }

    #[test]
    fn missing_extras_groups_and_cycles_are_named() {
        let extra = ProjectParts {
            extras: Some(vec!["nope".to_string()]),
            groups: Vec::new(),
        };
        assert!(
            names(PROJECT, &extra)
                .unwrap_err()
                .contains("no such extra")
        );
        let group = ProjectParts {
            extras: Some(Vec::new()),
            groups: vec!["loop-a".to_string()],
        };
        assert!(
            names(PROJECT, &group)
                .unwrap_err()
                .contains("includes itself")
        );
    }

    #[test]
    fn a_bad_requirement_is_named_at_its_line() {
        let text = "[project]\nname = \"x\"\ndependencies = [\n  \"ok\",\n  \"bad ===\",\n]\n";
        let err = names(text, &ProjectParts::default()).unwrap_err();
        assert!(err.starts_with("pyproject.toml:5"), "{err}");
    }
}
