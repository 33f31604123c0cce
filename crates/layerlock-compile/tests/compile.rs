//! compile in-process: a layer written in the test, over an in-memory
//! index, with no binary and no HTTP server.

#![allow(clippy::unwrap_used)]

mod support;

use layerlock_compile::{CompileError, CooldownPlan, FixedSourceError, Note, UserPath};
use layerlock_resolve::memory::Memory;
use layerlock_resolve::{CooldownPolicy, Freed};
use support::{Work, also_for, compile, pins, told};

fn index() -> Memory {
    Memory::new(&[
        ("requests", "2.31.0", &["urllib3>=1.21", "idna>=2.5"]),
        ("requests", "2.32.3", &["urllib3>=1.21", "idna>=2.5"]),
        ("urllib3", "1.26.0", &[]),
        ("urllib3", "2.2.0", &[]),
        ("idna", "3.6", &[]),
        ("idna", "3.10", &[]),
        ("six", "1.16.0", &[]),
    ])
}

#[test]
fn the_lock_holds_only_what_the_base_lacks() {
    let work = Work::new();
    work.write("in.txt", "requests\n");
    work.write("image.txt", "urllib3==1.26.0\n");
    let compiled = compile(
        &work.layer(&["in.txt"], &["image.txt"]),
        &work.options(),
        &index(),
    )
    .unwrap();
    assert_eq!(pins(&compiled), ["idna==3.10", "requests==2.32.3"]);
    let text = compiled.written[0]
        .lock
        .render(layerlock_lock::LockFormat::Requirements, "out.txt");
    assert!(text.contains("urllib3==1.26.0 (image.txt:1)"), "{text}");
    assert!(compiled.notes.is_empty(), "{:?}", told(&compiled.notes));
}

#[test]
fn the_same_inputs_give_the_same_lock_byte_for_byte() {
    let work = Work::new();
    work.write("in.txt", "requests\nsix\n");
    let layer = work.layer(&["in.txt"], &[]);
    let render = || {
        let c = compile(&layer, &work.options(), &index()).unwrap();
        c.written[0].lock.render(layer.format, "out.txt")
    };
    assert_eq!(render(), render());
}

#[test]
fn a_base_conflict_names_the_base_pin_and_its_line() {
    let work = Work::new();
    work.write("in.txt", "requests==2.32.3\n");
    work.write("image.txt", "# the image\nurllib3==1.20\n");
    let failed = compile(
        &work.layer(&["in.txt"], &["image.txt"]),
        &work.options(),
        &index(),
    )
    .err()
    .unwrap();
    let CompileError::Unsolvable { message, .. } = &failed.error else {
        panic!("{:?}", failed.error);
    };
    assert!(
        message.starts_with("no layer for Python 3.12 on x86_64-manylinux_2_28 satisfies the requirements with the base fixed:"),
        "{message}"
    );
    assert!(message.contains("urllib3==1.20 (image.txt:2)"), "{message}");
    assert!(message.contains("(in.txt:1)"), "{message}");
}

#[test]
fn a_package_on_no_index_is_a_cause_a_command_can_act_on() {
    let work = Work::new();
    work.write("in.txt", "nowhere==1.0\n");
    let failed = compile(&work.layer(&["in.txt"], &[]), &work.options(), &index())
        .err()
        .unwrap();
    let CompileError::Unsolvable {
        causes, message, ..
    } = &failed.error
    else {
        panic!("{:?}", failed.error);
    };
    assert!(
        message.contains("nowhere is not on any index asked"),
        "{message}"
    );
    assert!(
        causes
            .iter()
            .any(|c| matches!(c, layerlock_resolve::Cause::NotFound(n) if n.as_ref() == "nowhere")),
        "{causes:?}"
    );
    // What the failed run fetched comes back for --stats.
    assert!(failed.fetched.is_some());
}

#[test]
fn an_input_without_requirements_is_refused_by_name() {
    let work = Work::new();
    work.write(
        "in.txt",
        "# nothing yet\n--index-url https://example.test/simple/\n",
    );
    let failed = compile(&work.layer(&["in.txt"], &[]), &work.options(), &index())
        .err()
        .unwrap();
    assert_eq!(
        failed.error.to_string(),
        "in.txt: no requirements (the file is empty or only comments and options); a layer needs at least one"
    );
}

#[test]
fn a_constraint_by_url_is_refused_with_its_line() {
    let work = Work::new();
    work.write("in.txt", "requests\n");
    work.write(
        "c.txt",
        "six\nidna @ https://example.test/idna-3.10-py3-none-any.whl\n",
    );
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.constraints = vec![work.user_path("c.txt")];
    let failed = compile(&layer, &work.options(), &index()).err().unwrap();
    let text = failed.error.to_string();
    assert!(
        text.starts_with("c.txt:2: --constraint takes versions, not URLs"),
        "{text}"
    );
}

#[test]
fn a_constraint_narrows_without_pulling_a_package_in() {
    let work = Work::new();
    work.write("in.txt", "requests\n");
    work.write("c.txt", "urllib3<2\nsix==1.16.0\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.constraints = vec![work.user_path("c.txt")];
    let compiled = compile(&layer, &work.options(), &index()).unwrap();
    assert_eq!(
        pins(&compiled),
        ["idna==3.10", "requests==2.32.3", "urllib3==1.26.0"]
    );
}

#[test]
fn an_override_replaces_what_a_dependency_asks() {
    let work = Work::new();
    work.write("in.txt", "requests\n");
    work.write("o.txt", "idna==3.6\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.overrides = vec![work.user_path("o.txt")];
    let compiled = compile(&layer, &work.options(), &index()).unwrap();
    assert!(
        pins(&compiled).contains(&"idna==3.6".to_string()),
        "{:?}",
        pins(&compiled)
    );
}

#[test]
fn the_pins_of_the_existing_lock_are_kept() {
    let work = Work::new();
    work.write("in.txt", "requests\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.output = Some(work.user_path("out.txt"));
    let old = Memory::new(&[("requests", "2.31.0", &["idna>=2.5"]), ("idna", "3.6", &[])]);
    let first = compile(&layer, &work.options(), &old).unwrap();
    let text = first.written[0].lock.render(layer.format, "out.txt");
    work.write("out.txt", &text);
    let mut newer = old.clone();
    newer.add("requests", "2.32.3", &["idna>=2.5"]);
    newer.add("idna", "3.10", &[]);
    let kept = compile(&layer, &work.options(), &newer).unwrap();
    assert_eq!(pins(&kept), ["idna==3.6", "requests==2.31.0"]);
    // -U frees them all.
    let mut options = work.options();
    options.freed = Freed {
        all: true,
        packages: Vec::new(),
    };
    let upgraded = compile(&layer, &options, &newer).unwrap();
    assert_eq!(pins(&upgraded), ["idna==3.10", "requests==2.32.3"]);
}

#[test]
fn upgrading_one_package_frees_only_that_pin() {
    let work = Work::new();
    work.write("in.txt", "requests\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.output = Some(work.user_path("out.txt"));
    let old = Memory::new(&[("requests", "2.31.0", &["idna>=2.5"]), ("idna", "3.6", &[])]);
    let first = compile(&layer, &work.options(), &old).unwrap();
    work.write(
        "out.txt",
        &first.written[0].lock.render(layer.format, "out.txt"),
    );
    let mut newer = old.clone();
    newer.add("requests", "2.32.3", &["idna>=2.5"]);
    newer.add("idna", "3.10", &[]);
    let mut options = work.options();
    options.freed = Freed {
        all: false,
        packages: vec![("idna".parse().unwrap(), None)],
    };
    options.changes = true;
    let moved = compile(&layer, &options, &newer).unwrap();
    assert_eq!(pins(&moved), ["idna==3.10", "requests==2.31.0"]);
    let changes = moved.written[0].changes.as_ref().unwrap();
    let text = changes.text(None);
    assert!(text.contains("idna"), "{text}");
    assert!(!text.contains("requests 2."), "{text}");
}

#[test]
fn upgrading_a_package_the_layer_lacks_says_so() {
    let work = Work::new();
    work.write("in.txt", "six\n");
    let mut options = work.options();
    options.freed = Freed {
        all: false,
        packages: vec![("numpy".parse().unwrap(), None)],
    };
    let failed = compile(&work.layer(&["in.txt"], &[]), &options, &index())
        .err()
        .unwrap();
    assert_eq!(
        failed.error.to_string(),
        "--upgrade-package numpy: numpy is not in the layer (nothing its requirements need); check the name"
    );
}

#[test]
fn another_tools_lock_keeps_its_exact_pins_and_says_so() {
    let work = Work::new();
    work.write("in.txt", "requests\n");
    work.write("out.txt", "requests==2.31.0\nidna==3.6\nsix>=1\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.output = Some(work.user_path("out.txt"));
    let compiled = compile(&layer, &work.options(), &index()).unwrap();
    assert!(pins(&compiled).contains(&"requests==2.31.0".to_string()));
    let lines = told(&compiled.notes);
    assert!(
        lines[0].starts_with("warning: out.txt is not a lock layerlock wrote"),
        "{lines:?}"
    );
    assert!(
        lines[0].ends_with("its 2 exact pins are kept, anything else in it is not"),
        "{lines:?}"
    );
}

#[test]
fn an_output_that_cannot_be_read_stops_the_compile_with_the_way_out() {
    let work = Work::new();
    work.write("in.txt", "requests\n");
    work.write("out.txt", "requests=2.31.0\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.output = Some(work.user_path("out.txt"));
    let failed = compile(&layer, &work.options(), &index()).err().unwrap();
    assert!(
        failed.error.to_string().starts_with(
            "out.txt is the output, and its pins are kept, but it cannot be read as a lock"
        ),
        "{}",
        failed.error
    );
    assert_eq!(
        failed.error.hints(),
        ["fix the line, or pass --upgrade to resolve afresh (every pin is then freed)"]
    );
}

#[test]
fn a_base_compiled_for_another_target_is_refused() {
    let work = Work::new();
    work.write("in.txt", "six\n");
    work.write("base.in", "idna\n");
    let mut base_layer = work.layer(&["base.in"], &[]);
    base_layer.python_version = "3.11".to_string();
    base_layer.targets[0].python_version = "3.11".to_string();
    let base = compile(&base_layer, &work.options(), &index()).unwrap();
    work.write(
        "base.txt",
        &base.written[0].lock.render(base_layer.format, "base.txt"),
    );
    let failed = compile(
        &work.layer(&["in.txt"], &["base.txt"]),
        &work.options(),
        &index(),
    )
    .err()
    .unwrap();
    let text = failed.error.to_string();
    assert!(
        text.starts_with("--base base.txt was compiled for Python 3.11"),
        "{text}"
    );
    assert!(
        failed.error.hints()[0].starts_with("pass the lock of the image"),
        "{failed:?}"
    );
}

#[test]
fn a_project_directory_is_read_in_place_and_written_from_the_lock() {
    let work = Work::new();
    work.write(
        "proj/pyproject.toml",
        "[project]\nname = \"proj\"\nversion = \"0.3.0\"\ndependencies = [\"six==1.16.0\"]\n",
    );
    work.write("in.txt", "-e ./proj\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    let compiled = compile(&layer, &work.options(), &index()).unwrap();
    assert_eq!(pins(&compiled), ["proj==0.3.0", "six==1.16.0"]);
    let text = compiled.written[0].lock.render(layer.format, "out.txt");
    assert!(
        text.contains("proj @ file:./proj\n    # version 0.3.0\n    # via -e ./proj\n"),
        "{text}"
    );
    // From the lock's own folder.
    layer.output = Some(work.user_path("locks/out.txt"));
    let compiled = compile(&layer, &work.options(), &index()).unwrap();
    let text = compiled.written[0]
        .lock
        .render(layer.format, "locks/out.txt");
    assert!(text.contains("proj @ file:../proj\n"), "{text}");
}

#[test]
fn a_directory_whose_metadata_is_dynamic_is_refused_without_building() {
    let work = Work::new();
    work.write(
        "dyn/pyproject.toml",
        "[project]\nname = \"dyn\"\ndynamic = [\"version\"]\n",
    );
    work.write("in.txt", "-e ./dyn\n");
    let failed = compile(&work.layer(&["in.txt"], &[]), &work.options(), &index())
        .err()
        .unwrap();
    let CompileError::Source(FixedSourceError::Editable { at, value, .. }) = &failed.error else {
        panic!("{:?}", failed.error);
    };
    assert_eq!((at.as_str(), value.as_str()), ("in.txt:1", "./dyn"));
    assert!(
        failed
            .error
            .to_string()
            .contains("layerlock never runs one"),
        "{}",
        failed.error
    );
}

#[test]
fn a_directory_named_otherwise_than_it_is_asked_is_refused() {
    let work = Work::new();
    work.write(
        "proj/pyproject.toml",
        "[project]\nname = \"proj\"\nversion = \"1\"\n",
    );
    work.write("in.txt", "other @ file:./proj\n");
    let failed = compile(&work.layer(&["in.txt"], &[]), &work.options(), &index())
        .err()
        .unwrap();
    assert!(
        matches!(&failed.error, CompileError::Source(FixedSourceError::OtherName { holds, .. }) if holds.as_ref() == "proj"),
        "{:?}",
        failed.error
    );
}

#[test]
fn a_directory_without_a_project_file_is_refused() {
    let work = Work::new();
    std::fs::create_dir_all(work.path().join("empty")).unwrap();
    work.write("in.txt", "thing @ file:./empty\n");
    let failed = compile(&work.layer(&["in.txt"], &[]), &work.options(), &index())
        .err()
        .unwrap();
    let text = failed.error.to_string();
    assert!(
        text.starts_with("in.txt:1: thing @ file:./empty: "),
        "{text}"
    );
    assert!(text.ends_with("has no pyproject.toml: its metadata is its build backend's to say, and layerlock never runs one"), "{text}");
}

fn cooldown(min_age: &str, now: &str) -> CooldownPlan {
    CooldownPlan {
        policy: CooldownPolicy {
            min_age: layerlock_resolve::parse_age(min_age).unwrap(),
            now: now.parse().unwrap(),
            exemptions: Vec::new(),
            allow_missing_time: false,
        },
        min_age_text: min_age.to_string(),
    }
}

fn aged() -> Memory {
    Memory::new(&[("six", "1.15.0", &[]), ("six", "1.16.0", &[])])
        .uploaded("six==1.15.0", "2026-01-01T00:00:00Z")
        .uploaded("six==1.16.0", "2026-10-30T00:00:00Z")
}

#[test]
fn what_the_cooldown_held_back_comes_back_as_a_note() {
    let work = Work::new();
    work.write("in.txt", "six\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.cooldown = Some(cooldown("7 days", "2026-11-01T00:00:00Z"));
    let compiled = compile(&layer, &work.options(), &aged()).unwrap();
    assert_eq!(pins(&compiled), ["six==1.15.0"]);
    assert!(matches!(&compiled.notes[..], [Note::HeldBack { held, .. }] if held.len() == 1));
    assert_eq!(
        told(&compiled.notes),
        [
            "the cooldown (7 days) held back 1 package:",
            "  six: 1.15.0 instead of 1.16.0 (eligible at 2026-11-06 00:00 UTC)"
        ]
    );
}

#[test]
fn a_cooldown_that_leaves_no_version_says_when_one_is_eligible() {
    let work = Work::new();
    work.write("in.txt", "six==1.16.0\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.cooldown = Some(cooldown("7 days", "2026-11-01T00:00:00Z"));
    let failed = compile(&layer, &work.options(), &aged()).err().unwrap();
    let text = failed.error.to_string();
    assert!(
        text.starts_with(
            "the cooldown (7 days before 2026-11-01 00:00 UTC) makes this layer unsolvable:"
        ),
        "{text}"
    );
    let hints = failed.error.hints();
    assert!(
        hints
            .iter()
            .any(|h| h.contains("eligible at 2026-11-06 00:00 UTC")),
        "{hints:?}"
    );
    assert!(
        hints
            .last()
            .unwrap()
            .starts_with("wait, or exempt a package"),
        "{hints:?}"
    );
}

#[test]
fn a_kept_pin_younger_than_the_cooldown_is_told() {
    let work = Work::new();
    work.write("in.txt", "six\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.output = Some(work.user_path("out.txt"));
    let first = compile(&layer, &work.options(), &aged()).unwrap();
    assert_eq!(pins(&first), ["six==1.16.0"]);
    work.write(
        "out.txt",
        &first.written[0].lock.render(layer.format, "out.txt"),
    );
    layer.cooldown = Some(cooldown("7 days", "2026-11-01T00:00:00Z"));
    let kept = compile(&layer, &work.options(), &aged()).unwrap();
    assert_eq!(pins(&kept), ["six==1.16.0"]);
    let lines = told(&kept.notes);
    assert!(
        lines[0].starts_with("kept 1 pin younger than the cooldown (kept pins"),
        "{lines:?}"
    );
    assert_eq!(lines[1], "  six==1.16.0 (eligible at 2026-11-06 00:00 UTC)");
}

fn pythons() -> Memory {
    Memory::new(&[
        ("numpy", "2.2.6", &[]),
        ("numpy", "2.5.0", &[]),
        ("six", "1.16.0", &[]),
    ])
    .requires_python("numpy==2.5.0", ">=3.11")
}

#[test]
fn two_targets_share_one_version_and_say_what_was_held() {
    let work = Work::new();
    work.write("in.txt", "numpy\nsix\n");
    let layer = also_for(work.layer(&["in.txt"], &[]), "3.10");
    let compiled = compile(&layer, &work.options(), &pythons()).unwrap();
    assert_eq!(compiled.resolved.len(), 2);
    assert_eq!(pins(&compiled), ["numpy==2.2.6", "six==1.16.0"]);
    let lines = told(&compiled.notes);
    assert_eq!(
        lines,
        [
            "1 package is held to the version another target takes:",
            "  numpy 2.2.6 on Python 3.12 on x86_64-manylinux_2_28 (alone it would take 2.5.0; Python 3.10 on x86_64-manylinux_2_28 takes 2.2.6)"
        ]
    );
}

#[test]
fn with_check_only_whether_the_lock_is_current_is_told() {
    let work = Work::new();
    work.write("in.txt", "numpy\n");
    let layer = also_for(work.layer(&["in.txt"], &[]), "3.10");
    let mut options = work.options();
    options.check = true;
    let compiled = compile(&layer, &options, &pythons()).unwrap();
    assert!(compiled.notes.is_empty(), "{:?}", told(&compiled.notes));
}

#[test]
fn an_output_named_per_target_gives_one_lock_each() {
    let work = Work::new();
    work.write("in.txt", "numpy\n");
    let mut layer = also_for(work.layer(&["in.txt"], &[]), "3.10");
    layer.output = Some(UserPath::new("lock-{python}.txt", work.path()));
    let compiled = compile(&layer, &work.options(), &pythons()).unwrap();
    let outputs: Vec<_> = compiled
        .written
        .iter()
        .map(|w| {
            (
                w.layer.output.clone().unwrap().shown,
                w.lock.packages[0].version.to_string(),
            )
        })
        .collect();
    assert_eq!(
        outputs,
        [
            ("lock-3.12.txt".to_string(), "2.2.6".to_string()),
            ("lock-3.10.txt".to_string(), "2.2.6".to_string())
        ]
    );
    assert_eq!(
        compiled.written[0].layer.name.as_deref(),
        Some("Python 3.12 on x86_64-manylinux_2_28")
    );
}

#[test]
fn targets_that_ask_one_index_share_its_source() {
    let work = Work::new();
    work.write("in.txt", "six\n");
    let layer = also_for(work.layer(&["in.txt"], &[]), "3.11");
    let only = layerlock_compile::Only::new(layerlock_compile::Plain(index()));
    layerlock_compile::compile_layer(&layer, &work.options(), &only).unwrap();
    assert_eq!(only.asked().len(), 1);
}

#[test]
fn index_options_of_the_inputs_count_only_when_no_index_is_named() {
    let work = Work::new();
    work.write("in.txt", "--index-url https://mirror.test/simple/\nsix\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.index_explicit = false;
    let only = layerlock_compile::Only::new(layerlock_compile::Plain(index()));
    layerlock_compile::compile_layer(&layer, &work.options(), &only).unwrap();
    let asked = only.asked();
    assert_eq!(asked[0].index_urls.len(), 1);
    assert_eq!(
        asked[0].index_urls[0].to_string(),
        "https://mirror.test/simple/"
    );
    layer.index_explicit = true;
    let only = layerlock_compile::Only::new(layerlock_compile::Plain(index()));
    layerlock_compile::compile_layer(&layer, &work.options(), &only).unwrap();
    assert!(only.asked()[0].index_urls.is_empty());
}

#[test]
fn the_freeze_tools_a_layer_pins_without_a_base_naming_them_are_found() {
    let work = Work::new();
    work.write("in.txt", "pip\nsix\n");
    work.write("image.txt", "idna==3.6\n");
    let tools = Memory::new(&[
        ("pip", "24.0", &[]),
        ("six", "1.16.0", &[]),
        ("idna", "3.6", &[]),
    ]);
    let layer = work.layer(&["in.txt"], &["image.txt"]);
    let compiled = compile(&layer, &work.options(), &tools).unwrap();
    let pinned = layerlock_compile::freeze_tools_pinned(
        &layer,
        &compiled.written[0].lock,
        &["pip", "setuptools"],
    );
    assert_eq!(pinned, ["pip==24.0"]);
    let alone = work.layer(&["in.txt"], &[]);
    assert!(
        layerlock_compile::freeze_tools_pinned(&alone, &compiled.written[0].lock, &["pip"])
            .is_empty()
    );
}

#[test]
fn a_version_the_image_installs_over_its_lock_is_resolved_against_and_said() {
    let work = Work::new();
    work.write("in.txt", "requests\n");
    work.write("image.txt", "urllib3==1.26.0\n");
    let mut layer = work.layer(&["in.txt"], &["image.txt"]);
    // `--owned` another version than the base pins: refused as drift.
    layer.targets[0].owned = vec!["urllib3==2.2.0".to_string()];
    let failed = compile(&layer, &work.options(), &index()).err().unwrap();
    assert!(
        matches!(failed.error, CompileError::Base(_)),
        "{:?}",
        failed.error
    );
    layer.targets[0].owned = Vec::new();
    layer.owned_over = vec!["urllib3==2.2.0".to_string()];
    let compiled = compile(&layer, &work.options(), &index()).unwrap();
    let text = compiled.written[0].lock.render(layer.format, "out.txt");
    assert!(
        text.contains("# layerlock-owned: urllib3==2.2.0 (installed over the base's pin)\n"),
        "{text}"
    );
    assert!(
        text.contains("#   urllib3==2.2.0 (--owned-over, over 1.26.0 (image.txt:1)) via requests"),
        "{text}"
    );
}
