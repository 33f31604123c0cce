//! The cooldown: at compile time (held back, unsolvable, exempt) and when
//! checking a lock (`layerlock cooldown`), with a pinned clock.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::process::Command;

use common::{Index, Work, pins, run};

const NOW: &str = "2026-11-30T00:00:00Z";

fn compile(work: &Work, index: &str, args: &[&str]) -> (i32, String, String) {
    run(work.compile(index, args))
}

#[test]
fn compile_holds_back_a_young_version_and_says_when_it_is_eligible() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "fresh\nstable\n");
    let (code, _, stderr) = compile(
        &work,
        &index.json(),
        &[
            "in.txt",
            "--min-age",
            "7 days",
            "--now",
            NOW,
            "-o",
            "out.txt",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("out.txt")),
        vec!["fresh==1.0.0", "stable==1.0.0"]
    );
    assert!(
        stderr.contains("the cooldown (7 days) held back 1 package:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("fresh: 1.0.0 instead of 2.0.0 (eligible at 2026-12-04 12:00 UTC)"),
        "{stderr}"
    );
    // Exempt, it is used.
    let (code, _, stderr) = compile(
        &work,
        &index.json(),
        &[
            "in.txt",
            "--min-age",
            "P7D",
            "--now",
            NOW,
            "--min-age-exempt",
            "fresh",
            "-o",
            "ex.txt",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(pins(&work.read("ex.txt")).contains(&"fresh==2.0.0".to_string()));
}

#[test]
fn compile_made_unsolvable_by_the_cooldown_says_so() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "needsfresh\n");
    let (code, _, stderr) = compile(
        &work,
        &index.json(),
        &["in.txt", "--min-age", "7d", "--now", NOW],
    );
    assert_eq!(code, 2);
    assert!(
        stderr
            .contains("the cooldown (7d before 2026-11-30 00:00 UTC) makes this layer unsolvable"),
        "{stderr}"
    );
    assert!(
        stderr.contains("too young for the cooldown (eligible at 2026-12-04 12:00 UTC"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: without the cooldown fresh==2.0.0 would be used; it becomes eligible at 2026-12-04 12:00 UTC"),
        "{stderr}"
    );
}

fn lock_all(work: &Work, index: &Index) {
    work.write("in.txt", "fresh\nstable\n");
    let (code, _, stderr) = compile(work, &index.json(), &["in.txt", "-o", "lock.txt"]);
    assert_eq!(code, 0, "{stderr}");
}

fn check(work: &Work, index: &str, args: &[&str]) -> (i32, String, String) {
    let mut cmd = work.layerlock(&["cooldown", "lock.txt", "--index-url", index, "--now", NOW]);
    cmd.args(args);
    run(cmd)
}

#[test]
fn checking_a_lock_names_each_young_package_and_the_date() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    lock_all(&work, &index);
    let (code, stdout, _) = check(&work, &index.json(), &["--min-age", "7d"]);
    assert_eq!(code, 1, "{stdout}");
    insta::assert_snapshot!(stdout, @r"
    package version uploaded   age (d) eligible at (UTC) status
    fresh   2.0.0   2026-11-27     2.5 2026-12-04 12:00  too young
    stable  1.0.0   2026-01-01   333.0 2026-01-08 00:00  ok
    2 versions introduced: 1 ok, 1 too young
    eligible from 2026-12-04 12:00 UTC
    ");
    let (code, stdout, _) = check(&work, &index.json(), &["--min-age", "2d"]);
    assert_eq!(code, 0, "{stdout}");
    let (_, stdout, _) = check(
        &work,
        &index.json(),
        &["--min-age", "7d", "--format", "json"],
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["version"], 1);
    assert_eq!(report["min_age_seconds"], 604800);
    assert_eq!(report["eligible_on"], "2026-12-04T12:00:00Z");
    assert_eq!(report["packages"][0]["status"], "too young");
}

#[test]
fn exemptions_and_expired_exemptions_from_the_config() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    lock_all(&work, &index);
    work.write(
        "layerlock.toml",
        "[cooldown]\nmin-age = \"7 days\"\nexempt = [{ package = \"fresh\", reason = \"security fix\", until = \"2026-12-31\" }]\n",
    );
    let (code, stdout, _) = check(&work, &index.json(), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("exempt (security fix)"), "{stdout}");
    work.write(
        "layerlock.toml",
        "[cooldown]\nmin-age = \"7 days\"\nexempt = [{ package = \"fresh\", reason = \"security fix\", until = \"2026-11-01\" }]\n",
    );
    let (code, stdout, _) = check(&work, &index.json(), &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("exemption expired (exemption expired on 2026-11-01 (security fix))"),
        "{stdout}"
    );
    // An exemption for one version stops applying when the lock moves on.
    work.write(
        "layerlock.toml",
        "[cooldown]\nmin-age = \"7 days\"\nexempt = [{ package = \"fresh\", version = \"2.0.0\", reason = \"security fix\" }]\n",
    );
    let (code, stdout, _) = check(&work, &index.json(), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("exempt (security fix)"), "{stdout}");
    work.write(
        "layerlock.toml",
        "[cooldown]\nmin-age = \"7 days\"\nexempt = [{ package = \"fresh\", version = \"1.0.0\", reason = \"security fix\" }]\n",
    );
    let (code, stdout, _) = check(&work, &index.json(), &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("too young (the exemption names version 1.0.0, the lock has 2.0.0)"),
        "{stdout}"
    );
    let (code, stdout, _) = check(&work, &index.json(), &["--min-age-exempt", "fresh==2.0.0"]);
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn a_base_range_does_not_hide_a_locked_version() {
    // `fresh>=2.0.0` in a base says what is allowed, not what is there: the
    // lock's fresh==2.0.0 is still introduced and still judged.
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    lock_all(&work, &index);
    work.write("base.txt", "fresh>=2.0.0\n");
    let (code, stdout, _) = check(
        &work,
        &index.json(),
        &["--min-age", "7d", "--base", "base.txt"],
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("too young"), "{stdout}");
}

#[test]
fn a_file_uploaded_after_now_is_not_yet_uploaded() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    lock_all(&work, &index);
    let mut cmd = work.layerlock(&["cooldown", "lock.txt", "--index-url", &index.json()]);
    cmd.args(["--now", "2026-11-20", "--min-age", "7d", "--format", "json"]);
    let (code, stdout, _) = run(cmd);
    assert_eq!(code, 1, "{stdout}");
    assert!(!stdout.contains("-0.0"), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["packages"][0]["status"], "not yet uploaded");
    assert_eq!(report["packages"][0]["age_days"], 0.0);
}

#[test]
fn a_missing_upload_time_falls_back_to_the_json_api_then_fails_closed() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    lock_all(&work, &index);
    // The HTML form of the index carries no upload times; the JSON API
    // beside it (`/html/pypi/NAME/VERSION/json`) does.
    let (code, stdout, _) = check(&work, &index.html(), &["--min-age", "7d"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("fresh   2.0.0   2026-11-27"), "{stdout}");
    assert!(index.requests().contains("/html/pypi/fresh/2.0.0/json"));

    // Without it, the check fails closed.
    let bare = Index::start(&["cooldown.toml"], &["--no-json-api"]);
    let (code, stdout, _) = check(&work, &bare.html(), &["--min-age", "7d"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("unknown upload time"), "{stdout}");
    let (code, stdout, _) = check(
        &work,
        &bare.html(),
        &["--min-age", "7d", "--allow-missing-time"],
    );
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn only_what_the_lock_introduces_counts() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    lock_all(&work, &index);
    work.write("base.txt", "fresh==2.0.0\n");
    let (code, stdout, _) = check(
        &work,
        &index.json(),
        &["--min-age", "7d", "--base", "base.txt"],
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(!stdout.contains("fresh"), "{stdout}");

    // --since: the lock at a git revision of a temporary repository.
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(work.path())
            .status()
            .unwrap();
        assert!(status.success());
    };
    let full = work.read("lock.txt");
    let only_stable: String = full.split("\nfresh==").next().unwrap().to_string()
        + "\n"
        + &full[full.find("stable==").unwrap()..];
    work.write("lock.txt", &only_stable);
    git(&["init", "-q"]);
    git(&["add", "lock.txt"]);
    git(&["commit", "-q", "-m", "old lock"]);
    work.write("lock.txt", &full);
    let (code, stdout, _) = check(
        &work,
        &index.json(),
        &["--min-age", "7d", "--since", "HEAD"],
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("fresh"), "{stdout}");
    assert!(!stdout.contains("stable"), "{stdout}");
}

#[test]
fn a_base_pin_with_another_hash_or_a_false_marker_hides_nothing() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    lock_all(&work, &index);
    // The same version, but another file: the lock's file is new.
    let other = "0".repeat(64);
    work.write("base.txt", &format!("fresh==2.0.0 --hash=sha256:{other}\n"));
    let (code, stdout, _) = check(
        &work,
        &index.json(),
        &["--min-age", "7d", "--base", "base.txt"],
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("too young"), "{stdout}");
    // A base pin for another platform does not say the image has it.
    work.write("winbase.txt", "fresh==2.0.0 ; sys_platform == 'win32'\n");
    let (code, stdout, _) = check(
        &work,
        &index.json(),
        &["--min-age", "7d", "--base", "winbase.txt"],
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("too young"), "{stdout}");
}

#[test]
fn a_pylock_cannot_vouch_for_its_own_upload_times() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "fresh\nstable\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "pylock.kv.toml"]));
    assert_eq!(code, 0, "{stderr}");
    let forged = work
        .read("pylock.kv.toml")
        .lines()
        .map(|l| {
            if l.starts_with("upload-time = 2026") {
                "upload-time = 2020-01-01T00:00:00Z".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    work.write("pylock.kv.toml", &forged);
    let mut cmd = work.layerlock(&["cooldown", "pylock.kv.toml", "--index-url", &index.json()]);
    cmd.args(["--now", NOW, "--min-age", "7d"]);
    let (code, stdout, _) = run(cmd);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("too young"), "{stdout}");
}

#[test]
fn without_a_lock_every_configured_layer_is_checked() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    lock_all(&work, &index);
    work.write("stable.in", "stable\n");
    let (code, _, stderr) = compile(&work, &index.json(), &["stable.in", "-o", "stable.txt"]);
    assert_eq!(code, 0, "{stderr}");
    work.write(
        "layerlock.toml",
        "[cooldown]\nmin-age = \"7d\"\n\n[[layer]]\nname = \"all\"\ninputs = [\"in.txt\"]\noutput = \"lock.txt\"\n\n[[layer]]\nname = \"stable\"\ninputs = [\"stable.in\"]\noutput = \"stable.txt\"\n",
    );
    let (code, stdout, stderr) = run(work.layerlock(&[
        "cooldown",
        "--index-url",
        &index.json(),
        "--now",
        NOW,
        "--format",
        "json",
    ]));
    assert_eq!(code, 1, "{stdout}{stderr}");
    let reports: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(reports.as_array().map(Vec::len), Some(2), "{stdout}");
    let (code, stdout, _) =
        run(work.layerlock(&["cooldown", "--index-url", &index.json(), "--now", NOW]));
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("== "), "{stdout}");
    // Nothing configured and no lock: say what to give.
    let empty = Work::new();
    let (code, _, stderr) = run(empty.layerlock(&["cooldown", "--min-age", "7d"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no lock to check"), "{stderr}");
}

/// CRC-32 (IEEE), as the cache seals its entries.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for b in bytes {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Rewrite the cached page line of `filename` with `edit`, with every
/// checksum and length in the entry made right again: damage the cache's
/// checksums do not catch. (An entry: a line `layerlock-page 3`, the head's
/// length and CRC; the head, the page's URL line and the index of runs of
/// lines, each with its lines, bytes and CRC; the runs, the last one being
/// the lines of no version, its CRC on the index's first line.)
fn damage_cached_line(work: &Work, filename: &str, edit: impl Fn(&str) -> String) {
    let pages = work.cache.join("v4/pages");
    let mut damaged = 0;
    for entry in std::fs::read_dir(&pages).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let (first, rest) = text.split_once('\n').unwrap();
        let head_len: usize = first.split('\t').nth(1).unwrap().parse().unwrap();
        let (head, body) = rest.split_at(head_len);
        if !body.contains(filename) {
            continue;
        }
        let (validators, index) = head.split_once('\n').unwrap();
        let index: Vec<&str> = index.lines().collect();
        // Each run's lines, with its index line (none for the last).
        let mut at = 0;
        let mut runs: Vec<(Option<&str>, &str)> = index[1..]
            .iter()
            .map(|line| {
                let bytes: usize = line.split('\t').nth(2).unwrap().parse().unwrap();
                at += bytes;
                (Some(*line), &body[at - bytes..at])
            })
            .collect();
        runs.push((None, &body[at..]));
        let (mut new_index, mut new_body) = (String::new(), String::new());
        let mut last_crc = 0;
        for (line, run) in runs {
            let run: String = run
                .split_inclusive('\n')
                .map(|l| {
                    if l.starts_with(filename) {
                        damaged += 1;
                        format!("{}\n", edit(l.trim_end_matches('\n')))
                    } else {
                        l.to_string()
                    }
                })
                .collect();
            let crc = crc32(run.as_bytes());
            match line {
                Some(line) => {
                    let fields: Vec<&str> = line.split('\t').collect();
                    let (version, lines) = (fields[0], fields[1]);
                    let bytes = run.len();
                    new_index.push_str(&format!("{version}\t{lines}\t{bytes}\t{crc:08x}\n"));
                }
                None => last_crc = crc,
            }
            new_body.push_str(&run);
        }
        let counts: Vec<&str> = index[0].split('\t').collect();
        let (versions, lines, local) = (counts[0], counts[1], counts[2]);
        let head =
            format!("{validators}\n{versions}\t{lines}\t{local}\t{last_crc:08x}\n{new_index}");
        let crc = crc32(head.as_bytes());
        let entry_text = format!(
            "layerlock-page 3\t{}\t{crc:08x}\n{head}{new_body}",
            head.len()
        );
        std::fs::write(entry.path(), entry_text).unwrap();
    }
    assert_eq!(damaged, 1, "one cached line of {filename}");
}

#[test]
fn a_damaged_cached_line_is_an_error_not_a_missing_upload_time() {
    let index = Index::start(&["cooldown.toml"], &[]);
    let work = Work::new();
    lock_all(&work, &index);
    // fresh 2.0.0's upload time, damaged: with --allow-missing-time it read
    // as a file without a time, and the too-young version passed.
    damage_cached_line(&work, "fresh-2.0.0-", |line| {
        let mut fields: Vec<&str> = line.split('\t').collect();
        fields[5] = "not-a-time";
        fields.join("\t")
    });
    let (code, stdout, stderr) = check(
        &work,
        &index.json(),
        &["--min-age", "7d", "--allow-missing-time", "--offline"],
    );
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("the cache is damaged"), "{stderr}");
    assert!(!stderr.contains("fill the cache"), "{stderr}");
}
