//! Where a command's paths lead: the directory it runs in, and for image
//! builds and containers the image paths that hold repository files.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use layerlock_ci::dockerfile::Mount;

use crate::paths::{confined_file, normalize};

/// The directory a command runs in and the image around it. Part of what
/// a followed script's analysis depends on, hence comparable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Place {
    /// The directory in the repository commands run in, if known.
    pub(crate) cwd: Option<PathBuf>,
    /// For an image build: the build context and what the image holds.
    pub(crate) image: Option<Rc<Image>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Image {
    pub(crate) context: PathBuf,
    pub(crate) mounts: Vec<Mount>,
    /// The image's working directory (`WORKDIR`).
    pub(crate) workdir: String,
}

impl Image {
    /// The repository file an image path holds.
    pub(crate) fn find(&self, path: &str, root: &Path) -> Option<PathBuf> {
        let image_path = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("{}/{path}", self.workdir)
        };
        let image_path = normalize(Path::new(&image_path)).display().to_string();
        self.mounts.iter().rev().find_map(|m| {
            m.candidates(&image_path)
                .into_iter()
                .find_map(|c| confined_file(&self.context.join(c), root))
        })
    }

    /// The same image, with commands run in `dir` (`cd dir`, `make -C
    /// dir`), relative to the working directory or absolute.
    pub(crate) fn in_dir(&self, dir: &str) -> Self {
        let path = if dir.starts_with('/') {
            dir.to_string()
        } else {
            format!("{}/{dir}", self.workdir)
        };
        Self {
            workdir: normalize(Path::new(&path)).display().to_string(),
            ..self.clone()
        }
    }

    /// The place of commands run in this image's working directory: the
    /// repository directory it holds, if it holds one (a directory of the
    /// image that no file of the repository was copied to has none).
    pub(crate) fn place(self) -> Place {
        Place {
            cwd: self.workdir_in_repo(),
            image: Some(Rc::new(self)),
        }
    }

    /// The repository directory the image's working directory holds.
    pub(crate) fn workdir_in_repo(&self) -> Option<PathBuf> {
        let workdir = self.workdir.trim_end_matches('/');
        self.mounts.iter().rev().find_map(|m| {
            m.candidates(if workdir.is_empty() { "/" } else { workdir })
                .into_iter()
                .map(|c| normalize(&self.context.join(c)))
                .find(|d| d.is_dir())
        })
    }
}
