//! `--find-links DIR`: a flat directory of wheels and sdists, listed like an
//! index page. Hashes are computed from the files.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use url::Url;
use uv_distribution_filename::WheelFilename;
use uv_normalize::PackageName;

use layerlock_dist::IndexFile;

use crate::cache::hex_sha256;

#[derive(Debug, Default)]
pub struct FindLinks {
    pub dirs: Vec<String>,
    pub files: BTreeMap<PackageName, Vec<IndexFile>>,
}

fn sdist_name(filename: &str) -> Option<PackageName> {
    let stem = [".tar.gz", ".zip", ".tar.bz2"]
        .iter()
        .find_map(|ext| filename.strip_suffix(ext))?;
    let (name, _) = stem.rsplit_once('-')?;
    PackageName::from_str(name).ok()
}

impl FindLinks {
    pub fn read(dirs: &[std::path::PathBuf]) -> Result<Self, std::io::Error> {
        let mut out = Self::default();
        for dir in dirs {
            out.dirs.push(dir.display().to_string());
            let dir = fs_err::canonicalize(dir)?;
            let mut entries: Vec<_> = fs_err::read_dir(&dir)?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .collect();
            entries.sort();
            for path in entries {
                add(&mut out, &path, &dir)?;
            }
        }
        Ok(out)
    }
}

fn add(out: &mut FindLinks, path: &Path, dir: &Path) -> Result<(), std::io::Error> {
    let Some(filename) = path
        .file_name()
        .and_then(|f| f.to_str())
        .map(str::to_string)
    else {
        return Ok(());
    };
    let name = if filename.ends_with(".whl") {
        WheelFilename::from_str(&filename).ok().map(|w| w.name)
    } else {
        sdist_name(&filename)
    };
    let Some(name) = name else { return Ok(()) };
    let Ok(url) = Url::from_file_path(path) else {
        return Ok(());
    };
    let bytes = fs_err::read(path)?;
    out.files.entry(name).or_default().push(IndexFile {
        filename,
        url: url.to_string(),
        sha256: Some(hex_sha256(&bytes)),
        requires_python: None,
        yanked: None,
        upload_time: None,
        size: u64::try_from(bytes.len()).ok(),
        core_metadata: None,
        listed_by: dir.display().to_string(),
    });
    Ok(())
}
