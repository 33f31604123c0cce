//! The command's work, apart from flags and printing: read the files
//! given (inside the repository only, bounded), mark them from one walk of
//! the repository, build the graph and render it; compare with a file on
//! disk for `--check`; write a file whole (temp file, then rename).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use layerlock_audit::ScanOptions;
use layerlock_ci::bake::BuildFile;
use layerlock_walk::read_bounded;

use crate::annotate::{Marks, marks};
use crate::build::Builder;
use crate::model::Graph;

/// How the picture is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Svg,
    Dot,
    Json,
}

impl Format {
    /// The format a file name asks for (`.svg`, `.dot`/`.gv`, `.json`).
    pub fn of_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "svg" => Some(Self::Svg),
            "dot" | "gv" => Some(Self::Dot),
            "json" => Some(Self::Json),
            _ => None,
        }
    }
}

/// What `layerlock graph` is asked to draw.
#[derive(Debug, Clone)]
pub struct GraphSettings {
    /// The repository (canonical): files are read only inside it, and its
    /// CI is walked for what it installs and builds.
    pub repo: PathBuf,
    /// Dockerfiles, bake or Compose files, absolute.
    pub files: Vec<PathBuf>,
    pub format: Format,
}

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("{path}: {why}")]
    Read { path: String, why: String },
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: cannot write: {why}")]
    Write { path: String, why: String },
}

/// Draw the files of `settings` as its format asks: the graph, and its
/// picture.
pub fn draw(settings: &GraphSettings) -> Result<(Graph, String), GraphError> {
    let options = ScanOptions {
        root: settings.repo.clone(),
        targets: vec![settings.repo.clone()],
        path_map: Default::default(),
        default_working_dir: None,
    };
    let marks = marks(&options);
    let graph = graph(settings, &marks)?;
    let drawn = render(&graph, settings.format);
    Ok((graph, drawn))
}

/// The graph of the files given, with `marks` on their stages.
pub fn graph(settings: &GraphSettings, marks: &Marks) -> Result<Graph, GraphError> {
    let mut builder = Builder::default();
    let mut shown_all = Vec::new();
    for path in &settings.files {
        let shown = shown(path, &settings.repo);
        let text = read(path, &settings.repo, &shown)?;
        if is_build_file(path) {
            build_file(&mut builder, settings, marks, path, &shown, &text)?;
        } else {
            dockerfile(&mut builder, marks, &shown, &text)?;
        }
        shown_all.push(shown);
    }
    Ok(builder.finish(shown_all.join(", ")))
}

pub fn render(graph: &Graph, format: Format) -> String {
    match format {
        Format::Svg => crate::svg(graph),
        Format::Dot => crate::dot(graph),
        Format::Json => crate::json(graph),
    }
}

/// A bake file (`.hcl`, `docker-bake.json`) or a Compose file
/// (`compose.yaml`, `docker-compose.yml`), by name.
fn is_build_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    name.ends_with(".hcl")
        || (name.contains("bake") && name.ends_with(".json"))
        || (name.contains("compose") && (name.ends_with(".yml") || name.ends_with(".yaml")))
}

fn shown(path: &Path, repo: &Path) -> String {
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    real.strip_prefix(repo)
        .unwrap_or(&real)
        .to_string_lossy()
        .replace('\\', "/")
}

fn read(path: &Path, repo: &Path, shown: &str) -> Result<String, GraphError> {
    let bytes = read_bounded(path, repo).map_err(|why| GraphError::Read {
        path: shown.to_string(),
        why: format!("{why} (graph reads files inside the repository, --repo)"),
    })?;
    String::from_utf8(bytes).map_err(|_| GraphError::Read {
        path: shown.to_string(),
        why: "not UTF-8".to_string(),
    })
}

fn dockerfile(
    builder: &mut Builder,
    marks: &Marks,
    shown: &str,
    text: &str,
) -> Result<(), GraphError> {
    let stages = layerlock_ci::dockerfile::stages(text).map_err(|e| GraphError::Parse {
        path: shown.to_string(),
        line: e.line,
        column: e.column,
        message: e.message,
    })?;
    builder.dockerfile(shown, &stages, marks);
    Ok(())
}

/// A bake or Compose file: the Dockerfiles its targets name (inside the
/// repository), then the targets, built from their stages.
fn build_file(
    builder: &mut Builder,
    settings: &GraphSettings,
    marks: &Marks,
    path: &Path,
    shown: &str,
    text: &str,
) -> Result<(), GraphError> {
    let model = BuildFile::read(shown, text).map_err(|e| GraphError::Parse {
        path: shown.to_string(),
        line: e.line,
        column: e.column,
        message: e.message,
    })?;
    // A bake file's contexts are relative to where bake runs, taken to be
    // the repository's top (a Compose file's are relative to the file).
    let name = shown.to_ascii_lowercase();
    let dir = if name.ends_with(".hcl") || name.ends_with(".json") {
        settings.repo.clone()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    // Targets others inherit from are their parts, not images built.
    let parts: BTreeSet<&str> = model
        .targets
        .iter()
        .flat_map(|t| t.inherits.iter().map(String::as_str))
        .collect();
    let located = |target: &layerlock_ci::bake::Target| -> Option<PathBuf> {
        let context = dir.join(target.context.as_deref()?);
        Some(layerlock_walk::normalize(
            &context.join(target.dockerfile.as_deref()?),
        ))
    };
    let mut read_files = BTreeSet::new();
    for target in &model.targets {
        let Some(file) = located(target) else {
            continue;
        };
        if !read_files.insert(file.clone()) {
            continue;
        }
        let file_shown = self::shown(&file, &settings.repo);
        // A Dockerfile a target names but that is not there is left out;
        // the target is still drawn.
        if let Ok(text) = read(&file, &settings.repo, &file_shown) {
            dockerfile(builder, marks, &file_shown, &text)?;
        }
    }
    let repo = settings.repo.clone();
    let name_of = move |target: &layerlock_ci::bake::Target| {
        if parts.contains(target.name.as_str()) {
            return None;
        }
        located(target).map(|file| self::shown(&file, &repo))
    };
    // A target is built when CI builds its Dockerfile's stage.
    let built: BTreeSet<String> = model
        .targets
        .iter()
        .filter(|t| {
            name_of(t).is_some_and(|file| {
                marks
                    .builds
                    .iter()
                    .any(|(f, stage)| *f == file && stage == &t.stage)
            })
        })
        .map(|t| t.name.clone())
        .collect();
    builder.targets(shown, &model, &name_of, &built);
    Ok(())
}

/// Is the file at `path` what would be drawn now? `Ok(None)` when it is;
/// else the reason it is stale.
pub fn stale(path: &Path, drawn: &str) -> Result<Option<String>, GraphError> {
    let fail = |why: String| GraphError::Read {
        path: path.display().to_string(),
        why,
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Some("does not exist yet".to_string()));
        }
        Err(e) => return Err(fail(e.to_string())),
    };
    // A picture is a regular file: a FIFO or device is never opened, and
    // one larger than anything drawn cannot be current.
    if !meta.is_file() {
        return Err(fail("not a regular file".to_string()));
    }
    if meta.len() != drawn.len() as u64 {
        return Ok(Some("differs from what would be drawn now".to_string()));
    }
    let mut on_disk = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(
            std::fs::File::open(path).map_err(|e| fail(e.to_string()))?,
            meta.len(),
        ),
        &mut on_disk,
    )
    .map_err(|e| fail(e.to_string()))?;
    Ok((on_disk != drawn.as_bytes()).then(|| "differs from what would be drawn now".to_string()))
}

/// Write `text` to `path` whole: a temp file beside it, then a rename.
pub fn write(path: &Path, text: &str) -> Result<(), GraphError> {
    let fail = |e: std::io::Error| GraphError::Write {
        path: path.display().to_string(),
        why: e.to_string(),
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    std::io::Write::write_all(&mut temp, text.as_bytes()).map_err(fail)?;
    temp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
