//! Core metadata of a project from its source, read and never built: a
//! source distribution's `PKG-INFO` when it is static (Metadata-Version 2.2
//! or later, PEP 643, with `Requires-Dist` not `Dynamic`), else its static
//! `pyproject.toml` `[project]` table (PEP 621), else a declarative
//! `setup.cfg` beside a `setup.py` that computes nothing. Each answer is
//! METADATA text for [`crate::CoreMetadata::parse`], the reader every
//! wheel's goes through; when the dependencies are truly dynamic, the
//! answer is why, in words for the user.

use std::collections::BTreeSet;
use std::str::FromStr;

use toml::Value;

use crate::COMPUTED_EXTRA_FIELD;
use crate::setup_py;

/// The files of a project's source that say what it needs (each as found
/// at the top of the tree, bounded by the reader).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceFiles {
    pub pkg_info: Option<Vec<u8>>,
    pub pyproject: Option<Vec<u8>>,
    pub setup_cfg: Option<Vec<u8>>,
    pub setup_py: Option<Vec<u8>>,
}

/// What the static metadata of a project must not leave to its build
/// backend: each is needed to lock it.
const NEEDED: [&str; 3] = ["dependencies", "optional-dependencies", "requires-python"];

/// A `[project]` table as METADATA: name, version (the table's, else
/// `known_version`, which an sdist's file name and PKG-INFO give),
/// `requires-python`, each dependency, and each extra's with its
/// `extra == …` marker. A needed field left `dynamic` is refused.
pub fn from_pyproject(text: &str, known_version: Option<&str>) -> Result<String, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        format!(
            "pyproject.toml is not valid TOML: {}",
            e.message().lines().next().unwrap_or_default()
        )
    })?;
    let Some(project) = doc.get("project").and_then(Value::as_table) else {
        return Err("pyproject.toml has no [project] table".to_string());
    };
    let dynamic: BTreeSet<&str> = project
        .get("dynamic")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(field) = NEEDED.iter().find(|f| dynamic.contains(**f)) {
        return Err(format!("[project] lists `{field}` as dynamic"));
    }
    let field = |key: &str| -> Result<Option<&str>, String> {
        match project.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.contains(['\n', '\r']) => Ok(Some(s)),
            Some(_) => Err(format!("[project] `{key}` is not a one-line string")),
        }
    };
    let Some(name) = field("name")? else {
        return Err("[project] has no `name`".to_string());
    };
    let version = match (field("version")?, known_version) {
        (Some(v), _) => v,
        (None, Some(v)) => v,
        (None, None) if dynamic.contains("version") => {
            return Err("[project] lists `version` as dynamic".to_string());
        }
        (None, None) => return Err("[project] has no `version`".to_string()),
    };
    let mut out = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    if let Some(requires) = field("requires-python")? {
        out.push_str(&format!("Requires-Python: {requires}\n"));
    }
    let list = |place: &str, value: Option<&Value>| -> Result<Vec<String>, String> {
        let items = match value {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(_) => return Err(format!("{place} must be a list of requirement strings")),
        };
        items
            .iter()
            .map(|item| match item.as_str() {
                Some(r) if !r.contains(['\n', '\r']) => Ok(r.trim().to_string()),
                _ => Err(format!("{place}: `{item}` is not a requirement string")),
            })
            .collect()
    };
    for r in list("[project] dependencies", project.get("dependencies"))? {
        out.push_str(&format!("Requires-Dist: {r}\n"));
    }
    let extras = match project.get("optional-dependencies") {
        None => toml::Table::new(),
        Some(Value::Table(t)) => t.clone(),
        Some(_) => return Err("[project.optional-dependencies] must be a table".to_string()),
    };
    for (extra, items) in &extras {
        let place = format!("[project.optional-dependencies] {extra}");
        write_extra(&mut out, extra, &list(&place, Some(items))?)?;
    }
    Ok(out)
}

/// `Provides-Extra: EXTRA` and its requirements, each with the extra
/// joined to its own marker.
fn write_extra(out: &mut String, extra: &str, requirements: &[String]) -> Result<(), String> {
    check_extra_name(extra)?;
    out.push_str(&format!("Provides-Extra: {extra}\n"));
    write_under(out, Some(extra), "", requirements)
}

/// Each requirement with its own marker joined to `condition` (a marker,
/// or empty) and, under an extra, to `extra == 'EXTRA'`: how setuptools
/// writes an `extras_require` key `EXTRA:CONDITION` (an empty EXTRA makes
/// base requirements under the condition).
fn write_under(
    out: &mut String,
    extra: Option<&str>,
    condition: &str,
    requirements: &[String],
) -> Result<(), String> {
    let mut under = uv_pep508::MarkerTree::TRUE;
    if !condition.is_empty() {
        let marker = uv_pep508::MarkerTree::from_str(one_line(condition)?)
            .map_err(|e| format!("`{condition}` is not a marker: {e}"))?;
        under = under.and(marker);
    }
    if let Some(extra) = extra {
        let marker = uv_pep508::MarkerTree::from_str(&format!("extra == '{extra}'"))
            .map_err(|e| format!("`{extra}` is not an extra name: {e}"))?;
        under = under.and(marker);
    }
    for r in requirements {
        // The requirement is parsed and its marker joined to the extra's
        // as a tree: text spliced around it could close the parenthesis.
        let mut requirement = one_line(r).and_then(|r| {
            uv_pep508::Requirement::<uv_pep508::VerbatimUrl>::from_str(r)
                .map_err(|e| format!("`{r}` is not a requirement: {}", e.message))
        })?;
        requirement.marker = requirement.marker.and(under);
        out.push_str(&format!("Requires-Dist: {requirement}\n"));
    }
    Ok(())
}

/// A setuptools `extras_require` key, `EXTRA` or `EXTRA:CONDITION`, as
/// its extra (empty for base requirements under a condition) and its
/// condition (empty for none).
fn augmented(key: &str) -> (&str, &str) {
    let (extra, condition) = key.split_once(':').unwrap_or((key, ""));
    (extra.trim(), condition.trim())
}

/// An extra's name as METADATA may carry it in a header.
fn check_extra_name(extra: &str) -> Result<(), String> {
    if extra.is_empty()
        || !extra
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!("`{extra}` is not an extra name"));
    }
    Ok(())
}

/// `text` when it is one line: a value spanning two would write a header
/// of its own into the METADATA.
fn one_line(text: &str) -> Result<&str, String> {
    if text.contains(['\n', '\r']) {
        return Err(format!(
            "`{}` spans more than one line",
            text.lines().next().unwrap_or_default()
        ));
    }
    Ok(text.trim())
}

/// Words in a `setup.py` that compute what `setup.cfg` would say: with any
/// of them, the declarative file is not the whole story.
const SETUP_PY_COMPUTES: [&str; 4] = [
    "install_requires",
    "extras_require",
    "python_requires",
    "setup_requires",
];

/// A declarative `setup.cfg` (`[metadata] name`, `[options]
/// install_requires`, `python_requires`, `[options.extras_require]`) as
/// METADATA, when `setup.py` is absent or computes none of it.
pub fn from_setup_cfg(
    text: &str,
    setup_py: Option<&str>,
    name: &str,
    version: &str,
) -> Result<String, String> {
    if let Some(py) = setup_py {
        if let Some(word) = SETUP_PY_COMPUTES.iter().find(|w| py.contains(**w)) {
            return Err(format!("setup.py sets `{word}` in code"));
        }
        if let Some(why) = setup_py::indirect(py) {
            return Err(why);
        }
    }
    if text.contains("%(") {
        return Err(
            "setup.cfg interpolates values (`%(…)s`), which only its reader expands".to_string(),
        );
    }
    if text.replace("\r\n", "\n").contains('\r') {
        return Err("setup.cfg ends lines with a bare carriage return".to_string());
    }
    let sections = ini(text);
    if sections
        .iter()
        .any(|(section, _, _)| section.eq_ignore_ascii_case("DEFAULT"))
    {
        return Err(
            "setup.cfg has a [DEFAULT] section, whose keys hold in every section".to_string(),
        );
    }
    let get = |section: &str, key: &str| {
        sections
            .iter()
            .find(|(s, k, _)| s == section && k.replace('-', "_") == key)
            .map(|(_, _, v)| v.as_str())
    };
    // Neither file names a dependency: the project needs none.
    let requires = get("options", "install_requires").unwrap_or_default();
    let lines = |value: &str| -> Result<Vec<String>, String> {
        let out: Vec<String> = value
            .lines()
            .map(|l| l.split(" #").next().unwrap_or_default().trim().to_string())
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        if let Some(d) = out
            .iter()
            .find(|l| l.starts_with("file:") || l.starts_with("attr:"))
        {
            return Err(format!(
                "setup.cfg reads `{d}`, which is the build's to expand"
            ));
        }
        Ok(out)
    };
    let mut out = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    if let Some(python) = get("options", "python_requires") {
        out.push_str(&format!("Requires-Python: {}\n", one_line(python)?));
    }
    for r in lines(requires)? {
        out.push_str(&format!("Requires-Dist: {}\n", one_line(&r)?));
    }
    for (section, extra, value) in &sections {
        if section == "options.extras_require" {
            write_extra(&mut out, extra, &lines(value)?)?;
        }
    }
    Ok(out)
}

/// An INI file as (section, key, value) triples; a value continues on the
/// indented lines under it, as setuptools reads `setup.cfg`.
fn ini(text: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(last) = out.last_mut().filter(|l| l.0 == section) {
                last.2.push('\n');
                last.2.push_str(trimmed);
            }
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            section = name.trim().to_string();
            continue;
        }
        if let Some((key, value)) = trimmed.split_once(['=', ':']) {
            out.push((
                section.clone(),
                key.trim().to_string(),
                value.trim().to_string(),
            ));
        }
    }
    out
}

/// Whether a PKG-INFO may be trusted for the dependencies: Metadata-Version
/// 2.2 or later and none of `Requires-Dist`, `Requires-Python` and
/// `Provides-Extra` declared `Dynamic` (PEP 643).
fn static_pkg_info(header: &str) -> Result<(), String> {
    let mut version = None;
    let mut dynamic = Vec::new();
    for line in header.lines() {
        if line.is_empty() {
            break;
        }
        // Header names are case-insensitive, as the METADATA reader takes them.
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim().to_ascii_lowercase().as_str() {
            "metadata-version" => version = Some(value.trim().to_string()),
            "dynamic" => dynamic.push(value.trim().to_ascii_lowercase()),
            _ => {}
        }
    }
    let Some(version) = version else {
        return Err("its PKG-INFO has no Metadata-Version".to_string());
    };
    let parts: Vec<u32> = version.split('.').filter_map(|p| p.parse().ok()).collect();
    if parts.as_slice() < [2, 2].as_slice() {
        return Err(format!(
            "its PKG-INFO is Metadata-Version {version}, older than 2.2 (PEP 643), so it may not list the dependencies"
        ));
    }
    for field in ["requires-dist", "requires-python", "provides-extra"] {
        if dynamic.iter().any(|d| d == field) {
            return Err(format!(
                "its PKG-INFO declares `{field}` Dynamic (PEP 643): only the build can say"
            ));
        }
    }
    Ok(())
}

/// A `setup.py` whose one `setup()` call spells its dependencies as
/// literals (`install_requires=["a>=1", 'b']`, `extras_require={"x":
/// ["c"]}`, `python_requires=">=3.8"`), or names bound once to literals
/// above it, or names none at all: what it declares, as METADATA. An extra
/// whose requirements are computed is listed as a
/// [`crate::COMPUTED_EXTRA_FIELD`], so that only asking for it is refused.
/// Anything else (a computed base requirement, a second call, `**kwargs`)
/// is code, and refused with why.
fn from_setup_py(py: &str, name: &str, version: &str) -> Result<String, String> {
    let declared = setup_py::read(py)?;
    let mut out = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    if let Some(spec) = &declared.python_requires {
        out.push_str(&format!("Requires-Python: {}\n", one_line(spec)?));
    }
    for r in &declared.install_requires {
        out.push_str(&format!("Requires-Dist: {}\n", one_line(r)?));
    }
    // Every extra once, though several keys (`test`, `test:CONDITION`)
    // may name it; one computed key makes its whole extra unknown.
    let mut provided: Vec<&str> = Vec::new();
    let computed: Vec<&str> = declared
        .computed_extras
        .iter()
        .map(|(key, _)| augmented(key).0)
        .collect();
    for (key, requirements) in &declared.extras {
        let (extra, condition) = augmented(key);
        if extra.is_empty() && condition.is_empty() {
            // setuptools fails to build it: no extra, and no condition.
            return Err(format!(
                "its setup.py has an extras_require key `{key}` with neither an extra nor a condition"
            ));
        }
        if extra.is_empty() {
            write_under(&mut out, None, condition, requirements)?;
            continue;
        }
        check_extra_name(extra)?;
        if computed.contains(&extra) {
            continue;
        }
        if !provided.contains(&extra) {
            out.push_str(&format!("Provides-Extra: {extra}\n"));
            provided.push(extra);
        }
        write_under(&mut out, Some(extra), condition, requirements)?;
    }
    let mut unknown: Vec<&str> = Vec::new();
    for (key, code) in &declared.computed_extras {
        let extra = augmented(key).0;
        if extra.is_empty() {
            return Err(format!(
                "its setup.py computes requirements under the condition `{key}` (`{code}`)"
            ));
        }
        check_extra_name(extra)?;
        if !unknown.contains(&extra) {
            out.push_str(&format!("{COMPUTED_EXTRA_FIELD}: {extra}\n"));
            unknown.push(extra);
        }
    }
    if out.lines().any(|l| l.len() > 4096) {
        return Err("its setup.py has a requirement too long to read".to_string());
    }
    Ok(out)
}

/// The number of the rules [`sdist_metadata`] and [`sdist_settled`] follow,
/// together with how much of an archive the index client reads for them.
/// Its answers are cached under this number beside the sdist's sha256, so
/// bump it with every change that can turn an answer around (a file newly
/// read, a refusal lifted or added, a cap moved): a fixed reader must never
/// trust an old "dynamic" verdict, nor an old reader's acceptance.
pub const SOURCE_READER_VERSION: u32 = 10;

/// Whether the files seen so far, in an archive read from its start, settle
/// what [`sdist_metadata`] answers, whatever of the wanted files that was
/// not seen yet may still come (each comes at most once): a static PKG-INFO
/// settles it, as does a PKG-INFO that is not static beside a
/// pyproject.toml that has a `[project]` table or names a backend other
/// than setuptools (setup.cfg and setup.py are then never read), as do all
/// four files. The rest of the archive is then not read.
pub fn sdist_settled(files: &SourceFiles) -> bool {
    let Some(pkg_info) = &files.pkg_info else {
        return false;
    };
    if static_pkg_info(&String::from_utf8_lossy(pkg_info)).is_ok() {
        return true;
    }
    if let Some(pyproject) = &files.pyproject {
        let text = String::from_utf8_lossy(pyproject);
        let has_project =
            toml::from_str::<toml::Table>(&text).is_ok_and(|t| t.contains_key("project"));
        if has_project || foreign_backend(&text).is_some() {
            return true;
        }
    }
    files.setup_cfg.is_some() && files.setup_py.is_some() && files.pyproject.is_some()
}

/// A source distribution's metadata for `name` `version`: the first of its
/// static PKG-INFO, its static pyproject.toml, a declarative setup.cfg, a
/// setup.py that spells its dependencies as literals (or names none);
/// else why none serves.
pub fn sdist_metadata(files: &SourceFiles, name: &str, version: &str) -> Result<Vec<u8>, String> {
    let text = |bytes: &Option<Vec<u8>>| {
        bytes
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    };
    let mut reasons = Vec::new();
    match text(&files.pkg_info) {
        Some(pkg_info) => match static_pkg_info(&pkg_info) {
            Ok(()) => return Ok(pkg_info.into_bytes()),
            Err(why) => reasons.push(why),
        },
        None => reasons.push("it has no PKG-INFO".to_string()),
    }
    let pyproject = text(&files.pyproject);
    let has_project = pyproject
        .as_deref()
        .is_some_and(|p| toml::from_str::<toml::Table>(p).is_ok_and(|t| t.contains_key("project")));
    if let Some(pyproject) = pyproject.as_deref().filter(|_| has_project) {
        // With a [project] table, it is the metadata; what it leaves
        // dynamic only its backend fills in.
        return match from_pyproject(pyproject, Some(version)) {
            Ok(meta) => Ok(meta.into_bytes()),
            Err(why) => {
                reasons.push(why);
                Err(reasons.join("; "))
            }
        };
    }
    // setup.cfg and setup.py say what setuptools builds, and only then.
    if let Some(backend) = pyproject.as_deref().and_then(foreign_backend) {
        reasons.push(format!(
            "its build backend is `{backend}`, which only says by running"
        ));
        return Err(reasons.join("; "));
    }
    let cfg = text(&files.setup_cfg);
    let py = text(&files.setup_py);
    let sections = cfg.as_deref().map(ini).unwrap_or_default();
    let declarative = sections
        .iter()
        .any(|(section, _, _)| section.starts_with("options") || section == "metadata");
    let cfg_declares = sections
        .iter()
        .any(|(_, key, _)| setup_py::NEEDED.contains(&key.replace('-', "_").as_str()));
    if declarative {
        match from_setup_cfg(
            cfg.as_deref().unwrap_or_default(),
            py.as_deref(),
            name,
            version,
        ) {
            Ok(meta) => return Ok(meta.into_bytes()),
            Err(why) => reasons.push(why),
        }
        if cfg_declares {
            // Both files would have a say: only setuptools merges them.
            return Err(reasons.join("; "));
        }
    }
    match py {
        Some(py) => match from_setup_py(&py, name, version) {
            Ok(meta) => return Ok(meta.into_bytes()),
            Err(why) => reasons.push(why),
        },
        None => reasons.push("no setup.py".to_string()),
    }
    Err(reasons.join("; "))
}

/// The build backend a pyproject.toml names when it is not setuptools' own
/// (or names one in the tree, `backend-path`): then setup.cfg and setup.py
/// are not what builds the project.
fn foreign_backend(pyproject: &str) -> Option<String> {
    let doc: toml::Table = toml::from_str(pyproject).ok()?;
    let system = doc.get("build-system")?.as_table()?;
    if system.contains_key("backend-path") {
        return Some("a backend inside the sdist".to_string());
    }
    let backend = system.get("build-backend")?.as_str()?;
    (!matches!(
        backend,
        "setuptools.build_meta" | "setuptools.build_meta:__legacy__"
    ))
    .then(|| backend.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CoreMetadata;

    fn files(pkg_info: &str, pyproject: &str, cfg: &str, py: &str) -> SourceFiles {
        let some = |s: &str| (!s.is_empty()).then(|| s.as_bytes().to_vec());
        SourceFiles {
            pkg_info: some(pkg_info),
            pyproject: some(pyproject),
            setup_cfg: some(cfg),
            setup_py: some(py),
        }
    }

    fn deps(meta: &[u8]) -> Vec<String> {
        let parsed = CoreMetadata::parse(meta).unwrap();
        parsed.requires_all().map(ToString::to_string).collect()
    }

    #[test]
    fn a_static_pkg_info_is_taken_as_it_is() {
        let pkg = "Metadata-Version: 2.2\nName: a\nVersion: 1\nRequires-Dist: b>=1\n";
        let meta = sdist_metadata(&files(pkg, "", "", "setup()"), "a", "1").unwrap();
        assert_eq!(deps(&meta), ["b>=1"]);
    }

    #[test]
    fn a_dynamic_or_old_pkg_info_falls_back_to_pyproject_then_setup_cfg() {
        let dynamic = "Metadata-Version: 2.2\nName: a\nVersion: 1\nDynamic: Requires-Dist\n";
        let pyproject =
            "[project]\nname = \"a\"\ndynamic = [\"version\"]\ndependencies = [\"c\"]\n";
        let meta = sdist_metadata(&files(dynamic, pyproject, "", ""), "a", "1").unwrap();
        assert_eq!(deps(&meta), ["c"]);
        let old = "Metadata-Version: 2.1\nName: a\nVersion: 1\n";
        let cfg = "[metadata]\nname = a\n[options]\ninstall_requires =\n    d>=2\n    e; python_version < \"4\"\npython_requires = >=3.8\n[options.extras_require]\nfast = f\n";
        let meta = sdist_metadata(
            &files(old, "", cfg, "from setuptools import setup\nsetup()\n"),
            "a",
            "1",
        )
        .unwrap();
        let parsed = CoreMetadata::parse(&meta).unwrap();
        assert_eq!(parsed.requires_dist.len(), 2);
        assert_eq!(parsed.requires_all().count(), 3);
        assert!(parsed.requires_python.is_some());
    }

    #[test]
    fn extras_require_keys_with_conditions_are_read_as_setuptools_writes_them() {
        let old = "Metadata-Version: 2.1\nName: a\nVersion: 1\n";
        let py = "from setuptools import setup\nsetup(\n  install_requires=['b'],\n  extras_require={\n    ':sys_platform == \"win32\"': ['c'],\n    'x': ['d'],\n    'x:python_version < \"3.10\"': [\"e; os_name == 'nt'\"],\n    'y:python_version >= \"3\"': ['f'],\n    'z': make(),\n    'z:os_name == \"nt\"': ['g'],\n  },\n)\n";
        let meta = sdist_metadata(&files(old, "", "", py), "a", "1").unwrap();
        let text = String::from_utf8_lossy(&meta);
        let lines: Vec<&str> = text.lines().skip(3).collect();
        assert_eq!(
            lines,
            [
                "Requires-Dist: b",
                "Requires-Dist: c ; sys_platform == 'win32'",
                "Provides-Extra: x",
                "Requires-Dist: d ; extra == 'x'",
                "Requires-Dist: e ; python_full_version < '3.10' and os_name == 'nt' and extra == 'x'",
                "Provides-Extra: y",
                "Requires-Dist: f ; python_full_version >= '3' and extra == 'y'",
                "Layerlock-Computed-Extra: z",
            ],
            "{text}"
        );
    }

    #[test]
    fn a_setup_py_of_literals_says_what_it_needs() {
        let old = "Metadata-Version: 1.1\nName: a\nVersion: 1\n";
        let none =
            "from distutils.core import setup\nsetup(name='a', version='1', packages=['a'])\n";
        let meta = sdist_metadata(
            &files(old, "", "[egg_info]\ntag_date = 0\n", none),
            "a",
            "1",
        )
        .unwrap();
        assert!(deps(&meta).is_empty());
        let literal = "from setuptools import setup\nsetup(\n  name='a',\n  install_requires=[\n    'b>=1',  # why\n    \"c; python_version < '4'\",\n  ],\n  extras_require={'x': ['d']},\n  python_requires='>=3.6',\n)\n";
        let meta = sdist_metadata(&files(old, "", "", literal), "a", "1").unwrap();
        assert_eq!(deps(&meta).len(), 3, "{}", String::from_utf8_lossy(&meta));
        assert!(
            CoreMetadata::parse(&meta)
                .unwrap()
                .requires_python
                .is_some()
        );
        let about = "from setuptools import setup\nabout = {}\nexec(open('a/__about__.py').read(), about)\nsetup(version=about['v'], install_requires=['b'])\n";
        let meta = sdist_metadata(&files(old, "", "", about), "a", "1").unwrap();
        assert_eq!(deps(&meta), ["b"]);
        for (code, why) in [
            ("exec (x)\nsetup(name='a')", "calls `exec()`"),
            ("setup (**json.load(open('m')))", "`**`"),
            (
                "setup(install_requires=['a'] + (['b'] if x else []))",
                "computes",
            ),
            (
                "from setuptools import setup\nfrom _helpers import setup\nsetup(name='w')",
                "binds another setup()",
            ),
            (
                "import setuptools as s\ns.setup(name='w')",
                "does not call setuptools' own",
            ),
            (
                "deps = dict(install_requires=['b'])\nsetup(name='a')",
                "outside the setup() call",
            ),
            ("setup(**config)", "`**`"),
            (
                "setup(install_requires=deps)",
                "computes `install_requires`",
            ),
            ("setup(install_requires=[x for x in y])", "computes"),
            (
                "setup(extras_require={':sys_platform == \"win32\"': get()})",
                "computes requirements under the condition",
            ),
            (
                "setup(extras_require={'x:python_version <': ['y']})",
                "is not a marker",
            ),
            (
                "setup(extras_require={':': ['y']})",
                "neither an extra nor a condition",
            ),
            ("if x:\n setup()\nelse:\n setup()", "more than once"),
        ] {
            let code = if code.contains("import") {
                code.to_string()
            } else {
                format!("from setuptools import setup\n{code}")
            };
            let why_not = sdist_metadata(&files(old, "", "", &code), "a", "1").unwrap_err();
            assert!(why_not.contains(why), "{code}: {why_not}");
        }
    }

    #[test]
    fn what_only_the_build_could_say_is_never_guessed() {
        let old = "Metadata-Version: 2.1\nName: a\nVersion: 1\n";
        // A Poetry sdist: setup.cfg is flake8's, not the metadata.
        let poetry = "[build-system]\nrequires = [\"poetry-core\"]\nbuild-backend = \"poetry.core.masonry.api\"\n[tool.poetry.dependencies]\nsix = \"*\"\n";
        let why = sdist_metadata(
            &files(old, poetry, "[flake8]\nmax-line-length = 99\n", ""),
            "a",
            "1",
        )
        .unwrap_err();
        assert!(why.contains("poetry.core.masonry.api"), "{why}");
        // A continuation line cannot write a header of its own.
        let cfg = "[options]\npython_requires =\n    >=3\n    Requires-Dist: six\n";
        assert!(sdist_metadata(&files(old, "", cfg, ""), "a", "1").is_err());
        // An extra's marker stays inside its extra.
        let cfg =
            "[options]\n[options.extras_require]\nx = six; python_version>'0') or ('a'=='a'\n";
        match sdist_metadata(&files(old, "", cfg, ""), "a", "1") {
            Ok(meta) => assert!(deps(&meta).iter().all(|d| d.contains("extra")), "{meta:?}"),
            Err(why) => assert!(why.contains("not a requirement"), "{why}"),
        }
        // Header names are case-insensitive.
        let dynamic = "Metadata-Version: 2.2\nName: a\nVersion: 1\ndynamic: Requires-Dist\n";
        assert!(sdist_metadata(&files(dynamic, "", "", ""), "a", "1").is_err());
        // configparser's [DEFAULT] holds in [options] too.
        let cfg = "[DEFAULT]\ninstall_requires = six\n[options]\n";
        assert!(sdist_metadata(&files(old, "", cfg, ""), "a", "1").is_err());
        // Two files with a say: only setuptools merges them.
        let cfg = "[options]\npython_requires = >=3.13\n";
        let py = "from setuptools import setup\nsetup(install_requires=['b'])\n";
        assert!(sdist_metadata(&files(old, "", cfg, py), "a", "1").is_err());
    }

    #[test]
    fn code_that_computes_the_dependencies_is_refused_with_every_reason() {
        let old = "Metadata-Version: 2.1\nName: a\nVersion: 1\n";
        let why = sdist_metadata(
            &files(
                old,
                "",
                "",
                "from setuptools import setup\nsetup(install_requires=deps())",
            ),
            "a",
            "1",
        )
        .unwrap_err();
        assert!(why.contains("older than 2.2"), "{why}");
        assert!(why.contains("computes `install_requires`"), "{why}");
        let cfg = "[options]\ninstall_requires = x\n";
        let why = sdist_metadata(
            &files(
                old,
                "",
                cfg,
                "from setuptools import setup\nsetup(install_requires=[])",
            ),
            "a",
            "1",
        )
        .unwrap_err();
        assert!(why.contains("setup.py sets `install_requires`"), "{why}");
        let cfg = "[options]\ninstall_requires = file: requirements.txt\n";
        let why = sdist_metadata(&files(old, "", cfg, ""), "a", "1").unwrap_err();
        assert!(why.contains("file: requirements.txt"), "{why}");
    }

    /// An sdist as the three real ones that led here ship: an old PKG-INFO,
    /// a setup.cfg of `[egg_info]` only, and the setup.py.
    fn legacy(py: &str) -> Result<CoreMetadata, String> {
        let old = "Metadata-Version: 1.2\nName: a\nVersion: 1\n";
        let cfg = "[egg_info]\ntag_build = \ntag_date = 0\n";
        sdist_metadata(&files(old, "", cfg, py), "a", "1")
            .map(|meta| CoreMetadata::parse(&meta).unwrap())
    }

    fn names(meta: &CoreMetadata) -> Vec<String> {
        meta.requires_all().map(ToString::to_string).collect()
    }

    #[test]
    fn the_shapes_that_were_refused_now_read() {
        // A comment inside the call holding `:(`, no dependencies at all.
        let py = "import setuptools.command.develop\nfrom setuptools import setup\n\n\
            class Dev(setuptools.command.develop.develop):\n    def run(self):\n        \
            pass\n\nsetup(\n    name='a',\n    # no non-ascii here :(\n    \
            py_modules=['a'],\n    cmdclass={'develop': Dev},\n)\n";
        assert!(names(&legacy(py).unwrap()).is_empty());
        // An escaped quote before a plain install_requires.
        let py = "from setuptools import setup\nsetup(name='a', \
            description='Ported from B\\'s detector.', install_requires=['six'])\n";
        assert_eq!(names(&legacy(py).unwrap()), ["six"]);
        // A computed test extra: the rest is known, the extra is listed.
        let py = "from setuptools import setup\ntests_require = ['pytest']\n\
            if PY3:\n    tests_require += ['pytest-asyncio']\n\
            setup(name='a', extras_require={'test': tests_require, 'fast': ['c']},\n      \
            install_requires=[\"typing; python_version < '3.5'\", 'six'])\n";
        let meta = legacy(py).unwrap();
        assert_eq!(meta.requires_dist.len(), 2);
        assert_eq!(meta.provides_extra.len(), 1);
        assert_eq!(meta.provides_extra[0].as_ref(), "fast");
        assert_eq!(meta.computed_extras.len(), 1);
        assert_eq!(meta.computed_extras[0].as_ref(), "test");
    }

    #[test]
    fn strings_comments_and_names_read_as_python_reads_them() {
        let ok = [
            (
                "description='''Use it: setup(name='x')\n) and ( (''',\n    install_requires=['b']",
                vec!["b"],
            ),
            (
                "pattern=r'\\'', other=r'\\\\', install_requires=['b']  # ) (",
                vec!["b"],
            ),
            ("version=f'{V}.0', install_requires=['b']", vec!["b"]),
            ("install_requires=['b' 'c']", vec!["bc"]),
        ];
        for (args, want) in ok {
            let py = format!("from setuptools import setup\nV = '1'\nsetup({args}\n)\n");
            let meta = legacy(&py).unwrap_or_else(|why| panic!("{py}: {why}"));
            assert_eq!(names(&meta), want, "{py}");
        }
        let py = "from setuptools import setup\nREQS = [\n    'b>=1',\n    'c',\n]\n\
            setup(install_requires=REQS)\n";
        assert_eq!(names(&legacy(py).unwrap()), ["b>=1", "c"]);
        let py = "from setuptools import setup\n\
            setup(install_requires=open('req.txt').read().splitlines())\n";
        let why = legacy(py).unwrap_err();
        let clear =
            "its setup.py computes `install_requires` (`open('req.txt').read().splitlines()`)";
        assert!(why.contains(clear), "{why}");
        let py = "from setuptools import setup\n\
            setup(extras_require={'a': ['x'], 'test': tests_require})\n";
        let meta = legacy(py).unwrap();
        assert_eq!(meta.provides_extra[0].as_ref(), "a");
        assert_eq!(meta.computed_extras[0].as_ref(), "test");
        assert_eq!(names(&meta), ["x ; extra == 'a'"]);
    }

    #[test]
    fn what_settles_an_answer_is_what_no_later_file_can_change() {
        let dynamic = "Metadata-Version: 2.1\nName: a\nVersion: 1\n";
        let fixed = "Metadata-Version: 2.2\nName: a\nVersion: 1\nRequires-Dist: b\n";
        let project = "[project]\nname = \"a\"\ndependencies = [\"c\"]\n";
        let flit = "[build-system]\nbuild-backend = \"flit_core.buildapi\"\n";
        let setuptools = "[build-system]\nbuild-backend = \"setuptools.build_meta\"\n";
        for (files, settled) in [
            (files(fixed, "", "", ""), true),
            (files(dynamic, project, "", ""), true),
            (files(dynamic, flit, "", ""), true),
            (files(dynamic, setuptools, "[options]\n", "setup()"), true),
            // A PKG-INFO may still come and win.
            (files("", project, "[options]\n", "setup()"), false),
            (files(dynamic, "", "", ""), false),
            (files(dynamic, setuptools, "[options]\n", ""), false),
            (files(dynamic, setuptools, "", "setup()"), false),
        ] {
            assert_eq!(sdist_settled(&files), settled, "{files:?}");
            if settled {
                // Each file not yet seen, added, leaves the answer as it was.
                let answer = sdist_metadata(&files, "a", "1");
                let mut more = files.clone();
                for (slot, text) in [
                    (
                        &mut more.pyproject,
                        "[project]\nname = \"a\"\ndependencies = [\"x\"]\n",
                    ),
                    (&mut more.setup_cfg, "[options]\ninstall_requires = y\n"),
                    (&mut more.setup_py, "setup(install_requires=['z'])"),
                ] {
                    slot.get_or_insert_with(|| text.as_bytes().to_vec());
                }
                assert_eq!(sdist_metadata(&more, "a", "1"), answer, "{files:?}");
            }
        }
    }
}
