//! The file check in-process: wheels listed from an in-memory index,
//! compared with the image's and with each other.

#![allow(clippy::unwrap_used)]

mod support;

use layerlock_compile::{CompileError, CompileOptions, Note};
use layerlock_resolve::memory::Memory;
use support::{Work, compile, pins, told};

/// The image's cupy built for CUDA 12, and the layer's for CUDA 13: both
/// write `cupy/`, with other bytes, beside a shared namespace file.
fn cupy() -> Memory {
    Memory::new(&[
        ("cupy-cuda12x", "13.6.0", &[]),
        ("cupy-cuda13x", "14.0.1", &[]),
        ("lmcache", "0.3.9", &["cupy-cuda13x"]),
    ])
    .files(
        "cupy-cuda12x==13.6.0",
        &[
            ("cupy/__init__.py", 12, 100),
            ("cupy/_core.so", 120, 9000),
            ("shared/__init__.py", 7, 0),
        ],
    )
    .files(
        "cupy-cuda13x==14.0.1",
        &[
            ("cupy/__init__.py", 13, 100),
            ("cupy/_core.so", 130, 9100),
            ("shared/__init__.py", 7, 0),
        ],
    )
    .files("lmcache==0.3.9", &[("lmcache/__init__.py", 1, 10)])
}

#[test]
fn a_variant_that_writes_over_the_images_package_is_refused_with_the_ways_out() {
    let work = Work::new();
    work.write("in.txt", "lmcache\n");
    work.write("image.txt", "cupy-cuda12x==13.6.0\n");
    let layer = work.layer(&["in.txt"], &["image.txt"]);
    let failed = compile(&layer, &work.checked(), &cupy()).err().unwrap();
    let CompileError::Clashes { clashes, .. } = &failed.error else {
        panic!("{:?}", failed.error);
    };
    assert_eq!(clashes.len(), 1, "{clashes:?}");
    assert_eq!(clashes[0].layer, "cupy-cuda13x==14.0.1");
    assert_eq!(clashes[0].other, "cupy-cuda12x==13.6.0");
    assert!(clashes[0].image);
    // The namespace file has the same bytes: two files, not three.
    assert_eq!(clashes[0].files, 2);
    assert_eq!(clashes[0].example, "cupy/__init__.py");
    let text = failed.error.to_string();
    assert!(
        text.ends_with("cupy-cuda13x==14.0.1 writes over 2 files of the image's cupy-cuda12x==13.6.0 (e.g. cupy/__init__.py)"),
        "{text}"
    );
    let ways = failed.error.ways_out();
    assert!(
        ways.iter().any(|h| h.contains("--replace cupy-cuda12x")),
        "{ways:?}"
    );
    assert!(
        ways.iter()
            .any(|h| h.contains("`cupy-cuda13x ; sys_platform == \"never\"`")),
        "{ways:?}"
    );
}

#[test]
fn the_images_package_replaced_on_purpose_is_recorded_in_the_lock() {
    let work = Work::new();
    work.write("in.txt", "lmcache\n");
    work.write("image.txt", "cupy-cuda12x==13.6.0\n");
    let mut layer = work.layer(&["in.txt"], &["image.txt"]);
    layer.replace = vec!["cupy-cuda12x".parse().unwrap()];
    let compiled = compile(&layer, &work.checked(), &cupy()).unwrap();
    let lock = &compiled.written[0].lock;
    assert_eq!(lock.header.replaces, ["cupy-cuda12x==13.6.0"]);
    assert!(
        lock.header.unchecked.is_empty(),
        "{:?}",
        lock.header.unchecked
    );
    assert!(matches!(&compiled.notes[..], [Note::Replaces(r)] if r == &["cupy-cuda12x==13.6.0"]));
    let text = lock.render(layer.format, "out.txt");
    assert!(
        text.contains("# layerlock-replaces: cupy-cuda12x==13.6.0\n"),
        "{text}"
    );
}

/// NIXL's meta package pulls both CUDA builds, which write one library.
fn nixl() -> Memory {
    Memory::new(&[
        ("nixl", "1.5.1", &["nixl-cu12", "nixl-cu13"]),
        ("nixl-cu12", "1.5.1", &[]),
        ("nixl-cu13", "1.5.1", &[]),
    ])
    .files("nixl==1.5.1", &[("nixl/__init__.py", 1, 1)])
    .files("nixl-cu12==1.5.1", &[("nixl_cu/libnixl.so", 12, 500)])
    .files("nixl-cu13==1.5.1", &[("nixl_cu/libnixl.so", 13, 500)])
}

#[test]
fn two_of_the_layers_own_packages_that_write_one_file_are_refused() {
    let work = Work::new();
    work.write("in.txt", "nixl\n");
    let failed = compile(&work.layer(&["in.txt"], &[]), &work.checked(), &nixl())
        .err()
        .unwrap();
    let CompileError::Clashes { clashes, .. } = &failed.error else {
        panic!("{:?}", failed.error);
    };
    assert_eq!(
        (
            clashes[0].layer.as_str(),
            clashes[0].other.as_str(),
            clashes[0].image
        ),
        ("nixl-cu13==1.5.1", "nixl-cu12==1.5.1", false)
    );
    // Either may be the one to keep out.
    let ways = failed.error.ways_out();
    assert!(
        ways.iter().any(|h| h.starts_with("keep nixl-cu12 out")),
        "{ways:?}"
    );
    assert!(
        ways.iter().any(|h| h.starts_with("keep nixl-cu13 out")),
        "{ways:?}"
    );
}

#[test]
fn an_override_whose_marker_never_holds_keeps_the_variant_out() {
    let work = Work::new();
    work.write("in.txt", "nixl\n");
    work.write("o.txt", "nixl-cu12 ; sys_platform == \"never\"\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.overrides = vec![work.user_path("o.txt")];
    let compiled = compile(&layer, &work.checked(), &nixl()).unwrap();
    assert_eq!(pins(&compiled), ["nixl==1.5.1", "nixl-cu13==1.5.1"]);
}

fn tools(first: &str, second: &str) -> Memory {
    Memory::new(&[("a", "1", &[]), ("b", "1", &[])])
        .files("a==1", &[("a/__init__.py", 1, 1)])
        .files("b==1", &[("b/__init__.py", 2, 1)])
        .script("a==1", "tool", first)
        .script("b==1", "tool", second)
}

#[test]
fn two_console_scripts_of_one_name_clash_unless_they_run_the_same() {
    let work = Work::new();
    work.write("in.txt", "a\nb\n");
    let layer = work.layer(&["in.txt"], &[]);
    let failed = compile(&layer, &work.checked(), &tools("a.cli:main", "b.cli:main"))
        .err()
        .unwrap();
    let CompileError::Clashes { clashes, .. } = &failed.error else {
        panic!("{:?}", failed.error);
    };
    assert_eq!(clashes[0].example, "bin/tool");
    assert!(compile(&layer, &work.checked(), &tools("x:main", "x:main")).is_ok());
}

#[test]
fn a_script_shipped_as_data_clashes_with_a_generated_one() {
    let work = Work::new();
    work.write("in.txt", "a\nb\n");
    let index = Memory::new(&[("a", "1", &[]), ("b", "1", &[])])
        .files("a==1", &[("a-1.data/scripts/tool", 5, 50)])
        .files("b==1", &[("b/__init__.py", 2, 1)])
        .script("b==1", "tool", "b:main");
    let failed = compile(&work.layer(&["in.txt"], &[]), &work.checked(), &index)
        .err()
        .unwrap();
    assert!(
        failed.error.to_string().contains("(e.g. bin/tool)"),
        "{}",
        failed.error
    );
}

fn cased() -> Memory {
    Memory::new(&[("pyjwt", "2.0", &[]), ("jwt", "1.3", &[])])
        .files("pyjwt==2.0", &[("JWT/api.py", 1, 10)])
        .files("jwt==1.3", &[("jwt/api.py", 2, 10)])
}

#[test]
fn paths_compare_without_case_on_macos_and_windows_only() {
    let work = Work::new();
    work.write("in.txt", "jwt\n");
    work.write("image.txt", "pyjwt==2.0\n");
    let linux = work.layer(&["in.txt"], &["image.txt"]);
    assert!(compile(&linux, &work.checked(), &cased()).is_ok());
    for platform in ["aarch64-apple-darwin", "x86_64-pc-windows-msvc"] {
        let mut layer = work.layer(&["in.txt"], &["image.txt"]);
        layer.platform = platform.to_string();
        layer.targets[0].platform = platform.to_string();
        let failed = compile(&layer, &work.checked(), &cased()).err().unwrap();
        assert!(
            matches!(failed.error, CompileError::Clashes { .. }),
            "{platform}: {:?}",
            failed.error
        );
    }
}

fn partly_known() -> Memory {
    Memory::new(&[("app", "1", &[]), ("docopt", "0.6.2", &[])])
        .files("app==1", &[("app/__init__.py", 1, 1)])
        .sdist_only("docopt==0.6.2")
}

#[test]
fn what_cannot_be_listed_is_named_on_stderr_and_in_the_lock() {
    let work = Work::new();
    work.write("in.txt", "app\n");
    work.write("image.txt", "docopt==0.6.2\ntorch==2.11.0+cu130\n");
    let layer = work.layer(&["in.txt"], &["image.txt"]);
    let compiled = compile(&layer, &work.checked(), &partly_known()).unwrap();
    let unchecked = &compiled.written[0].lock.header.unchecked;
    assert_eq!(
        unchecked,
        &[
            "docopt==0.6.2 (an sdist only: its files are known once built)",
            "torch==2.11.0+cu130 (not on the indexes asked)"
        ]
    );
    let lines = told(&compiled.notes);
    assert_eq!(
        lines[0],
        "not checked for files written over (2 distributions; named in the lock's header):"
    );
    // Asked to, it is an error instead.
    let mut strict = layer.clone();
    strict.require_checked = true;
    let failed = compile(&strict, &work.checked(), &partly_known())
        .err()
        .unwrap();
    assert!(
        matches!(failed.error, CompileError::Unchecked { .. }),
        "{:?}",
        failed.error
    );
    assert!(
        failed
            .error
            .to_string()
            .starts_with("--require-checked: the files of 2 distributions")
    );
}

#[test]
fn a_layer_built_from_an_sdist_is_named_too() {
    let work = Work::new();
    work.write("in.txt", "docopt\n");
    let compiled = compile(
        &work.layer(&["in.txt"], &[]),
        &work.checked(),
        &partly_known(),
    )
    .unwrap();
    assert_eq!(
        compiled.written[0].lock.header.unchecked,
        ["docopt==0.6.2 (an sdist: its files are known once built)"]
    );
}

#[test]
fn a_layer_with_nothing_of_its_own_reads_no_image_file() {
    let work = Work::new();
    work.write("in.txt", "app\n");
    work.write("image.txt", "app==1\ntorch==2.11.0+cu130\n");
    let compiled = compile(
        &work.layer(&["in.txt"], &["image.txt"]),
        &work.checked(),
        &partly_known(),
    )
    .unwrap();
    assert!(compiled.written[0].lock.packages.is_empty());
    assert!(compiled.notes.is_empty(), "{:?}", told(&compiled.notes));
}

#[test]
fn another_version_that_writes_over_nothing_is_named_as_a_way_out() {
    let work = Work::new();
    work.write("in.txt", "lmcache\n");
    work.write("image.txt", "cupy-cuda12x==13.6.0\n");
    // An older cupy-cuda13x that wrote its own folder.
    let mut index = cupy().files("cupy-cuda13x==13.0.0", &[("cupy13/__init__.py", 5, 10)]);
    index.add("cupy-cuda13x", "13.0.0", &[]);
    let layer = work.layer(&["in.txt"], &["image.txt"]);
    let failed = compile(&layer, &work.checked(), &index).err().unwrap();
    let CompileError::Clashes { clashes, .. } = &failed.error else {
        panic!("{:?}", failed.error);
    };
    assert_eq!(
        clashes[0].avoided_by.as_deref(),
        Some("cupy-cuda13x==13.0.0")
    );
    let ways = failed.error.ways_out();
    assert!(
        ways.iter()
            .any(|h| h.starts_with("or take cupy-cuda13x==13.0.0, whose wheel writes over none")),
        "{ways:?}"
    );
    // Without it, the refusal says none of the others avoids it.
    let failed = compile(&layer, &work.checked(), &cupy()).err().unwrap();
    assert!(
        failed
            .error
            .ways_out()
            .iter()
            .any(|h| h.contains("none avoids it")),
        "{:?}",
        failed.error.ways_out()
    );
}

#[test]
fn the_summary_of_changes_is_told_with_the_files() {
    let work = Work::new();
    work.write("in.txt", "lmcache\n");
    work.write("image.txt", "cupy-cuda12x==13.6.0\nother==1\n");
    let mut layer = work.layer(&["in.txt"], &["image.txt"]);
    layer.output = Some(work.user_path("out.txt"));
    layer.replace = vec!["cupy-cuda12x".parse().unwrap()];
    let mut index = cupy().files("other==1", &[("other/__init__.py", 3, 1)]);
    index.add("other", "1", &[]);
    let first = compile(&layer, &work.checked(), &index).unwrap();
    work.write(
        "out.txt",
        &first.written[0].lock.render(layer.format, "out.txt"),
    );
    let options = CompileOptions {
        changes: true,
        ..work.checked()
    };
    let again = compile(&layer, &options, &index).unwrap();
    let summary = again.written[0].changes.as_ref().unwrap().summary();
    assert!(
        summary.ends_with(
            "; replaces 1 of the image's 2 packages on purpose (cupy-cuda12x==13.6.0) and changes none of the others, file by file"
        ),
        "{summary}"
    );
    // No wheel for the image's `other`: its files are not known, and the
    // summary says so.
    let bare = Memory::new(&[
        ("cupy-cuda13x", "14.0.1", &[]),
        ("lmcache", "0.3.9", &["cupy-cuda13x"]),
        ("other", "1", &[]),
    ])
    .sdist_only("other==1");
    let again = compile(&layer, &options, &bare).unwrap();
    let summary = again.written[0].changes.as_ref().unwrap().summary();
    assert!(
        summary.ends_with(
            "and changes none of the others: versions of all, files of the 0 listed (1 could not be listed)"
        ),
        "{summary}"
    );
}

/// A venv of this machine's `python3`, as the image: the layer's target is
/// its Python. `None` (and why) where the machine cannot make one.
fn image_venv(work: &Work) -> Option<(std::path::PathBuf, String)> {
    let venv = work.path().join("image");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: python3 -m venv does not work here");
        return None;
    }
    let python = venv.join("bin/python");
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import sys, sysconfig; print('%d.%d' % sys.version_info[:2]); print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut lines = text.lines();
    let version = lines.next()?.to_string();
    let site = std::path::PathBuf::from(lines.next()?);
    // cupy-cuda12x 13.6.0, installed: its RECORD and its files.
    let files: [(&str, &[u8]); 2] = [
        ("cupy/__init__.py", b"cuda 12"),
        ("shared/__init__.py", b""),
    ];
    for (path, bytes) in files {
        std::fs::create_dir_all(site.join(path).parent()?).ok()?;
        std::fs::write(site.join(path), bytes).ok()?;
    }
    let info = site.join("cupy_cuda12x-13.6.0.dist-info");
    std::fs::create_dir_all(&info).ok()?;
    std::fs::write(
        info.join("METADATA"),
        "Metadata-Version: 2.1\nName: cupy-cuda12x\nVersion: 13.6.0\n",
    )
    .ok()?;
    std::fs::write(
        info.join("RECORD"),
        "cupy/__init__.py,,\nshared/__init__.py,,\ncupy_cuda12x-13.6.0.dist-info/METADATA,,\ncupy_cuda12x-13.6.0.dist-info/RECORD,,\n",
    )
    .ok()?;
    Some((python, version))
}

#[test]
fn an_image_given_as_an_environment_is_compared_by_its_records_and_files() {
    let work = Work::new();
    let Some((python, version)) = image_venv(&work) else {
        return;
    };
    work.write("in.txt", "lmcache\n");
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.python_version = version.clone();
    layer.targets[0].python_version = version;
    let env = Some(layerlock_compile::UserPath::new(
        python.to_str().unwrap(),
        work.path(),
    ));
    layer.base_env = env.clone();
    layer.targets[0].base_env = env;
    // The index's cupy-cuda12x wheel lists nothing: what is installed
    // speaks for the image. The namespace file has the same bytes on disk.
    let index = Memory::new(&[
        ("cupy-cuda12x", "13.6.0", &[]),
        ("cupy-cuda13x", "14.0.1", &[]),
        ("lmcache", "0.3.9", &["cupy-cuda13x"]),
    ])
    .files(
        "cupy-cuda13x==14.0.1",
        &[
            ("cupy/__init__.py", crc32fast::hash(b"cuda 13"), 7),
            ("shared/__init__.py", crc32fast::hash(b""), 0),
        ],
    )
    .files("lmcache==0.3.9", &[("lmcache/__init__.py", 1, 10)]);
    let failed = compile(&layer, &work.checked(), &index).err().unwrap();
    let CompileError::Clashes { clashes, .. } = &failed.error else {
        panic!("{:?}", failed.error);
    };
    assert_eq!(
        (clashes[0].other.as_str(), clashes[0].files),
        ("cupy-cuda12x==13.6.0", 1)
    );
    assert_eq!(clashes[0].example, "cupy/__init__.py");
    // The same bytes on disk as in the wheel: no clash.
    let same = index.files(
        "cupy-cuda13x==14.0.1",
        &[
            ("cupy/__init__.py", crc32fast::hash(b"cuda 12"), 7),
            ("shared/__init__.py", crc32fast::hash(b""), 0),
        ],
    );
    let compiled = compile(&layer, &work.checked(), &same).unwrap();
    assert_eq!(pins(&compiled), ["cupy-cuda13x==14.0.1", "lmcache==0.3.9"]);
}
