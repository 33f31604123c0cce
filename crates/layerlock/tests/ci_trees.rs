//! Real CI trees with hand-checked expectations (`../shared/corpus/ci-trees`:
//! vLLM, LMCache, DeepSpeed, each at one commit): every expected install is
//! found at its line, and no figure falls below what it is today. A clone
//! without `../shared` beside it skips with a message.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// A location: path and line.
type At = (String, u64);

fn trees(test: &str) -> Option<PathBuf> {
    let dir = common::repo_root().join("../shared/corpus/ci-trees");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped {test}: the real CI trees are not beside this checkout (../shared/corpus/ci-trees)"
        );
        None
    }
}

/// The `(path, line)` of every row of a TSV of expectations.
fn expected(file: &Path) -> BTreeSet<At> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut cols = l.split('\t');
            let path = cols.next().unwrap().to_string();
            (path, cols.next().unwrap().trim().parse().unwrap())
        })
        .collect()
}

/// The install locations `layerlock audit --format json` reports, run
/// inside `tree` (its own `layerlock.toml`, where it has one).
fn installs(tree: &Path) -> (BTreeSet<At>, u64) {
    let out = Command::cargo_bin("layerlock")
        .unwrap()
        .current_dir(tree)
        .env("NETRC", tree.join("no-netrc"))
        .args(["audit", "--format", "json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    let unexplained = report["summary"]["unexplained"].as_u64().unwrap();
    let found = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "job-time-install" || f["rule"] == "image-build-install")
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    (found, unexplained)
}

/// Every expected install found at its line but those `known` (each a
/// miss or a finding at another line, said why), no install location
/// nobody expects but those `extra`, and no more unexplained installs
/// than `unexplained` (the census's count, each one read by hand).
fn check(
    tree: &str,
    expectations: &str,
    known: &[(&str, u64)],
    extra: &[(&str, u64)],
    unexplained: u64,
) {
    let Some(root) = trees(tree) else {
        return;
    };
    let want = expected(&root.join("expected").join(expectations));
    let (found, census) = installs(&root.join(tree));
    assert!(
        census <= unexplained,
        "{tree}: {census} unexplained installs, more than the {unexplained} read by hand"
    );
    let known: BTreeSet<At> = known.iter().map(|(p, l)| (p.to_string(), *l)).collect();
    let extra: BTreeSet<At> = extra.iter().map(|(p, l)| (p.to_string(), *l)).collect();
    let missed: BTreeSet<&At> = want.difference(&found).collect();
    let unexpected: Vec<&At> = found
        .difference(&want)
        .filter(|at| !extra.contains(*at))
        .collect();
    let exact = want.len() - missed.len();
    eprintln!("{tree}: {exact} of {} installs at their line", want.len());
    let lost: Vec<&&At> = missed.iter().filter(|at| !known.contains(**at)).collect();
    assert!(
        lost.is_empty(),
        "{tree}: expected installs not found: {lost:?}"
    );
    assert!(
        unexpected.is_empty(),
        "{tree}: installs nobody expects: {unexpected:?}"
    );
}

#[test]
fn lmcache_every_install_at_its_line() {
    check("lmcache", "lmcache-audit.tsv", &[], &[], 0);
}

#[test]
fn deepspeed_every_install_at_its_line() {
    // The pre-commit run that installs the hooks is reported at its own
    // line (41) as well as the `xargs pip install` before it (36).
    check(
        "deepspeed",
        "deepspeed-audit.tsv",
        &[],
        &[(".github/workflows/formatting.yml", 41)],
        0,
    );
}

#[test]
fn vllm_every_install_at_its_line() {
    // The 16 Intel jobs' installs reach `eval "$CMDS"` through a value two
    // shell functions rewrote: found through that step. `setup.py
    // develop` installs too; the expectations were written before audit
    // modelled it.
    check(
        "vllm",
        "audit-locations.tsv",
        &[],
        &[
            ("docker/Dockerfile.cpu", 321),
            ("tests/standalone_tests/python_only_compile.sh", 185),
            ("tests/standalone_tests/python_only_compile.sh", 187),
        ],
        // Scripts only named, never run, by CI: `run-amd-test.sh` from
        // the ROCm pipeline generator's config, `install_deepgemm.sh` as a
        // source dependency of a step.
        4,
    );
}

/// What audit made of one of the repository's own real trees
/// (`tests/trees/`), against its hand-checked truth.
#[derive(Debug, Default, PartialEq, Eq)]
struct Figures {
    /// Expected installs found at their line.
    exact: usize,
    /// Expected installs not found at their line, and no finding, note or
    /// unexplained install at that line either.
    silent: usize,
    /// Install findings at a line the truth lists neither as an install
    /// nor as a judgment call.
    false_found: usize,
    /// The census's count.
    unexplained: u64,
}

/// The `(path, line)` rows of a truth file whose `why` column says
/// `judgment`.
fn judged(file: &Path) -> BTreeSet<At> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains("judgment"))
        .filter_map(|l| {
            let mut cols = l.split('\t');
            let path = cols.next()?.to_string();
            Some((path, cols.next()?.trim().parse().ok()?))
        })
        .collect()
}

fn figures(name: &str) -> Figures {
    let trees = common::repo_root().join("tests/trees");
    let want = expected(&trees.join(format!("{name}.audit.tsv")));
    let judged = judged(&trees.join(format!("{name}.non-installs.tsv")));
    let out = Command::cargo_bin("layerlock")
        .unwrap()
        .current_dir(trees.join(name))
        .env("NETRC", trees.join("no-netrc"))
        .args(["audit", "--format", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut found = BTreeSet::new();
    let mut named = BTreeSet::new();
    for f in report["findings"].as_array().unwrap() {
        let at = (
            f["path"].as_str().unwrap().to_string(),
            f["line"].as_u64().unwrap(),
        );
        if f["rule"] == "job-time-install" || f["rule"] == "image-build-install" {
            found.insert(at);
        } else {
            named.insert(at);
        }
    }
    Figures {
        exact: want.intersection(&found).count(),
        silent: want
            .iter()
            .filter(|at| !found.contains(*at) && !named.contains(*at))
            .count(),
        false_found: found
            .iter()
            .filter(|at| !want.contains(*at) && !judged.contains(*at))
            .count(),
        unexplained: report["summary"]["unexplained"].as_u64().unwrap(),
    }
}

/// Seven public trees measured for issue 40, each with its truth beside it
/// (`tests/trees/NAME.audit.tsv`, written by hand before any run; notes in
/// `NAME.notes.md`). No figure may fall below today's.
#[test]
fn the_repositorys_own_real_trees_hold_their_figures() {
    // (name, installs, exact, silent, false, unexplained) as of today.
    let today: [(&str, usize, usize, usize, usize, u64); 7] = [
        ("statsmodels", 22, 22, 0, 2, 0),
        ("h5py", 16, 15, 0, 11, 1),
        ("networkx", 22, 20, 0, 0, 2),
        ("dgl", 9, 9, 0, 8, 0),
        // Measured once, with no change made for them (the census's
        // `${SCRIPT_DIR}` reading came after, turning mne-python's 4
        // silent misses into named ones).
        ("migraphx", 20, 19, 0, 7, 1),
        ("scikit-image", 25, 25, 0, 0, 0),
        ("mne-python", 29, 25, 0, 0, 4),
    ];
    let mut fallen = Vec::new();
    for (name, installs, exact, silent, false_found, unexplained) in today {
        let got = figures(name);
        eprintln!("{name}: {got:?} of {installs}");
        if got.exact < exact
            || got.silent > silent
            || got.false_found > false_found
            || got.unexplained > unexplained
        {
            fallen.push((name, got));
        }
    }
    assert!(fallen.is_empty(), "figures fell: {fallen:?}");
}
