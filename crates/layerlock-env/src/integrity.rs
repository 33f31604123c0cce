//! `verify --integrity`: every file a distribution's RECORD lists still has
//! the recorded sha256. pip and uv match installed packages by version
//! alone, so a tampered or half-overwritten package passes them.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::Serialize;

use crate::installed::{Installed, RecordLine, Records, record_lines, record_text};
use crate::read::{Dir, FileHasher};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntegrityProblem {
    pub name: String,
    pub path: String,
    pub what: String,
}

/// Check one distribution's files against its RECORD, read now.
pub fn check(dist: &Installed) -> Vec<IntegrityProblem> {
    check_all(&[dist], &Records::default())
}

/// What there is to do for one distribution or one of its files.
enum Job<'a> {
    /// Known before any file is opened (no RECORD, an unreadable one).
    Problem(IntegrityProblem),
    File {
        dist: &'a Installed,
        line: RecordLine<'a>,
        /// Further hashes RECORD lists for the same path; any may match.
        also: Vec<String>,
    },
}

/// Check `dists` against their RECORDs: the text a scan kept in `records`,
/// else read now. The files of all of them are hashed together, spread over
/// the cores (one large extension module does not hold up the rest of its
/// distribution). Problems come in the order of `dists`, each one's in
/// RECORD order, whichever thread found them.
pub fn check_all(dists: &[&Installed], records: &Records) -> Vec<IntegrityProblem> {
    let texts: Vec<Option<Cow<'_, Result<String, String>>>> = dists
        .iter()
        .map(|dist| {
            (!dist.egg_info).then(|| match records.get(dist) {
                Some(text) => Cow::Borrowed(text),
                None => Cow::Owned(record_text(&dist.path)),
            })
        })
        .collect();
    let mut jobs = Vec::new();
    for (dist, text) in dists.iter().zip(&texts) {
        let problem = |path: String, what: String| {
            Job::Problem(IntegrityProblem {
                name: dist.name.clone(),
                path,
                what,
            })
        };
        match text.as_deref() {
            None => jobs.push(problem(
                dist.path.display().to_string(),
                "an egg-info distribution has no RECORD to check".to_string(),
            )),
            Some(Err(e)) => jobs.push(problem(
                "RECORD".to_string(),
                format!("cannot read RECORD: {e}"),
            )),
            Some(Ok(text)) => {
                // A path listed twice, once with no hash, is a file the
                // installer made again after writing the wheel's (pip lists
                // a `.pyc` the wheel shipped, then the one it compiled over
                // it): nothing to check, as for any line without a hash.
                // Listed twice with hashes, either may match.
                let lines: Vec<RecordLine<'_>> = record_lines(text).collect();
                let mut by_path: HashMap<&str, Vec<&RecordLine<'_>>> = HashMap::new();
                for line in &lines {
                    by_path.entry(line.path.as_ref()).or_default().push(line);
                }
                let mut queued: HashSet<&str> = HashSet::new();
                let before = jobs.len();
                for line in &lines {
                    let same = &by_path[line.path.as_ref()];
                    if same.len() > 1 {
                        let remade = same
                            .iter()
                            .any(|l| l.sha256.is_none() && l.other_hash.is_none());
                        if remade || !queued.insert(line.path.as_ref()) {
                            continue;
                        }
                    }
                    let also: Vec<String> = same
                        .iter()
                        .skip(1)
                        .filter_map(|l| l.sha256.as_deref().map(str::to_string))
                        .collect();
                    let line = line.clone();
                    if let Some(other) = &line.other_hash {
                        // Fail closed: a hash we do not check is no pass.
                        let algorithm = other.split('=').next().unwrap_or_default();
                        jobs.push(problem(
                            line.path.to_string(),
                            format!(
                                "RECORD gives a `{algorithm}` hash, not sha256; layerlock cannot check it"
                            ),
                        ));
                    } else if line.sha256.is_some() {
                        jobs.push(Job::File { dist, line, also });
                    } else if !unhashed_by_design(&line.path) {
                        // Fail closed: a file RECORD gives no hash for is
                        // a file nobody can say is intact.
                        jobs.push(problem(
                            line.path.to_string(),
                            "RECORD gives no hash for it; layerlock cannot check it".to_string(),
                        ));
                    }
                }
                let checked = jobs[before..]
                    .iter()
                    .any(|job| matches!(job, Job::File { .. }));
                if !checked && jobs.len() == before {
                    // An empty RECORD (or one of RECORD and `.pyc` lines)
                    // vouches for nothing: edits to any file would pass.
                    jobs.push(problem(
                        "RECORD".to_string(),
                        "RECORD lists no file with a sha256; layerlock cannot verify this distribution"
                            .to_string(),
                    ));
                }
            }
        }
    }
    let mut sites: Vec<&Path> = dists.iter().map(|d| d.site.as_path()).collect();
    sites.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    sites.dedup_by(|a, b| a.as_os_str() == b.as_os_str());
    let dirs: Vec<Dir<'_>> = sites.iter().map(|site| Dir::open(site)).collect();
    let dir_of = |site: &Path| {
        dirs.iter()
            .find(|dir| dir.path().as_os_str() == site.as_os_str())
    };
    let found = crate::parallel::map(
        &jobs,
        || (FileHasher::new(), PathBuf::new()),
        |(hasher, path), job| match job {
            Job::Problem(problem) => Some(problem.clone()),
            Job::File { dist, line, also } => {
                let fast = dir_of(&dist.site).and_then(|dir| check_at(hasher, dir, line, also));
                fast.unwrap_or_else(|| check_file(hasher, path, &dist.site, line, also))
                    .map(|what| IntegrityProblem {
                        name: dist.name.clone(),
                        path: line.path.to_string(),
                        what,
                    })
            }
        },
    );
    found.into_iter().flatten().collect()
}

/// RECORD lines that carry no hash by design: RECORD itself and its
/// signatures (PEP 376), and byte code the installer compiled after
/// writing the wheel's files.
fn unhashed_by_design(path: &str) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let in_dist_info = dir.ends_with(".dist-info") && !dir.contains('/');
    (in_dist_info && matches!(name, "RECORD" | "RECORD.jws" | "RECORD.p7s"))
        || (name.ends_with(".pyc") && dir.split('/').next_back() == Some("__pycache__"))
}

/// [`check_file`] for the common case, a regular file read without error,
/// looked up from its open site directory; `None` for anything else, which
/// [`check_file`] then looks at by path for its own words.
fn check_at(
    hasher: &mut FileHasher,
    dir: &Dir<'_>,
    line: &RecordLine<'_>,
    also: &[String],
) -> Option<Option<String>> {
    let expected = line.sha256.as_deref()?;
    let (file, len) = dir.open_regular(Path::new(line.path.as_ref()))?;
    match hasher.sha256_of(file, len).ok()? {
        Some(digest) => Some((!matches_any(digest, expected, also)).then(|| CHANGED.to_string())),
        None => Some(Some(CHANGED.to_string())),
    }
}

const CHANGED: &str = "content differs from RECORD";

/// Whether `digest` is `expected` or one of `also`.
fn matches_any(digest: [u8; 32], expected: &str, also: &[String]) -> bool {
    matches(digest, expected) || also.iter().any(|e| matches(digest, e))
}

/// Whether `digest` is the RECORD's `expected` (urlsafe base64, padding
/// optional).
fn matches(digest: [u8; 32], expected: &str) -> bool {
    let mut encoded = [0u8; 43];
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode_slice(digest, &mut encoded)
        .is_ok_and(|n| encoded[..n] == *expected.trim_end_matches('=').as_bytes())
}

/// What is wrong with the file `line` names under `site`, if anything.
/// `path` is the thread's buffer for the file's path.
fn check_file(
    hasher: &mut FileHasher,
    path: &mut PathBuf,
    site: &Path,
    line: &RecordLine<'_>,
    also: &[String],
) -> Option<String> {
    let expected = line.sha256.as_deref()?;
    path.as_mut_os_string().clear();
    path.push(site);
    path.push(Path::new(line.path.as_ref()));
    let meta = match fs_err::symlink_metadata(&*path) {
        Err(_) => return Some("missing".to_string()),
        Ok(meta) if meta.file_type().is_symlink() => match std::fs::metadata(&*path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Some("a symbolic link to a file that does not exist".to_string());
            }
            Err(e) => return Some(crate::read::io_message(path, &e)),
        },
        Ok(meta) => meta,
    };
    // A FIFO or device where a file should be is never opened.
    if !meta.is_file() {
        return Some("not a regular file".to_string());
    }
    match hasher.sha256(path, meta.len()) {
        Ok(Some(digest)) => (!matches_any(digest, expected, also)).then(|| CHANGED.to_string()),
        // Another length than a moment before: it is being changed.
        Ok(None) => Some(CHANGED.to_string()),
        Err(e) => Some(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::installed::{ScanOptions, Snapshot};
    use crate::testing::install;

    fn problem(name: &str, path: &str, what: &str) -> IntegrityProblem {
        IntegrityProblem {
            name: name.into(),
            path: path.into(),
            what: what.into(),
        }
    }

    #[test]
    fn a_file_the_installer_made_again_is_not_tampered() {
        // pip's RECORD for numpy 1.26.4 lists a `.pyc` the wheel ships, then
        // (without a hash) the one pip compiled over it.
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path();
        install(
            site,
            "a",
            &[
                ("a/__pycache__/m.cpython-311.pyc", "wheel's"),
                ("a/m.py", "x = 1\n"),
            ],
        );
        let record = site.join("a-1.0.dist-info/RECORD");
        let text = std::fs::read_to_string(&record).unwrap();
        std::fs::write(
            &record,
            format!("a/__pycache__/m.cpython-311.pyc,,\n{text}"),
        )
        .unwrap();
        std::fs::write(
            site.join("a/__pycache__/m.cpython-311.pyc"),
            "compiled by pip",
        )
        .unwrap();
        let options = ScanOptions {
            provenance: false,
            keep_records: false,
        };
        let (snapshot, _) = Snapshot::scan_with(&[site.to_path_buf()], options);
        assert_eq!(check(&snapshot.dists["a"]), vec![]);
        // Changed where nothing made it again, it is still found.
        std::fs::write(site.join("a/m.py"), "x = 2\n").unwrap();
        assert_eq!(
            check(&snapshot.dists["a"]),
            vec![problem("a", "a/m.py", "content differs from RECORD")]
        );
    }

    #[test]
    fn an_empty_record_with_an_edited_file_is_cannot_verify_not_intact() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path();
        install(site, "a", &[("a/m.py", "x = 1\n")]);
        std::fs::write(site.join("a-1.0.dist-info/RECORD"), "").unwrap();
        std::fs::write(site.join("a/m.py"), "x = 2\n").unwrap();
        let snapshot = Snapshot::scan(&[site.to_path_buf()]);
        assert_eq!(
            check(&snapshot.dists["a"]),
            vec![problem(
                "a",
                "RECORD",
                "RECORD lists no file with a sha256; layerlock cannot verify this distribution"
            )]
        );
    }

    #[test]
    fn a_record_line_without_a_hash_is_cannot_check_unless_made_so_by_design() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path();
        install(site, "a", &[("a/m.py", "x = 1\n"), ("a/n.py", "y = 1\n")]);
        let record = site.join("a-1.0.dist-info/RECORD");
        let text = std::fs::read_to_string(&record).unwrap();
        let hashed = text.lines().find(|l| l.starts_with("a/n.py,")).unwrap();
        let mut text = text.replace(hashed, "a/n.py,,");
        // Byte code the installer compiled, and RECORD itself: no hash by
        // design, nothing to report.
        text.push_str("a/__pycache__/m.cpython-311.pyc,,\n");
        std::fs::write(&record, text).unwrap();
        std::fs::write(site.join("a/n.py"), "y = 2\n").unwrap();
        let snapshot = Snapshot::scan(&[site.to_path_buf()]);
        assert_eq!(
            check(&snapshot.dists["a"]),
            vec![problem(
                "a",
                "a/n.py",
                "RECORD gives no hash for it; layerlock cannot check it"
            )]
        );
    }

    #[test]
    fn a_hash_in_another_algorithm_is_a_problem_not_a_pass() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path();
        install(site, "a", &[("a/x.py", "x = 1\n"), ("a/y.py", "y = 1\n")]);
        let record = site.join("a-1.0.dist-info/RECORD");
        let text = std::fs::read_to_string(&record).unwrap();
        let text = text.replacen("a/y.py,sha256=", "a/y.py,md5=", 1);
        std::fs::write(&record, text).unwrap();
        let options = ScanOptions {
            provenance: false,
            keep_records: true,
        };
        let (snapshot, records) = Snapshot::scan_with(&[site.to_path_buf()], options);
        let found = check_all(&[&snapshot.dists["a"]], &records);
        assert_eq!(
            found,
            vec![problem(
                "a",
                "a/y.py",
                "RECORD gives a `md5` hash, not sha256; layerlock cannot check it"
            )]
        );
    }

    #[test]
    fn problems_come_in_the_order_asked_whatever_thread_found_them() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path();
        let bodies: Vec<(String, String)> = (0..30)
            .map(|f| (format!("m{f:02}.py"), format!("x = {f}\n")))
            .collect();
        for d in 0..40 {
            let files: Vec<(String, &str)> = bodies
                .iter()
                .map(|(path, body)| (format!("d{d:02}/{path}"), body.as_str()))
                .collect();
            let files: Vec<(&str, &str)> = files.iter().map(|(p, b)| (p.as_str(), *b)).collect();
            install(site, &format!("d{d:02}"), &files);
        }
        // Damage in every way, spread over many distributions.
        std::fs::write(site.join("d03/m29.py"), "x = 29\n# appended\n").unwrap();
        std::fs::write(site.join("d03/m00.py"), "x = 1\n").unwrap();
        std::fs::remove_file(site.join("d17/m05.py")).unwrap();
        std::fs::remove_file(site.join("d17/m04.py")).unwrap();
        std::fs::remove_file(site.join("d21/m10.py")).unwrap();
        std::fs::create_dir(site.join("d21/m10.py")).unwrap();
        std::fs::write(site.join("d30-1.0.dist-info/RECORD"), b"\xff").unwrap();
        std::fs::write(site.join("d39/m15.py"), "").unwrap();
        let options = ScanOptions {
            provenance: false,
            keep_records: true,
        };
        let (snapshot, records) = Snapshot::scan_with(&[site.to_path_buf()], options);
        // Asked in an order of their own (as a lock lists them), one twice.
        let order = ["d39", "d03", "d30", "d17", "d21", "d00", "d03"];
        let dists: Vec<&Installed> = order.iter().map(|n| &snapshot.dists[*n]).collect();
        let changed = "content differs from RECORD";
        let d03 = [
            problem("d03", "d03/m00.py", changed),
            problem("d03", "d03/m29.py", changed),
        ];
        let expected: Vec<IntegrityProblem> = [
            vec![problem("d39", "d39/m15.py", changed)],
            d03.to_vec(),
            vec![problem(
                "d30",
                "RECORD",
                "cannot read RECORD: RECORD is not UTF-8",
            )],
            vec![
                problem("d17", "d17/m04.py", "missing"),
                problem("d17", "d17/m05.py", "missing"),
            ],
            vec![problem("d21", "d21/m10.py", "not a regular file")],
            d03.to_vec(),
        ]
        .concat();
        assert_eq!(check_all(&dists, &records), expected);
        // Read afresh, one at a time, as the install journal checks them.
        let one_by_one: Vec<IntegrityProblem> = dists.iter().flat_map(|d| check(d)).collect();
        assert_eq!(one_by_one, expected);
    }

    #[test]
    fn a_symlink_is_followed_and_a_dangling_one_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path();
        install(site, "link", &[("link/a.py", "a"), ("link/b.py", "b")]);
        std::fs::write(site.join("real.py"), "a").unwrap();
        std::fs::remove_file(site.join("link/a.py")).unwrap();
        std::os::unix::fs::symlink(site.join("real.py"), site.join("link/a.py")).unwrap();
        std::fs::remove_file(site.join("link/b.py")).unwrap();
        std::os::unix::fs::symlink(site.join("gone.py"), site.join("link/b.py")).unwrap();
        let snapshot = Snapshot::scan(&[site.to_path_buf()]);
        let found = check(&snapshot.dists["link"]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "link/b.py");
        // Not "missing": the link is there, what it points at is not.
        assert_eq!(
            found[0].what, "a symbolic link to a file that does not exist",
            "{found:?}"
        );
    }
}
