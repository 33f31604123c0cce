//! The install journal: the plan an install is carrying out, written before
//! the installer touches anything and removed once the drift guard passed.
//! A run that was killed (out of memory, a cancelled CI job) leaves it
//! behind, and the next run knows which packages may be half-written
//! although present at the right version.

use std::path::{Path, PathBuf};

use super::InstallError;
use crate::installed::Snapshot;
use crate::plan::Plan;

/// The journal of one environment, beside its [`super::InstallLock`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    path: PathBuf,
}

/// What a previous run left behind.
enum LeftBehind {
    Nothing,
    /// The names it planned to install.
    Plan(Vec<String>),
    /// A journal that is not a list of names: a write cut short.
    Unreadable,
}

impl Journal {
    /// The journal's name, in the environment's purelib directory.
    pub const FILE_NAME: &str = ".layerlock-install.pending";

    /// The journal of the environment whose purelib directory is `site`.
    pub fn in_site(site: &Path) -> Self {
        Self {
            path: site.join(Self::FILE_NAME),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Record what `plan` is about to install (a JSON list of names), before
    /// anything is touched.
    pub fn record(&self, plan: &Plan) -> Result<(), InstallError> {
        let planned: Vec<&str> = plan.to_install().map(|w| w.name.as_str()).collect();
        let text = format!("{}\n", serde_json::Value::from(planned));
        let error = |source| InstallError::Journal {
            path: self.path.clone(),
            source,
        };
        // A new file, renamed into place: whatever was there (a symbolic
        // link, a FIFO) is replaced, never written through or waited on.
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::Builder::new()
            .prefix(".layerlock-install.")
            .tempfile_in(dir)
            .map_err(error)?;
        std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(error)?;
        tmp.persist(&self.path).map_err(|e| error(e.error))?;
        Ok(())
    }

    /// Remove the journal: the plan was carried out, or there was nothing to
    /// do. A journal that cannot be removed only costs the next run a
    /// RECORD check, so failure is not an error.
    pub fn clear(&self) {
        let _ = fs_err::remove_file(&self.path);
    }

    fn left_behind(&self) -> LeftBehind {
        // Only a regular, small, UTF-8 file counts as a journal; anything
        // else in its place (a link too) was not written by us.
        if !fs_err::symlink_metadata(&self.path).is_ok_and(|m| m.is_file()) {
            return LeftBehind::Nothing;
        }
        let Ok(bytes) = crate::read::read_small(&self.path) else {
            return LeftBehind::Nothing;
        };
        if bytes.contains(&0) {
            return LeftBehind::Nothing;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            return LeftBehind::Nothing;
        };
        match serde_json::from_str(&text) {
            Ok(names) => LeftBehind::Plan(names),
            Err(_) => LeftBehind::Unreadable,
        }
    }

    /// The planned distributions a previous, interrupted install left
    /// damaged (present at their version, but their files no longer match
    /// their RECORD): moved from `keep` to `install` in `plan`, so that they
    /// are reinstalled and the drift guard expects them to change. Returns
    /// their names, for the installer to rewrite them.
    pub fn repairs(&self, before: &Snapshot, plan: &mut Plan) -> Vec<String> {
        let named = match self.left_behind() {
            LeftBehind::Nothing => return Vec::new(),
            LeftBehind::Plan(names) => Some(names),
            // Which packages it was installing is unknown: check every kept one.
            LeftBehind::Unreadable => None,
        };
        let mut damaged = Vec::new();
        plan.keep.retain(|w| {
            let listed = named.as_ref().is_none_or(|n| n.contains(&w.name));
            let broken = listed
                && before
                    .dists
                    .get(&w.name)
                    .is_some_and(|d| !crate::integrity::check(d).is_empty());
            if broken {
                damaged.push(w.clone());
            }
            !broken
        });
        let names = damaged.iter().map(|w| w.name.clone()).collect();
        plan.install.extend(damaged);
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use base64::Engine;
    use sha2::{Digest, Sha256};

    use crate::plan::{Wanted, plan};

    fn wanted(name: &str) -> Wanted {
        Wanted {
            name: name.to_string(),
            version: "1.0".parse().unwrap(),
            origin: format!("lock.txt:{name}"),
        }
    }

    /// A site directory with `name` 1.0 installed, its one file as RECORD
    /// says.
    fn install(site: &Path, name: &str) {
        let body = format!("# {name}\n");
        let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(body.as_bytes()));
        let info = site.join(format!("{name}-1.0.dist-info"));
        std::fs::create_dir_all(&info).unwrap();
        std::fs::create_dir_all(site.join(name)).unwrap();
        std::fs::write(site.join(name).join("__init__.py"), body).unwrap();
        std::fs::write(
            info.join("METADATA"),
            format!("Name: {name}\nVersion: 1.0\n"),
        )
        .unwrap();
        std::fs::write(
            info.join("RECORD"),
            format!(
                "{name}/__init__.py,sha256={digest},{}\n{name}-1.0.dist-info/RECORD,,\n",
                name.len() + 3
            ),
        )
        .unwrap();
    }

    /// A site with alpha and beta intact and gamma missing, and its plan.
    fn site() -> (tempfile::TempDir, Snapshot, Plan) {
        let dir = tempfile::tempdir().unwrap();
        install(dir.path(), "alpha");
        install(dir.path(), "beta");
        let before = Snapshot::scan(&[dir.path().to_path_buf()]);
        let plan = plan(
            &[wanted("alpha"), wanted("beta"), wanted("gamma")],
            &before,
            &[],
        );
        (dir, before, plan)
    }

    fn damage(site: &Path, name: &str) -> Snapshot {
        std::fs::write(site.join(name).join("__init__.py"), "").unwrap();
        Snapshot::scan(&[site.to_path_buf()])
    }

    #[test]
    fn record_writes_the_planned_names_and_clear_removes_them() {
        let (dir, _, plan) = site();
        let journal = Journal::in_site(dir.path());
        assert_eq!(
            journal.path(),
            dir.path().join(".layerlock-install.pending")
        );
        journal.record(&plan).unwrap();
        assert_eq!(
            std::fs::read_to_string(journal.path()).unwrap(),
            "[\"gamma\"]\n"
        );
        journal.clear();
        assert!(!journal.path().exists());
        // Clearing what is not there is fine.
        journal.clear();
    }

    #[test]
    fn record_names_its_path_when_it_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::in_site(&dir.path().join("gone"));
        let err = journal.record(&Plan::default()).unwrap_err();
        assert!(matches!(err, InstallError::Journal { .. }), "{err:?}");
        assert!(
            err.to_string().ends_with("gone/.layerlock-install.pending"),
            "{err}"
        );
    }

    #[test]
    fn without_a_journal_nothing_is_repaired() {
        let (dir, _, mut plan) = site();
        let before = damage(dir.path(), "alpha");
        let untouched = plan.clone();
        let repairs = Journal::in_site(dir.path()).repairs(&before, &mut plan);
        assert!(repairs.is_empty());
        assert_eq!(plan, untouched);
    }

    #[test]
    fn a_damaged_package_the_journal_names_is_reinstalled() {
        let (dir, _, mut plan) = site();
        let journal = Journal::in_site(dir.path());
        std::fs::write(journal.path(), "[\"alpha\"]\n").unwrap();
        let before = damage(dir.path(), "alpha");
        let repairs = journal.repairs(&before, &mut plan);
        assert_eq!(repairs, vec!["alpha"]);
        let keep: Vec<&str> = plan.keep.iter().map(|w| w.name.as_str()).collect();
        let install: Vec<&str> = plan.to_install().map(|w| w.name.as_str()).collect();
        assert_eq!(keep, vec!["beta"]);
        assert_eq!(install, vec!["gamma", "alpha"]);
    }

    #[test]
    fn a_damaged_package_the_journal_does_not_name_is_left_alone() {
        let (dir, _, mut plan) = site();
        let journal = Journal::in_site(dir.path());
        std::fs::write(journal.path(), "[\"beta\"]\n").unwrap();
        let before = damage(dir.path(), "alpha");
        assert!(journal.repairs(&before, &mut plan).is_empty());
        assert_eq!(plan.keep.len(), 2);
    }

    #[test]
    fn a_journal_cut_short_checks_every_kept_package() {
        let (dir, _, mut plan) = site();
        let journal = Journal::in_site(dir.path());
        std::fs::write(journal.path(), "[\"be").unwrap();
        let before = damage(dir.path(), "beta");
        assert_eq!(journal.repairs(&before, &mut plan), vec!["beta"]);
        assert_eq!(plan.keep.len(), 1);
    }

    #[test]
    fn something_else_in_the_journals_place_is_not_a_journal() {
        let (dir, _, mut plan) = site();
        let journal = Journal::in_site(dir.path());
        std::fs::create_dir(journal.path()).unwrap();
        let before = damage(dir.path(), "alpha");
        assert!(journal.repairs(&before, &mut plan).is_empty());
        std::fs::remove_dir(journal.path()).unwrap();
        std::fs::write(journal.path(), b"[\"alpha\0\"]").unwrap();
        assert!(journal.repairs(&before, &mut plan).is_empty());
    }

    #[test]
    fn a_link_or_fifo_in_the_journals_place_is_replaced_never_written_through() {
        let site = tempfile::tempdir().unwrap();
        let journal = Journal::in_site(site.path());
        let target = site.path().join("precious");
        std::fs::write(&target, "kept").unwrap();
        std::os::unix::fs::symlink(&target, journal.path()).unwrap();
        let p = plan(&[wanted("a")], &Snapshot::default(), &[]);
        journal.record(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
        assert!(std::fs::symlink_metadata(journal.path()).unwrap().is_file());
        journal.clear();
        let made = std::process::Command::new("mkfifo")
            .arg(journal.path())
            .status()
            .unwrap();
        assert!(made.success());
        // Read as nothing left behind, and written over without waiting.
        let mut kept = p.clone();
        assert!(journal.repairs(&Snapshot::default(), &mut kept).is_empty());
        journal.record(&p).unwrap();
        assert!(std::fs::symlink_metadata(journal.path()).unwrap().is_file());
    }
}
