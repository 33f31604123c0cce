//! One layer for several targets (Python versions x platforms), each on its
//! own base: one lock whose entries carry markers, installed and verified
//! by the interpreter's own markers.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Index, Work, host_python, run, venv};

const X86: &str = "x86_64-manylinux_2_28";
const ARM: &str = "aarch64-manylinux_2_28";

/// The config of a layer served to an x86_64 and an aarch64 image of
/// `python`, whose bases disagree (engine 2 against engine 1) and of
/// which only the x86_64 one owns `ownedlib`.
fn two_images(work: &Work, index: &str, python: &str, inputs: &str, output: &str) {
    work.write("in.txt", inputs);
    work.write("base-x86.txt", "engine==2.0.0\nownedlib==4.0.0\n");
    work.write("base-arm.txt", "engine==1.0.0\n");
    work.write(
        "layerlock.toml",
        &format!(
            r#"index-url = "{index}"
python-version = "{python}"

[[layer]]
name = "kv"
inputs = ["in.txt"]
output = "{output}"

[[layer.target]]
platform = "{X86}"
bases = ["base-x86.txt"]

[[layer.target]]
platform = "{ARM}"
bases = ["base-arm.txt"]
"#
        ),
    );
}

/// The lines of `lock` that pin a package: `name==version ; marker`.
fn pin_lines(lock: &str) -> Vec<String> {
    lock.lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && l.contains("=="))
        .map(|l| l.trim_end_matches(" \\").to_string())
        .collect()
}

#[test]
fn two_platforms_share_versions_and_mark_what_differs() {
    let index = Index::start(&["targets.toml"], &[]);
    let work = Work::new();
    two_images(
        &work,
        &index.json(),
        "3.12",
        "kvconn\nplugin\nneedsowned\narmtool ; platform_machine == \"aarch64\"\n",
        "kv.txt",
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("kv.txt");
    assert_eq!(
        pin_lines(&lock),
        [
            "armtool==0.3.0 ; platform_machine == 'aarch64'",
            // 1.5.2 has no aarch64 wheel: both images take 1.5.1.
            "kvconn==1.5.1",
            "kvshared==1.1.0",
            "needsowned==1.0.0",
            // Only the x86_64 image owns it.
            "ownedlib==4.0.0 ; platform_machine == 'aarch64'",
            // The bases disagree: each image takes what its engine allows.
            "plugin==1.0.0 ; platform_machine == 'aarch64'",
            "plugin==2.0.0 ; platform_machine == 'x86_64'",
        ],
        "{lock}"
    );
    assert!(lock.contains(&format!("# layerlock-target: python=3.12 platform={X86}")));
    assert!(lock.contains(&format!("# layerlock-target: python=3.12 platform={ARM}")));
    // A requirements lock pins every file of the version (both Pythons'
    // wheels for both machines).
    let kvconn = lock.split("kvconn==").nth(1).unwrap();
    let kvconn = &kvconn[..kvconn.find("# via").unwrap()];
    assert_eq!(kvconn.matches("--hash=sha256:").count(), 4, "{lock}");
    // What differs is said, with why; what was held back too.
    assert!(
        stderr.contains("1 package's versions differ between the targets"),
        "{stderr}"
    );
    assert!(
        stderr.contains("plugin: 2.0.0 on Python 3.12 on x86_64-manylinux_2_28 (plugin==1.0.0 needs engine>=1,<2, but the image pins engine==2.0.0 (base-x86.txt:1))"),
        "{stderr}"
    );
    assert!(
        stderr.contains("kvconn 1.5.1 on Python 3.12 on x86_64-manylinux_2_28 (alone it would take 1.5.2; Python 3.12 on aarch64-manylinux_2_28 takes 1.5.1)"),
        "{stderr}"
    );
    // The same inputs give the same bytes, and --check agrees.
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(work.read("kv.txt"), lock);
    let (code, _, stderr) = run(work.layerlock(&["compile", "--check"]));
    assert_eq!(code, 0, "{stderr}");
    // cooldown checks every target's entries, with the config's index.
    let (code, stdout, stderr) = run(work.layerlock(&["cooldown", "--min-age", "7d"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("plugin     1.0.0"), "{stdout}");
    assert!(stdout.contains("plugin     2.0.0"), "{stdout}");
    // A change on one image is told for that image.
    work.write("base-arm.txt", "engine==2.0.0\n");
    let (code, stdout, stderr) = run(work.layerlock(&["compile", "--diff"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("upgraded   plugin ; platform_machine == 'aarch64' 1.0.0 -> 2.0.0"),
        "{stdout}"
    );
    assert!(
        stdout.starts_with("upgrades 1 package, keeps 5"),
        "{stdout}"
    );
    assert!(work.read("kv.txt").contains("\nplugin==2.0.0 \\\n"));
    work.write("base-arm.txt", "engine==1.0.0\n");
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    // covers works over every target: the aarch64 image lacks plugin.
    let (code, stdout, stderr) = run(work.layerlock(&["covers"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.contains(&format!("not covered on Python 3.12 on {X86}")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("not covered on Python 3.12 on {ARM}")),
        "{stdout}"
    );
}

#[test]
fn repeated_flags_make_the_matrix_and_pylock_names_every_environment() {
    let index = Index::start(&["targets.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "pyonly\nkvshared\n");
    let mut cmd = work.layerlock(&["compile", "in.txt", "-o", "pylock.toml"]);
    cmd.args(["--python-version", "3.12", "--python-version", "3.13"])
        .args(["--platform", X86, "--platform", ARM])
        .args(["--index-url", &index.json()]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("pylock.toml");
    // One version for all four: 2.0.0 needs Python 3.13.
    assert!(
        lock.contains("name = \"pyonly\"\nversion = \"1.0.0\"\n\n"),
        "{lock}"
    );
    assert!(
        stderr.contains(
            "pyonly 1.0.0 on Python 3.13 on x86_64-manylinux_2_28 (alone it would take 2.0.0"
        ),
        "{stderr}"
    );
    for python in ["3.12", "3.13"] {
        for machine in ["x86_64", "aarch64"] {
            assert!(
                lock.contains(&format!(
                    "python_full_version == '{python}.*' and platform_machine == '{machine}'"
                )) || lock.contains(&format!(
                    "platform_machine == '{machine}' and python_full_version == '{python}.*'"
                )),
                "{python} {machine}: {lock}"
            );
        }
    }
    assert!(
        lock.contains(
            "targets = [\n    { python = \"3.12\", platform = \"x86_64-manylinux_2_28\" },"
        ),
        "{lock}"
    );
    // No one Python: requires-python is left to the environments.
    assert!(!lock.contains("requires-python"), "{lock}");
    assert!(lock.starts_with("# This file was generated by layerlock for Python 3.12 and 3.13 on x86_64-manylinux_2_28 and aarch64-manylinux_2_28."), "{lock}");
}

#[test]
fn targets_no_marker_tells_apart_are_refused_before_any_fetch() {
    let work = Work::new();
    work.write("in.txt", "six\n");
    let mut cmd = work.layerlock(&["compile", "in.txt"]);
    cmd.args(["--python-version", "3.12"])
        .args(["--platform", "x86_64-manylinux_2_17", "--platform", X86])
        .args(["--index-url", "http://127.0.0.1:9/simple/"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("have the same markers"), "{stderr}");
}

#[test]
fn a_target_table_without_a_platform_is_named() {
    let work = Work::new();
    work.write("in.txt", "six\n");
    work.write(
        "layerlock.toml",
        "python-version = [\"3.12\", \"3.13\"]\n[[layer]]\nname = \"kv\"\ninputs = [\"in.txt\"]\n[[layer.target]]\nbases = []\n",
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("[[layer.target]] #1: name its `python-version` and `platform`"),
        "{stderr}"
    );
}

/// pip, uv and layerlock each install the entries of this interpreter's
/// target from one lock, and the entries of the other target never.
#[test]
fn every_installer_takes_this_interpreters_entries() {
    let index = Index::start(&["targets.toml"], &[]);
    let work = Work::new();
    let python = host_python();
    let inputs = "plugin\nkvshared\narmtool ; platform_machine == \"aarch64\"\n";
    two_images(&work, &index.json(), &python, inputs, "kv.txt");
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    two_images(&work, &index.json(), &python, inputs, "pylock.toml");
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    let installed = |python: &Path| -> String {
        let out = Command::new(python)
            .args(["-c", "import importlib.metadata as m; print(sorted(f\"{d.metadata['Name']}=={d.version}\" for d in m.distributions() if d.metadata['Name'] not in ('pip', 'setuptools')))"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let want = "['kvshared==1.1.0', 'plugin==2.0.0']";
    // pip, with hashes, from the requirements lock.
    let with_pip = venv(&work, "pip-env", true);
    let status = Command::new(&with_pip)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--require-hashes",
            "--no-deps",
        ])
        .args(["--index-url", &index.json(), "-r"])
        .arg(work.path().join("kv.txt"))
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(installed(&with_pip), want);
    // uv, from the pylock.toml.
    let with_uv = venv(&work, "uv-env", false);
    let status = Command::new("uv")
        .args(["pip", "install", "--quiet", "--python"])
        .arg(&with_uv)
        .args(["--index-url", &index.json(), "-r"])
        .arg(work.path().join("pylock.toml"))
        .env("UV_CACHE_DIR", work.path().join("uv-cache"))
        .status()
        .expect("uv (bash .ci/run installs it)");
    assert!(status.success());
    assert_eq!(installed(&with_uv), want);
    // layerlock, then verify, from either.
    for lock in ["kv.txt", "pylock.toml"] {
        let env = venv(&work, &format!("ll-{lock}"), false);
        // The image first: the layer relies on its engine.
        let status = Command::new("uv")
            .args(["pip", "install", "--quiet", "--no-deps", "--python"])
            .arg(&env)
            .args(["--index-url", &index.json(), "engine==2.0.0"])
            .env("UV_CACHE_DIR", work.path().join("uv-cache"))
            .status()
            .unwrap();
        assert!(status.success());
        let mut cmd = work.layerlock(&["install", lock, "--python"]);
        cmd.arg(&env)
            .args(["--index-url", &index.json()])
            .env("UV_CACHE_DIR", work.path().join("uv-cache"));
        let (code, _, stderr) = run(cmd);
        assert_eq!(code, 0, "{lock}: {stderr}");
        let with_image = want.replacen("['", "['engine==2.0.0', '", 1);
        assert_eq!(installed(&env), with_image, "{lock}");
        let mut cmd = work.layerlock(&["verify", lock, "--python"]);
        cmd.arg(&env);
        let (code, _, stderr) = run(cmd);
        assert_eq!(code, 0, "{lock}: {stderr}");
    }
}

#[test]
fn an_interpreter_no_target_covers_is_refused_naming_the_targets() {
    let index = Index::start(&["targets.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "kvshared\n");
    let mut cmd = work.layerlock(&["compile", "in.txt", "-o", "kv.txt"]);
    cmd.args(["--python-version", "3.13"])
        .args(["--platform", X86, "--platform", ARM])
        .args(["--index-url", &index.json()]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let env = venv(&work, "env", false);
    let mut cmd = work.layerlock(&["verify", "kv.txt", "--python"]);
    cmd.arg(&env);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "was compiled for Python 3.13 on {X86} and Python 3.13 on {ARM}"
        )),
        "{stderr}"
    );
}

#[test]
fn an_output_named_per_target_writes_a_file_for_each_with_shared_versions() {
    let index = Index::start(&["targets.toml"], &[]);
    let work = Work::new();
    two_images(
        &work,
        &index.json(),
        "3.12",
        "kvconn\nplugin\n",
        "kv-{platform}.txt",
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    let x86 = work.read(&format!("kv-{X86}.txt"));
    let arm = work.read(&format!("kv-{ARM}.txt"));
    // Each is a lock of one target, without markers, on its own base.
    assert_eq!(
        pin_lines(&x86),
        ["kvconn==1.5.1", "kvshared==1.1.0", "plugin==2.0.0"],
        "{x86}"
    );
    assert_eq!(
        pin_lines(&arm),
        ["kvconn==1.5.1", "kvshared==1.1.0", "plugin==1.0.0"],
        "{arm}"
    );
    assert!(
        x86.contains(&format!(
            "# layerlock-target: python=3.12 platform={X86}\n# layerlock-base: base-x86.txt\n"
        )),
        "{x86}"
    );
    let (code, _, stderr) = run(work.layerlock(&["compile", "--check"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(&format!("kv-{ARM}.txt is up to date")),
        "{stderr}"
    );
    // cooldown finds every target's file.
    let (code, stdout, stderr) = run(work.layerlock(&["cooldown", "--min-age", "7d"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.matches("kvconn ").count(), 2, "{stdout}");
    // A name that leaves two targets in one file is refused.
    work.write(
        "layerlock.toml",
        &format!(
            "index-url = \"{}\"\n[[layer]]\nname = \"kv\"\ninputs = [\"in.txt\"]\noutput = \"kv-{{python}}.txt\"\nplatform = [\"{X86}\", \"{ARM}\"]\npython-version = \"3.12\"\n",
            index.json()
        ),
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("would both be written to kv-3.12.txt"),
        "{stderr}"
    );
}

#[test]
fn a_target_may_ask_an_index_of_its_own() {
    let index = Index::start(&["targets.toml"], &[]);
    let vendor = Index::start(&["targets_vendor.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "kvshared\n");
    work.write(
        "layerlock.toml",
        &format!(
            r#"index-url = "{}"
python-version = "3.12"

[[layer]]
name = "kv"
inputs = ["in.txt"]
output = "kv.txt"

[[layer.target]]
platform = "{X86}"

[[layer.target]]
platform = "{ARM}"
index-url = "{}"
"#,
            index.json(),
            vendor.json()
        ),
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("kv.txt");
    assert_eq!(
        pin_lines(&lock),
        [
            "kvshared==1.1.0 ; platform_machine == 'x86_64'",
            "kvshared==9.0.0 ; platform_machine == 'aarch64'",
        ],
        "{lock}"
    );
    assert!(
        stderr.contains("kvshared: 1.1.0 on Python 3.12 on x86_64"),
        "{stderr}"
    );
    assert!(!vendor.requests().contains("/kvconn/"));
}

/// Review findings: what one target sets stays its own, and sharing a
/// version never gets round the cooldown.
#[test]
fn a_targets_keys_stay_its_own_and_the_cooldown_holds_for_shared_versions() {
    let index = Index::start(&["targets.toml"], &[]);
    let vendor = Index::start(&["targets_vendor.toml"], &[]);
    let work = Work::new();
    std::fs::create_dir_all(work.path().join("wheels")).unwrap();
    work.write("in.txt", "kvshared\nyoung\n");
    // The x86_64 image already has the young 1.0.5; the aarch64 one has
    // nothing.
    work.write("base-x86.txt", "young==1.0.5\n");
    // The vendor index is the first target's alone; the second sets only
    // find-links, and keeps the layer's index.
    work.write(
        "layerlock.toml",
        &format!(
            r#"index-url = "{}"
python-version = "3.12"

[[layer]]
name = "kv"
inputs = ["in.txt"]
output = "kv.txt"

[[layer.target]]
platform = "{X86}"
bases = ["base-x86.txt"]
index-url = "{}"
extra-index-url = ["{}"]

[[layer.target]]
platform = "{ARM}"
find-links = ["wheels"]
"#,
            index.json(),
            vendor.json(),
            vendor.json()
        ),
    );
    let cooldown = ["--min-age", "7d", "--now", "2024-06-03T00:00:00Z"];
    let mut cmd = work.layerlock(&["compile"]);
    cmd.args(cooldown);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("kv.txt");
    assert_eq!(
        pin_lines(&lock),
        [
            "kvshared==1.1.0 ; platform_machine == 'aarch64'",
            "kvshared==9.0.0 ; platform_machine == 'x86_64'",
            // Not the x86_64 base's young 1.0.5: a shared version is held
            // to the cooldown like any other.
            "young==1.1.0 ; platform_machine == 'aarch64'",
        ],
        "{lock}"
    );
    // Flags cannot replace the tables (their bases would be lost).
    let (code, _, stderr) = run(work.layerlock(&["compile", "--platform", X86]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot replace them"), "{stderr}");
    // -o with a name per target is checked like the config's output.
    let (code, _, stderr) = run(work.layerlock(&["compile", "-o", "kv-{python}.txt"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("would both be written to kv-3.12.txt"),
        "{stderr}"
    );
}

#[test]
fn a_one_target_layer_moved_to_another_python_is_no_removal() {
    let index = Index::start(&["targets.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "kvshared\n");
    let compile = |python: &str, diff: bool| {
        let mut cmd = work.layerlock(&["compile", "in.txt", "-o", "kv-{python}.txt"]);
        cmd.args(["--python-version", python, "--platform", X86])
            .args(["--index-url", &index.json()]);
        if diff {
            cmd.arg("--diff");
        }
        run(cmd)
    };
    let (code, _, stderr) = compile("3.12", false);
    assert_eq!(code, 0, "{stderr}");
    // One target: the name is filled in.
    assert!(work.path().join("kv-3.12.txt").is_file());
    std::fs::copy(
        work.path().join("kv-3.12.txt"),
        work.path().join("kv-3.13.txt"),
    )
    .unwrap();
    let (code, stdout, stderr) = compile("3.13", true);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("changes no package, keeps 1"),
        "{stdout}"
    );
}
