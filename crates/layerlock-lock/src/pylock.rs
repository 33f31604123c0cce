//! A lock as PEP 751 `pylock.toml`: what pip, uv and Dependabot read. Each
//! package lists the files its hashes stand for, with URL, size and upload
//! time, so `cooldown` can judge a lock without asking an index. The
//! target, bases and regenerate command go under `[tool.layerlock]`.

use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;

use jiff::Timestamp;
use toml::Value;
use uv_normalize::PackageName;
use uv_pep440::Version;
use uv_pep508::MarkerTree;

use layerlock_dist::sha256_digest;

use crate::error::LockError;
use crate::model::{
    BaseUse, DirectSource, Header, Lock, LockFormat, LockTarget, LockedFile, LockedPackage,
    one_line,
};

/// Read a `pylock.toml`. A package is locked from index files by hash, or
/// from a git commit (`vcs`, at a full `commit-id`) or a `directory`;
/// one from an archive URL, or a `vcs` that is not git, is refused.
pub(crate) fn read(path: &Path, text: &str) -> Result<Lock, LockError> {
    let bad = |line: usize, message: String| invalid(path, line, message);
    let doc = document(path, text)?;
    let header = header(path, &doc)?;
    // Where each `[[packages]]` table starts, for messages.
    let starts = package_lines(text);
    let empty = Vec::new();
    let tables = match doc.get("packages") {
        None => &empty,
        Some(Value::Array(a)) => a,
        Some(_) => return Err(bad(1, "`packages` is not an array of tables".to_string())),
    };
    let mut packages = Vec::with_capacity(tables.len());
    let mut seen = std::collections::BTreeMap::new();
    for (i, table) in tables.iter().enumerate() {
        let line = starts.get(i).copied().unwrap_or(1);
        let package = package(path, table, line, &mut seen)?;
        packages.push(package);
    }
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Lock {
        path: path.to_path_buf(),
        format: LockFormat::Pylock,
        header,
        packages,
        base_used: Vec::new(),
    })
}

/// The strings of an array; anything else reads as none.
fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// What the lock says of itself: `[tool.layerlock]` (target, bases,
/// owned, command), `requires-python` and `environments`.
fn header(path: &Path, doc: &toml::Table) -> Result<Header, LockError> {
    let tool = doc
        .get("tool")
        .and_then(|t| t.get("layerlock"))
        .and_then(Value::as_table);
    // A target that is there but unreadable must not count as no target:
    // it is what install and verify check the interpreter against.
    let mut targets = Vec::new();
    if let Some(t) = tool.and_then(|t| t.get("target")) {
        targets.push(lock_target(path, t)?);
    }
    match tool.and_then(|t| t.get("targets")) {
        None => {}
        Some(Value::Array(items)) => {
            for t in items {
                targets.push(lock_target(path, t)?);
            }
        }
        Some(_) => {
            return Err(invalid(
                path,
                1,
                "[tool.layerlock] targets must be an array of { python = \"3.12\", platform = \"…\" }"
                    .to_string(),
            ));
        }
    }
    let mut header = Header {
        targets,
        bases: strings(tool.and_then(|t| t.get("bases"))),
        owned: strings(tool.and_then(|t| t.get("owned"))),
        replaces: strings(tool.and_then(|t| t.get("replaces"))),
        unchecked: strings(tool.and_then(|t| t.get("unchecked"))),
        walked_back: strings(tool.and_then(|t| t.get("walked-back"))),
        command: tool
            .and_then(|t| t.get("command"))
            .and_then(Value::as_str)
            .map(str::to_string),
        description: None,
        environments: Vec::new(),
        requires_python: doc
            .get("requires-python")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    header.environments = environments(path, doc)?;
    Ok(header)
}

/// One `{ python = "3.12", platform = "…" }` of `[tool.layerlock]`.
fn lock_target(path: &Path, t: &Value) -> Result<LockTarget, LockError> {
    t.get("python")
        .and_then(Value::as_str)
        .zip(t.get("platform").and_then(Value::as_str))
        .map(|(python, platform)| LockTarget {
            python: python.to_string(),
            platform: platform.to_string(),
        })
        .ok_or_else(|| {
            invalid(
                path,
                1,
                "[tool.layerlock] target must be { python = \"3.12\", platform = \"…\" }"
                    .to_string(),
            )
        })
}

/// One `[[packages]]` table starting at `line`: a released version, with
/// its files, each hash-pinned, and (without a marker) not in `seen` yet.
fn package(
    path: &Path,
    table: &Value,
    line: usize,
    seen: &mut std::collections::BTreeMap<PackageName, String>,
) -> Result<LockedPackage, LockError> {
    let bad = |line: usize, message: String| invalid(path, line, message);
    let origin = format!("{}:{line}", path.display());
    let get = |key: &str| table.get(key);
    let (name, version, marker) = head(path, table, line)?;
    if get("archive").is_some() {
        return Err(bad(
            line,
            format!(
                "{name} is locked from an archive URL; layerlock installs files from an index by hash, or a git commit or directory (lock a released version)"
            ),
        ));
    }
    let direct = direct_source(table, &name, line, &bad)?;
    let version = version.ok_or_else(|| {
        bad(
            line,
            format!("{name} has no valid `version`; a lock pins exact versions"),
        )
    })?;
    if marker.is_true()
        && let Some(first) = seen.insert(name.clone(), origin.clone())
    {
        return Err(bad(
            line,
            format!("{name} is locked twice (also at {first}); a lock pins each package once"),
        ));
    }
    let mut files = Vec::new();
    let wheels = match get("wheels") {
        None => &[][..],
        Some(Value::Array(wheels)) => wheels.as_slice(),
        Some(_) => {
            return Err(bad(
                line,
                format!("{name}: `wheels` must be an array of tables ([[packages.wheels]])"),
            ));
        }
    };
    for wheel in wheels {
        files.push(file(wheel, &name, line, &bad)?);
    }
    match get("sdist") {
        None => {}
        Some(sdist @ Value::Table(_)) => files.push(file(sdist, &name, line, &bad)?),
        Some(_) => {
            return Err(bad(line, format!("{name}: `sdist` must be a table")));
        }
    }
    if files.is_empty() && direct.is_none() {
        return Err(bad(
            line,
            format!("{name} {version} lists no wheels and no sdist"),
        ));
    }
    let mut hashes = Vec::new();
    for f in &files {
        let Some(sha) = &f.sha256 else {
            return Err(bad(
                line,
                format!(
                    "{name}: {} has no sha256 hash; a lock is hash-pinned",
                    f.name
                ),
            ));
        };
        hashes.push(format!("sha256:{sha}"));
    }
    hashes.sort();
    hashes.dedup();
    let via = strings(
        get("tool")
            .and_then(|t| t.get("layerlock"))
            .and_then(|t| t.get("via")),
    );
    Ok(LockedPackage {
        name,
        version,
        marker,
        hashes,
        files,
        via,
        origin,
        direct,
    })
}

/// A package's `[packages.vcs]` (git, at a full `commit-id`) or
/// `[packages.directory]`.
fn direct_source(
    table: &Value,
    name: &PackageName,
    line: usize,
    bad: &dyn Fn(usize, String) -> LockError,
) -> Result<Option<DirectSource>, LockError> {
    let text = |t: &Value, key: &str| -> Result<Option<String>, LockError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad(line, format!("{name}: `{key}` is not a string"))),
        }
    };
    if let Some(vcs) = table.get("vcs") {
        if !vcs.is_table() {
            return Err(bad(line, format!("{name}: `vcs` must be a table")));
        }
        if text(vcs, "type")?.as_deref() != Some("git") {
            return Err(bad(
                line,
                format!("{name}: only git is read of `vcs` sources"),
            ));
        }
        let (Some(url), Some(commit)) = (text(vcs, "url")?, text(vcs, "commit-id")?) else {
            return Err(bad(
                line,
                format!("{name}: a git source needs `url` and the `commit-id` it is pinned to"),
            ));
        };
        if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad(
                line,
                format!("{name}: `commit-id` is not a full commit id"),
            ));
        }
        let subdirectory = text(vcs, "subdirectory")?;
        let requested = text(vcs, "requested-revision")?;
        let outside = subdirectory
            .as_deref()
            .is_some_and(|s| s.is_empty() || s.starts_with('/') || s.split('/').any(|p| p == ".."));
        let unsafe_text = [Some(&url), subdirectory.as_ref(), requested.as_ref()]
            .into_iter()
            .flatten()
            .find_map(|t| crate::model::unsafe_source_text(t));
        if let Some(why) = unsafe_text {
            return Err(bad(
                line,
                format!("{name}: its git source cannot be used: {why}"),
            ));
        }
        if outside || url.starts_with('-') {
            return Err(bad(
                line,
                format!("{name}: its git source points outside the repository or at an option"),
            ));
        }
        return Ok(Some(DirectSource::Git {
            url,
            requested,
            commit: commit.to_ascii_lowercase(),
            subdirectory,
        }));
    }
    if let Some(dir) = table.get("directory") {
        let Some(path) = dir
            .is_table()
            .then(|| text(dir, "path"))
            .transpose()?
            .flatten()
        else {
            return Err(bad(line, format!("{name}: `directory` needs a `path`")));
        };
        if path.chars().any(char::is_control) {
            return Err(bad(
                line,
                format!("{name}: its directory path holds a control character"),
            ));
        }
        return Ok(Some(DirectSource::Directory { path }));
    }
    Ok(None)
}

/// The lock's `environments`, parsed, after `requires-python` and
/// `environments` are checked for their types. A field of the wrong type is
/// an error naming it, never left out: an `environments` read as empty
/// would let the lock install, or count as a base, anywhere.
fn environments(path: &Path, doc: &toml::Table) -> Result<Vec<MarkerTree>, LockError> {
    let bad = |message: &str| invalid(path, 1, message.to_string());
    if doc.get("requires-python").is_some_and(|v| !v.is_str()) {
        return Err(bad("`requires-python` is not a string"));
    }
    let items = match doc.get("environments") {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) if items.iter().all(Value::is_str) => items,
        Some(_) => return Err(bad("`environments` is not an array of marker strings")),
    };
    items
        .iter()
        .filter_map(Value::as_str)
        .map(|env| {
            parse_marker(env).map_err(|e| {
                invalid(
                    path,
                    1,
                    format!("environments: `{}` is not a marker: {e}", short(env)),
                )
            })
        })
        .collect()
}

fn invalid(path: &Path, line: usize, message: String) -> LockError {
    LockError::Invalid {
        at: format!("{}:{line}", path.display()),
        message,
    }
}

/// Parse the TOML and check its `lock-version`.
fn document(path: &Path, text: &str) -> Result<toml::Table, LockError> {
    let bad = |line: usize, message: String| invalid(path, line, message);
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        // The line holding the error's first byte.
        let line = e.span().map_or(1, |s| {
            text.as_bytes()[..s.start.min(text.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1
        });
        bad(line, format!("not valid TOML: {}", e.message().trim()))
    })?;
    match doc.get("lock-version") {
        Some(Value::String(v)) if major_one(v) => {}
        Some(Value::String(v)) => {
            return Err(bad(
                1,
                format!("lock-version `{v}` is not one this layerlock reads (1.x)"),
            ));
        }
        Some(_) => {
            return Err(bad(
                1,
                "`lock-version` must be a string such as \"1.0\"".to_string(),
            ));
        }
        None => {
            return Err(bad(
                1,
                "no `lock-version`; is this a PEP 751 pylock.toml?".to_string(),
            ));
        }
    }
    Ok(doc)
}

/// Line numbers of the `[[packages]]` headers, in order, for messages.
fn package_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "[[packages]]")
        .map(|(i, _)| i + 1)
        .collect()
}

/// What every reader takes from a `[[packages]]` table: its name, its
/// version when it has one, and its marker.
fn head(
    path: &Path,
    table: &Value,
    line: usize,
) -> Result<(PackageName, Option<Version>, MarkerTree), LockError> {
    let name = table
        .get("name")
        .and_then(Value::as_str)
        .and_then(|n| PackageName::from_str(n).ok())
        .ok_or_else(|| invalid(path, line, "a package without a valid `name`".to_string()))?;
    let version = match table.get("version") {
        None => None,
        Some(v) => Some(
            v.as_str()
                .and_then(|v| Version::from_str(v).ok())
                .ok_or_else(|| {
                    invalid(path, line, format!("{name}: `version` is not a version"))
                })?,
        ),
    };
    let marker = match table.get("marker") {
        Some(Value::String(m)) => parse_marker(m).map_err(|e| {
            invalid(
                path,
                line,
                format!("{name}: `{}` is not a marker: {e}", short(m)),
            )
        })?,
        Some(_) => {
            return Err(invalid(
                path,
                line,
                format!("{name}: `marker` is not a string"),
            ));
        }
        None => MarkerTree::TRUE,
    };
    Ok((name, version, marker))
}

/// A marker, refused past the limits the requirements reader keeps: the
/// marker parser recurses per parenthesis (50,000 overflow the stack), and
/// rendering a wide or multiplied-out marker takes minutes.
fn parse_marker(text: &str) -> Result<MarkerTree, String> {
    if let Some(refusal) = layerlock_dist::MarkerWeight::of(text).refusal() {
        return Err(refusal.to_string());
    }
    let marker = MarkerTree::from_str(text).map_err(|e| e.to_string())?;
    match layerlock_dist::written_refusal(&marker) {
        Some(refusal) => Err(refusal.to_string()),
        None => Ok(marker),
    }
}

/// A value as a message quotes it: its first 80 characters.
fn short(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// One package of a pylock.toml read as a base: what the image has.
pub(crate) struct BaseEntry {
    pub name: PackageName,
    /// `None` for a project installed from a directory, VCS or archive
    /// without a version.
    pub version: Option<Version>,
    pub marker: MarkerTree,
    pub line: usize,
}

/// A pylock.toml as a base. Unlike a lock to install, any package counts,
/// however it was installed (uv writes the project itself as a
/// `directory` package). With a `target`, a lock whose `environments`
/// exclude it is an error.
pub(crate) fn base_entries(
    path: &Path,
    text: &str,
    target: Option<&uv_pep508::MarkerEnvironment>,
) -> Result<Vec<BaseEntry>, LockError> {
    let doc = document(path, text)?;
    // A base locked for other environments pins nothing for this target;
    // taking its pins anyway would hide what the target's image lacks.
    // Without a target (the pins a lock names) the fields are still read.
    let environments = environments(path, &doc)?;
    let excluded = |markers| !environments.iter().any(|m| m.evaluate(markers, &[]));
    if !environments.is_empty() && target.is_some_and(excluded) {
        return Err(invalid(
            path,
            1,
            "its `environments` do not include the target; lock the base for this Python and platform, or pick the base that was".to_string(),
        ));
    }
    let starts = package_lines(text);
    let Some(tables) = doc.get("packages") else {
        return Ok(Vec::new());
    };
    let Some(tables) = tables.as_array() else {
        return Err(invalid(
            path,
            1,
            "`packages` is not an array of tables".to_string(),
        ));
    };
    let mut out = Vec::with_capacity(tables.len());
    for (i, table) in tables.iter().enumerate() {
        let line = starts.get(i).copied().unwrap_or(1);
        let (name, version, marker) = head(path, table, line)?;
        out.push(BaseEntry {
            name,
            version,
            marker,
            line,
        });
    }
    Ok(out)
}

fn file(
    value: &Value,
    package: &PackageName,
    line: usize,
    bad: &dyn Fn(usize, String) -> LockError,
) -> Result<LockedFile, LockError> {
    let url = value.get("url").and_then(Value::as_str).map(str::to_string);
    let local = value.get("path").and_then(Value::as_str);
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .or_else(|| {
            url.as_deref()
                .or(local)
                .and_then(|u| u.rsplit('/').next())
                .filter(|n| !n.is_empty())
        })
        .ok_or_else(|| bad(line, format!("{package}: a file with no name, url or path")))?
        .to_string();
    let upload_time = match value.get("upload-time") {
        None => None,
        Some(t) => {
            let text = match t {
                Value::Datetime(d) => d.to_string(),
                Value::String(s) => s.clone(),
                _ => String::new(),
            };
            Some(Timestamp::from_str(&text).map_err(|_| {
                bad(
                    line,
                    format!("{package}: {name}: upload-time `{text}` is not a UTC date and time"),
                )
            })?)
        }
    };
    Ok(LockedFile {
        url,
        path: local.map(str::to_string),
        size: value
            .get("size")
            .and_then(Value::as_integer)
            .and_then(|s| u64::try_from(s).ok()),
        upload_time,
        sha256: match value
            .get("hashes")
            .and_then(|h| h.get("sha256"))
            .and_then(Value::as_str)
        {
            None => None,
            Some(sha) => Some(sha256_digest(sha).ok_or_else(|| {
                bad(
                    line,
                    format!("{package}: {name}: the sha256 hash is not 64 hex digits"),
                )
            })?),
        },
        name,
    })
}

/// `1.0`, `1.3`: a 1.x lock-version (PEP 751: a reader refuses another
/// major version).
fn major_one(version: &str) -> bool {
    version.split_once('.').is_some_and(|(major, minor)| {
        major == "1" && !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit())
    })
}

/// `text` as a TOML basic string: quoted, with quotes, backslashes and
/// control characters escaped.
pub fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| toml_string(i)).collect();
    format!("[{}]", quoted.join(", "))
}

/// Render `lock` as `pylock.toml`; `output` is how the install line names
/// the file.
pub(crate) fn render(lock: &Lock, output: &str) -> String {
    let mut out = String::new();
    let h = &lock.header;
    if let Some(description) = &h.description {
        let _ = writeln!(
            out,
            "# This file was generated by layerlock for {}.",
            one_line(description)
        );
        out.push_str("# It holds only what the base does not provide. To regenerate it, run:\n");
        let command = h.command.as_deref().unwrap_or("layerlock");
        let _ = writeln!(out, "#    {}", one_line(command));
        out.push_str("# Install it with (hash-checked; nothing installed is changed):\n");
        let _ = writeln!(out, "#    layerlock install {}", one_line(output));
    }
    out.push_str("lock-version = \"1.0\"\n");
    if !h.environments.is_empty() {
        let envs: Vec<String> = h
            .environments
            .iter()
            .filter_map(|m| m.contents().map(|c| c.to_string()))
            .collect();
        let _ = writeln!(out, "environments = {}", list(&envs));
    }
    // One Python for every target: that minor version. Several: their
    // `environments` and markers say which is which.
    if let Some(first) = h.targets.first()
        && h.targets.iter().all(|t| t.python == first.python)
    {
        let _ = writeln!(
            out,
            "requires-python = {}",
            toml_string(&format!("=={}.*", first.python))
        );
    }
    out.push_str("created-by = \"layerlock\"\n");
    let mut packages: Vec<&LockedPackage> = lock.packages.iter().collect();
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    for p in packages {
        write_package(&mut out, p);
    }
    write_tool(&mut out, lock);
    out
}

/// One `[[packages]]` table with its source, files and `via`.
fn write_package(out: &mut String, p: &LockedPackage) {
    out.push_str("\n[[packages]]\n");
    let _ = writeln!(out, "name = {}", toml_string(p.name.as_ref()));
    let _ = writeln!(out, "version = {}", toml_string(&p.version.to_string()));
    if let Some(marker) = p.marker.contents() {
        let _ = writeln!(out, "marker = {}", toml_string(&marker.to_string()));
    }
    match &p.direct {
        Some(DirectSource::Git {
            url,
            requested,
            commit,
            subdirectory,
        }) => {
            out.push_str("\n[packages.vcs]\ntype = \"git\"\n");
            let _ = writeln!(out, "url = {}", toml_string(url));
            if let Some(requested) = requested {
                let _ = writeln!(out, "requested-revision = {}", toml_string(requested));
            }
            let _ = writeln!(out, "commit-id = {}", toml_string(commit));
            if let Some(sub) = subdirectory {
                let _ = writeln!(out, "subdirectory = {}", toml_string(sub));
            }
        }
        Some(DirectSource::Directory { path }) => {
            out.push_str("\n[packages.directory]\n");
            let _ = writeln!(out, "path = {}", toml_string(path));
        }
        None => {}
    }
    let mut files: Vec<&LockedFile> = p.files.iter().collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    for f in files.iter().filter(|f| f.is_wheel()) {
        out.push_str("\n[[packages.wheels]]\n");
        write_file(out, f);
    }
    // PEP 751 allows one sdist per package.
    if let Some(sdist) = files.iter().find(|f| !f.is_wheel()) {
        out.push_str("\n[packages.sdist]\n");
        write_file(out, sdist);
    }
    let mut via = p.via.clone();
    via.sort();
    via.dedup();
    if !via.is_empty() {
        out.push_str("\n[packages.tool.layerlock]\n");
        let _ = writeln!(out, "via = {}", list(&via));
    }
}

/// `[tool.layerlock]`: targets, bases, owned and replaced packages, what
/// was not checked, the command, and the base pins the layer relies on.
fn write_tool(out: &mut String, lock: &Lock) {
    let h = &lock.header;
    out.push_str("\n[tool.layerlock]\n");
    let inline = |t: &LockTarget| {
        format!(
            "{{ python = {}, platform = {} }}",
            toml_string(&t.python),
            toml_string(&t.platform)
        )
    };
    match h.targets.as_slice() {
        [] => {}
        [one] => {
            let _ = writeln!(out, "target = {}", inline(one));
        }
        many => {
            out.push_str("targets = [\n");
            for t in many {
                let _ = writeln!(out, "    {},", inline(t));
            }
            out.push_str("]\n");
        }
    }
    let _ = writeln!(out, "bases = {}", list(&h.bases));
    let _ = writeln!(out, "owned = {}", list(&h.owned));
    if !h.replaces.is_empty() {
        let _ = writeln!(out, "replaces = {}", list(&h.replaces));
    }
    if !h.unchecked.is_empty() {
        let _ = writeln!(out, "unchecked = {}", list(&h.unchecked));
    }
    if !h.walked_back.is_empty() {
        let _ = writeln!(out, "walked-back = {}", list(&h.walked_back));
    }
    if let Some(command) = &h.command {
        let _ = writeln!(out, "command = {}", toml_string(command));
    }
    for used in &lock.base_used {
        write_base_use(out, used);
    }
}

fn write_file(out: &mut String, f: &LockedFile) {
    let _ = writeln!(out, "name = {}", toml_string(&f.name));
    if let Some(url) = &f.url {
        let _ = writeln!(out, "url = {}", toml_string(url));
    }
    if let Some(path) = &f.path {
        let _ = writeln!(out, "path = {}", toml_string(path));
    }
    if let Some(time) = f.upload_time {
        let _ = writeln!(out, "upload-time = {time}");
    }
    if let Some(size) = f.size {
        let _ = writeln!(out, "size = {size}");
    }
    if let Some(sha) = &f.sha256 {
        let _ = writeln!(out, "hashes = {{ sha256 = {} }}", toml_string(sha));
    }
}

fn write_base_use(out: &mut String, used: &BaseUse) {
    out.push_str("\n[[tool.layerlock.base-used]]\n");
    let _ = writeln!(out, "name = {}", toml_string(used.name.as_ref()));
    if let Some(version) = &used.version {
        let _ = writeln!(out, "version = {}", toml_string(&version.to_string()));
    }
    let _ = writeln!(out, "origin = {}", toml_string(&used.origin));
    let _ = writeln!(out, "via = {}", list(&used.via));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Lock {
        let file = |name: &str, sha: &str, time: &str| LockedFile {
            name: name.to_string(),
            url: Some(format!("https://files.example/{name}")),
            path: None,
            size: Some(1234),
            upload_time: Some(Timestamp::from_str(time).unwrap()),
            sha256: Some(sha.to_string()),
        };
        Lock {
            path: "pylock.kv.toml".into(),
            format: LockFormat::Pylock,
            header: Header {
                targets: vec![LockTarget {
                    python: "3.12".into(),
                    platform: "x86_64-manylinux_2_28".into(),
                }],
                bases: vec!["base.txt".into()],
                owned: vec![],
                replaces: vec![],
                unchecked: vec![],
                walked_back: vec![],
                command: Some("layerlock compile in.txt -o \"pylock.kv.toml\"".into()),
                description: Some("Python 3.12 on x86_64-manylinux_2_28".into()),
                requires_python: None,
                environments: vec![
                    MarkerTree::from_str("python_version == '3.12' and sys_platform == 'linux'")
                        .unwrap(),
                ],
            },
            packages: vec![LockedPackage {
                name: PackageName::from_str("nixl").unwrap(),
                version: Version::from_str("1.5.2").unwrap(),
                marker: MarkerTree::TRUE,
                hashes: vec![
                    "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                        .into(),
                    "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                        .into(),
                ],
                files: vec![
                    file(
                        "nixl-1.5.2.tar.gz",
                        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                        "2026-11-02T22:49:00Z",
                    ),
                    file(
                        "nixl-1.5.2-cp312-cp312-manylinux_2_28_x86_64.whl",
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                        "2026-11-02T22:49:30.5Z",
                    ),
                ],
                via: vec!["-r in.txt".into()],
                origin: String::new(),
                direct: None,
            }],
            base_used: vec![BaseUse {
                name: PackageName::from_str("torch").unwrap(),
                version: Some(Version::from_str("2.9.0").unwrap()),
                origin: "base.txt:3".into(),
                via: vec!["nixl".into()],
            }],
        }
    }

    #[test]
    fn writes_pep_751() {
        insta::assert_snapshot!(sample().render(LockFormat::Pylock, "pylock.kv.toml"), @r#"
        # This file was generated by layerlock for Python 3.12 on x86_64-manylinux_2_28.
        # It holds only what the base does not provide. To regenerate it, run:
        #    layerlock compile in.txt -o "pylock.kv.toml"
        # Install it with (hash-checked; nothing installed is changed):
        #    layerlock install pylock.kv.toml
        lock-version = "1.0"
        environments = ["python_full_version == '3.12.*' and sys_platform == 'linux'"]
        requires-python = "==3.12.*"
        created-by = "layerlock"

        [[packages]]
        name = "nixl"
        version = "1.5.2"

        [[packages.wheels]]
        name = "nixl-1.5.2-cp312-cp312-manylinux_2_28_x86_64.whl"
        url = "https://files.example/nixl-1.5.2-cp312-cp312-manylinux_2_28_x86_64.whl"
        upload-time = 2026-11-02T22:49:30.5Z
        size = 1234
        hashes = { sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }

        [packages.sdist]
        name = "nixl-1.5.2.tar.gz"
        url = "https://files.example/nixl-1.5.2.tar.gz"
        upload-time = 2026-11-02T22:49:00Z
        size = 1234
        hashes = { sha256 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" }

        [packages.tool.layerlock]
        via = ["-r in.txt"]

        [tool.layerlock]
        target = { python = "3.12", platform = "x86_64-manylinux_2_28" }
        bases = ["base.txt"]
        owned = []
        command = "layerlock compile in.txt -o \"pylock.kv.toml\""

        [[tool.layerlock.base-used]]
        name = "torch"
        version = "2.9.0"
        origin = "base.txt:3"
        via = ["nixl"]
        "#);
    }

    #[test]
    fn reads_back_what_it_writes() {
        let lock = sample();
        let text = lock.render(LockFormat::Pylock, "pylock.kv.toml");
        let back = Lock::parse(Path::new("pylock.kv.toml"), &text).unwrap();
        assert_eq!(back.header.targets, lock.header.targets);
        assert_eq!(back.header.bases, lock.header.bases);
        assert_eq!(back.header.command, lock.header.command);
        assert_eq!(back.header.environments.len(), 1);
        let p = &back.packages[0];
        assert_eq!(
            p.hashes,
            [
                "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
            ]
        );
        assert_eq!(p.via, ["-r in.txt"]);
        assert_eq!(p.origin, "pylock.kv.toml:11");
        let mut want = lock.packages[0].files.clone();
        want.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(p.files, want);
    }

    #[test]
    fn fields_of_the_wrong_type_and_absurd_markers_are_errors_naming_them() {
        let read = |text: &str| {
            Lock::parse(Path::new("pylock.toml"), text)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        let head = "lock-version = \"1.0\"\n";
        let err = read(&format!("{head}requires-python = 3.11\n"));
        assert!(err.contains("`requires-python` is not a string"), "{err}");
        let err = read(&format!("{head}environments = [1, 2]\n"));
        assert!(
            err.contains("`environments` is not an array of marker strings"),
            "{err}"
        );
        let package = "[[packages]]\nname = \"six\"\nversion = \"1.16.0\"\n";
        let err = read(&format!(
            "{head}{package}marker = [\"python_version > '3'\"]\n"
        ));
        assert!(err.contains("six: `marker` is not a string"), "{err}");
        // 50,000 parentheses: an error, not a stack overflow.
        let deep = format!(
            "{}python_version > '3'{}",
            "(".repeat(50_000),
            ")".repeat(50_000)
        );
        let err = read(&format!("{head}environments = [\"{deep}\"]\n"));
        assert!(
            err.contains("parentheses deep"),
            "{}",
            &err[..200.min(err.len())]
        );
        let err = read(&format!("{head}{package}marker = \"{deep}\"\n"));
        assert!(
            err.contains("parentheses deep"),
            "{}",
            &err[..200.min(err.len())]
        );
    }

    #[test]
    fn refuses_what_it_cannot_install_by_hash() {
        let read = |text: &str| Lock::parse(Path::new("pylock.toml"), text).unwrap_err();
        let err = read("lock-version = \"2.0\"\n");
        assert!(err.to_string().contains("lock-version `2.0`"), "{err}");
        let err = read("lock-version = \"1.x\"\n");
        assert!(err.to_string().contains("lock-version `1.x`"), "{err}");
        let err = read("lock-version = 1.0\n");
        assert!(err.to_string().contains("must be a string"), "{err}");
        let err = read(
            "lock-version = \"1.0\"\n[tool.layerlock]\ntarget = { python = 3.12, platform = \"linux\" }\n",
        );
        assert!(err.to_string().contains("target must be"), "{err}");
        let err = read(
            "lock-version = \"1.0\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\n[packages.wheels]\nurl = \"https://x/a-1-py3-none-any.whl\"\n",
        );
        assert!(err.to_string().contains("must be an array"), "{err}");
        let err = read(
            "lock-version = \"1.0\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{ url = \"https://x/a-1-py3-none-any.whl\", hashes = { sha256 = \"aa\\n--index-url http://evil/\" } }]\n",
        );
        assert!(err.to_string().contains("not 64 hex digits"), "{err}");
        let err = read(
            "lock-version = \"1.0\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nvcs = { type = \"git\", url = \"https://x\", commit-id = \"abc\" }\n",
        );
        assert!(err.to_string().contains("not a full commit id"), "{err}");
        let err = read(
            "lock-version = \"1.0\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{ url = \"https://x/a-1-py3-none-any.whl\" }]\n",
        );
        assert!(err.to_string().contains("no sha256"), "{err}");
        let err = read("lock-version = \"1.0\"\n[[packages]\n");
        assert!(err.to_string().contains("pylock.toml:2:"), "{err}");
        assert!(!err.to_string().ends_with(' '), "{err:?}");
        let err = read("lock-version = \"1.0\"\na = 1\na = 2\n");
        assert!(err.to_string().contains("pylock.toml:3:"), "{err}");
    }

    #[test]
    fn reads_uv_output() {
        let text = r#"# This file was autogenerated by uv via the following command:
#    uv pip compile in.txt --format pylock.toml
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.12"

[[packages]]
name = "idna"
version = "3.10"
sdist = { url = "https://files.example/idna-3.10.tar.gz", upload-time = 2024-09-15T18:07:39Z, size = 190490, hashes = { sha256 = "12f612f612f612f612f612f612f612f612f612f612f612f612f612f612f612f6" } }
wheels = [{ url = "https://files.example/idna-3.10-py3-none-any.whl", upload-time = 2024-09-15T18:07:37Z, size = 70442, hashes = { sha256 = "946d946d946d946d946d946d946d946d946d946d946d946d946d946d946d946d" } }]
"#;
        let lock = Lock::parse(Path::new("pylock.toml"), text).unwrap();
        let p = &lock.packages[0];
        assert_eq!(
            p.hashes,
            [
                "sha256:12f612f612f612f612f612f612f612f612f612f612f612f612f612f612f612f6",
                "sha256:946d946d946d946d946d946d946d946d946d946d946d946d946d946d946d946d"
            ]
        );
        assert_eq!(p.files[0].name, "idna-3.10-py3-none-any.whl");
        assert_eq!(
            p.files[0].upload_time.unwrap().to_string(),
            "2024-09-15T18:07:37Z"
        );
        assert!(lock.header.targets.is_empty());
    }
}
