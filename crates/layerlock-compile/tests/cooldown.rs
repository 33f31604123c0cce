//! The cooldown check of a lock, in-process: locks and bases written in
//! the test, upload times from an in-memory index.

#![allow(clippy::unwrap_used)]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use layerlock_compile::{
    CooldownError, CooldownInput, CooldownOutcome, IndexPlan, LayerOutput, UploadSource,
    already_there, check_cooldown, introduced_files, take_from_source,
};
use layerlock_dist::{CoreMetadata, IndexFile, PackageSource, ProjectAnswer, SourceError};
use layerlock_lock::{Lock, LockTarget};
use layerlock_resolve::memory::Memory;
use layerlock_resolve::{CooldownPolicy, Exemption, Verdict};
use uv_normalize::PackageName;

const NOW: &str = "2026-12-01T00:00:00Z";
const X86: &str = "x86_64-manylinux_2_28";

/// An in-memory index's pages, and what a JSON API would add.
struct Pages {
    memory: Memory,
    json_api: BTreeMap<String, Timestamp>,
}

impl UploadSource for Pages {
    fn pages(&self) -> &dyn PackageSource {
        &self.memory
    }

    fn json_api(&self, _name: &PackageName, _version: &str) -> BTreeMap<String, Timestamp> {
        self.json_api.clone()
    }
}

/// An index offline with nothing cached.
struct Uncached;

impl PackageSource for Uncached {
    fn project(&self, _name: &PackageName) -> Result<Arc<ProjectAnswer>, SourceError> {
        Ok(Arc::new(ProjectAnswer::NotCached {
            asked: vec!["https://index.example/simple/".to_string()],
        }))
    }

    fn metadata(
        &self,
        _name: &PackageName,
        _file: &IndexFile,
    ) -> Result<Arc<CoreMetadata>, SourceError> {
        unreachable!("the cooldown reads no metadata")
    }
}

impl UploadSource for Uncached {
    fn pages(&self) -> &dyn PackageSource {
        self
    }
}

/// The sha256 the in-memory index lists for `name==version`.
fn sha(memory: &Memory, name: &str, version: &str) -> String {
    let answer = memory.project(&name.parse().unwrap()).unwrap();
    let ProjectAnswer::Found(project) = answer.as_ref() else {
        panic!("{name} is not in the index");
    };
    project
        .files()
        .unwrap()
        .iter()
        .find(|f| f.filename.contains(&format!("-{version}-")))
        .and_then(|f| f.sha256.clone())
        .unwrap()
}

/// A pin line of a requirements lock.
fn pin(name: &str, version: &str, hashes: &[&str]) -> String {
    let mut line = format!("{name}=={version}");
    for h in hashes {
        line.push_str(&format!(" \\\n    --hash=sha256:{h}"));
    }
    line.push('\n');
    line
}

/// The header line of a lock for Python `python` on x86_64 manylinux.
fn target(python: &str) -> String {
    format!("# layerlock-target: python={python} platform={X86}\n")
}

fn policy(min_age_days: i64) -> CooldownPolicy {
    CooldownPolicy {
        min_age: SignedDuration::from_hours(24 * min_age_days),
        now: NOW.parse().unwrap(),
        exemptions: Vec::new(),
        allow_missing_time: false,
    }
}

fn input(dir: &Path, bases: Vec<PathBuf>) -> CooldownInput {
    CooldownInput {
        bases,
        layers: BTreeMap::new(),
        since: None,
        policy: policy(7),
        index: IndexPlan::default(),
        cwd: dir.to_path_buf(),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn check(input: &CooldownInput, lock: &Path, pages: Pages) -> CooldownOutcome {
    let lock = Lock::read(lock).unwrap();
    check_cooldown(input, &lock, |_| Ok(pages)).unwrap()
}

fn pages(memory: Memory) -> Pages {
    Pages {
        memory,
        json_api: BTreeMap::new(),
    }
}

/// `(name, version, status)` of each row.
fn rows(outcome: &CooldownOutcome) -> Vec<(String, String, Verdict)> {
    outcome
        .report
        .packages
        .iter()
        .map(|r| (r.name.clone(), r.version.clone(), r.status))
        .collect()
}

#[test]
fn young_version_fails_and_says_when_it_is_eligible() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::new(&[("foo", "1.0", &[]), ("bar", "2.0", &[])])
        .uploaded("foo==1.0", "2026-11-29T12:00:00Z")
        .uploaded("bar==2.0", "2026-01-01T00:00:00Z");
    let text = pin("bar", "2.0", &[&sha(&memory, "bar", "2.0")])
        + &pin("foo", "1.0", &[&sha(&memory, "foo", "1.0")]);
    let lock = write(dir.path(), "lock.txt", &text);
    let outcome = check(&input(dir.path(), Vec::new()), &lock, pages(memory));
    assert!(outcome.failed);
    assert!(!outcome.recorded_times);
    assert_eq!(
        rows(&outcome),
        [
            ("bar".to_string(), "2.0".to_string(), Verdict::Ok),
            ("foo".to_string(), "1.0".to_string(), Verdict::TooYoung),
        ]
    );
    let foo = &outcome.report.packages[1];
    assert_eq!(foo.uploaded.as_deref(), Some("2026-11-29T12:00:00Z"));
    assert_eq!(foo.age_days, Some(1.5));
    assert_eq!(foo.eligible_on.as_deref(), Some("2026-12-06T12:00:00Z"));
    // The lock is eligible once its youngest version is.
    assert_eq!(
        outcome.report.eligible_on.as_deref(),
        Some("2026-12-06T12:00:00Z")
    );
    assert_eq!(outcome.report.min_age_seconds, 7 * 86_400);
    assert_eq!(outcome.report.now, NOW);
}

#[test]
fn report_json_keeps_its_field_order_and_leaves_out_an_absent_note() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::new(&[("foo", "1.0", &[])]).uploaded("foo==1.0", "2026-01-01T00:00:00Z");
    let lock = write(
        dir.path(),
        "lock.txt",
        &pin("foo", "1.0", &[&sha(&memory, "foo", "1.0")]),
    );
    let outcome = check(&input(dir.path(), Vec::new()), &lock, pages(memory));
    assert!(!outcome.failed);
    assert_eq!(
        serde_json::to_string_pretty(&outcome.report).unwrap(),
        r#"{
  "version": 1,
  "min_age_seconds": 604800,
  "now": "2026-12-01T00:00:00Z",
  "packages": [
    {
      "name": "foo",
      "version": "1.0",
      "uploaded": "2026-01-01T00:00:00Z",
      "age_days": 334.0,
      "eligible_on": "2026-01-08T00:00:00Z",
      "status": "ok"
    }
  ],
  "eligible_on": "2026-01-08T00:00:00Z"
}"#
    );
}

#[test]
fn version_without_upload_time_fails_and_leaves_the_lock_undated() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::new(&[("foo", "1.0", &[])]);
    let lock = write(
        dir.path(),
        "lock.txt",
        &pin("foo", "1.0", &[&sha(&memory, "foo", "1.0")]),
    );
    let outcome = check(&input(dir.path(), Vec::new()), &lock, pages(memory));
    assert!(outcome.failed);
    assert_eq!(
        outcome.report.packages[0].status,
        Verdict::UnknownUploadTime
    );
    assert_eq!(outcome.report.eligible_on, None);
}

#[test]
fn json_api_gives_the_time_a_page_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::new(&[("foo", "1.0", &[])]);
    let hash = sha(&memory, "foo", "1.0");
    let lock = write(dir.path(), "lock.txt", &pin("foo", "1.0", &[&hash]));
    let pages = Pages {
        memory,
        json_api: BTreeMap::from([(hash, "2026-01-01T00:00:00Z".parse().unwrap())]),
    };
    let outcome = check(&input(dir.path(), Vec::new()), &lock, pages);
    assert!(!outcome.failed);
    assert_eq!(rows(&outcome)[0].2, Verdict::Ok);
}

#[test]
fn exempt_version_passes_and_does_not_set_the_eligible_date() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::new(&[("foo", "1.0", &[])]).uploaded("foo==1.0", "2026-11-30T00:00:00Z");
    let lock = write(
        dir.path(),
        "lock.txt",
        &pin("foo", "1.0", &[&sha(&memory, "foo", "1.0")]),
    );
    let mut input = input(dir.path(), Vec::new());
    input.policy.exemptions.push(Exemption {
        package: "foo".parse().unwrap(),
        version: None,
        reason: "security fix".to_string(),
        until: None,
    });
    let outcome = check(&input, &lock, pages(memory));
    assert!(!outcome.failed);
    assert_eq!(rows(&outcome)[0].2, Verdict::Exempt);
    assert_eq!(outcome.report.eligible_on, None);
}

#[test]
fn pins_the_bases_have_are_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::new(&[("foo", "1.0", &[]), ("bar", "2.0", &[])])
        .uploaded("foo==1.0", "2026-11-30T00:00:00Z")
        .uploaded("bar==2.0", "2026-11-30T00:00:00Z");
    let foo = sha(&memory, "foo", "1.0");
    let base = write(dir.path(), "base.txt", &pin("foo", "1.0", &[&foo]));
    let text = pin("bar", "2.0", &[&sha(&memory, "bar", "2.0")]) + &pin("foo", "1.0", &[&foo]);
    let lock = write(dir.path(), "lock.txt", &text);
    let outcome = check(&input(dir.path(), vec![base]), &lock, pages(memory));
    assert_eq!(
        rows(&outcome),
        [("bar".to_string(), "2.0".to_string(), Verdict::TooYoung)]
    );
}

#[test]
fn files_added_to_a_version_already_there_are_judged_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::new(&[("foo", "1.0", &[])]).uploaded("foo==1.0", "2026-01-01T00:00:00Z");
    let listed = sha(&memory, "foo", "1.0");
    let old = "ab".repeat(32);
    let base = write(dir.path(), "base.txt", &pin("foo", "1.0", &[&old]));
    let lock = write(dir.path(), "lock.txt", &pin("foo", "1.0", &[&old, &listed]));
    let input = input(dir.path(), vec![base]);
    let read = Lock::read(&lock).unwrap();
    let known = already_there(&input, &read).unwrap();
    assert_eq!(
        introduced_files(&known, &read.packages[0]),
        BTreeSet::from([listed])
    );
    let outcome = check(&input, &lock, pages(memory));
    assert_eq!(
        outcome.report.packages[0].note.as_deref(),
        Some("files added to a version that was already there")
    );
}

#[test]
fn nothing_introduced_makes_an_empty_report() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::new(&[("foo", "1.0", &[])]);
    let foo = sha(&memory, "foo", "1.0");
    let base = write(dir.path(), "base.txt", &pin("foo", "1.0", &[&foo]));
    let lock = write(dir.path(), "lock.txt", &pin("foo", "1.0", &[&foo]));
    let outcome = check(&input(dir.path(), vec![base]), &lock, pages(memory));
    assert!(!outcome.failed);
    assert!(outcome.report.packages.is_empty());
    assert_eq!(outcome.report.eligible_on, None);
}

#[test]
fn config_layer_gives_each_target_its_bases_and_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let foo = "ab".repeat(32);
    let only312 = "cd".repeat(32);
    let base312 = write(dir.path(), "base312.txt", &pin("foo", "1.0", &[&foo]));
    let text = target("3.11")
        + &target("3.12")
        + &pin("foo", "1.0", &[&foo])
        + &format!("bar==2.0 ; python_version == \"3.12\" \\\n    --hash=sha256:{only312}\n");
    let lock = write(dir.path(), "lock.txt", &text);
    let layer_index = IndexPlan {
        index_urls: Vec::new(),
        find_links: vec![dir.path().join("wheels")],
    };
    let mut input = input(dir.path(), Vec::new());
    input.layers.insert(
        layerlock_lock::normalize(&dir.path().join("lock.txt")),
        LayerOutput {
            index: layer_index.clone(),
            targets: vec![
                (
                    LockTarget {
                        python: "3.11".to_string(),
                        platform: X86.to_string(),
                    },
                    Vec::new(),
                ),
                (
                    LockTarget {
                        python: "3.12".to_string(),
                        platform: X86.to_string(),
                    },
                    vec![base312],
                ),
            ],
        },
    );
    let read = Lock::read(&lock).unwrap();
    let known = already_there(&input, &read).unwrap();
    assert_eq!(known.len(), 2);
    let package = |name: &str| {
        read.packages
            .iter()
            .find(|p| p.name.as_ref() == name)
            .unwrap()
    };
    // foo is in 3.12's base, not 3.11's: 3.11 introduces it.
    assert_eq!(
        introduced_files(&known, package("foo")),
        BTreeSet::from([foo])
    );
    // bar serves 3.12 only, whose base lacks it.
    assert_eq!(
        introduced_files(&known, package("bar")),
        BTreeSet::from([only312])
    );
    // The layer's own index is the one asked.
    let asked = RefCell::new(None);
    let _ = check_cooldown(&input, &read, |index| {
        *asked.borrow_mut() = Some(index.find_links.clone());
        Ok(pages(Memory::default()))
    })
    .unwrap();
    assert_eq!(asked.into_inner(), Some(layer_index.find_links));
}

#[test]
fn pin_no_target_selects_is_new_even_when_a_base_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let win = "ef".repeat(32);
    let base = write(dir.path(), "base.txt", &pin("winonly", "1.0", &[&win]));
    let text = target("3.12")
        + &format!("winonly==1.0 ; sys_platform == \"win32\" \\\n    --hash=sha256:{win}\n");
    let lock = write(dir.path(), "lock.txt", &text);
    let input = input(dir.path(), vec![base]);
    let read = Lock::read(&lock).unwrap();
    let known = already_there(&input, &read).unwrap();
    assert_eq!(
        introduced_files(&known, &read.packages[0]),
        BTreeSet::from([win])
    );
}

#[test]
fn unhashed_pin_is_refused_before_the_index_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let lock = write(dir.path(), "lock.txt", "foo==1.0\n");
    let read = Lock::read(&lock).unwrap();
    let err = check_cooldown(
        &input(dir.path(), Vec::new()),
        &read,
        |_| -> Result<Pages, _> { panic!("no index is made for a lock without hashes") },
    )
    .unwrap_err();
    assert!(matches!(err, CooldownError::Unhashed { .. }));
    let message = err.to_string();
    assert!(
        message.ends_with(": foo==1.0 has no --hash; the cooldown reads the upload times of the hashed files (make the lock with `layerlock compile`)"),
        "{message}"
    );
}

#[test]
fn offline_and_uncached_without_recorded_times_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let lock = write(
        dir.path(),
        "lock.txt",
        &pin("foo", "1.0", &[&"ab".repeat(32)]),
    );
    let read = Lock::read(&lock).unwrap();
    let err = check_cooldown(&input(dir.path(), Vec::new()), &read, |_| Ok(Uncached)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--offline, and the cache holds no page for foo (asked: https://index.example/simple/); run once online, or drop --offline"
    );
}

#[test]
fn pins_from_source_are_taken_out_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let text = pin("foo", "1.0", &[&"ab".repeat(32)])
        + "bar @ git+https://example.com/bar.git@0123456789abcdef0123456789abcdef01234567\n    # version 0.3.0\n";
    let lock = write(dir.path(), "lock.txt", &text);
    let mut read = Lock::read(&lock).unwrap();
    let taken = take_from_source(&mut read);
    assert_eq!(taken.len(), 1);
    assert!(
        taken[0].starts_with("bar (git+https://example.com/bar.git"),
        "{taken:?}"
    );
    let left: Vec<String> = read.packages.iter().map(|p| p.name.to_string()).collect();
    assert_eq!(left, ["foo"]);
}

#[test]
fn missing_base_names_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let lock = write(
        dir.path(),
        "lock.txt",
        &pin("foo", "1.0", &[&"ab".repeat(32)]),
    );
    let input = input(dir.path(), vec![dir.path().join("no-such-base.txt")]);
    let read = Lock::read(&lock).unwrap();
    let err = check_cooldown(&input, &read, |_| Ok(pages(Memory::default()))).unwrap_err();
    assert!(matches!(err, CooldownError::Lock(_)));
    assert!(err.to_string().contains("no-such-base.txt"), "{err}");
}

/// Run git in `dir`, with an author of the test's.
fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn since_counts_what_the_lock_had_at_that_revision() {
    let dir = tempfile::tempdir().unwrap();
    let foo = "ab".repeat(32);
    let bar = "cd".repeat(32);
    git(dir.path(), &["init", "-q"]);
    let lock = write(dir.path(), "lock.txt", &pin("foo", "1.0", &[&foo]));
    git(dir.path(), &["add", "lock.txt"]);
    git(dir.path(), &["commit", "-q", "-m", "lock"]);
    write(
        dir.path(),
        "lock.txt",
        &(pin("bar", "2.0", &[&bar]) + &pin("foo", "1.0", &[&foo])),
    );
    let mut input = input(dir.path(), Vec::new());
    input.since = Some("HEAD".to_string());
    let read = Lock::read(&lock).unwrap();
    let known = already_there(&input, &read).unwrap();
    let new: Vec<BTreeSet<String>> = read
        .packages
        .iter()
        .map(|p| introduced_files(&known, p))
        .collect();
    assert_eq!(new, [BTreeSet::from([bar]), BTreeSet::new()]);

    // A lock the revision did not have introduces everything.
    let other = write(dir.path(), "other.txt", &pin("foo", "1.0", &[&foo]));
    let read = Lock::read(&other).unwrap();
    let known = already_there(&input, &read).unwrap();
    assert_eq!(
        introduced_files(&known, &read.packages[0]),
        BTreeSet::from([foo])
    );
}
