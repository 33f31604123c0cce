//! A base pin the layer uses is read for what it needs: a base written by
//! hand that pins a package but not its dependencies is said, in-process.

#![allow(clippy::unwrap_used)]

mod support;

use layerlock_compile::Note;
use layerlock_resolve::memory::Memory;
use support::{Work, compile, pins, told};

fn index() -> Memory {
    Memory::new(&[
        (
            "httpx",
            "0.27.2",
            &["anyio", "certifi", "colorama; sys_platform == 'win32'"],
        ),
        ("anyio", "4.0.0", &[]),
        ("certifi", "2024.1.1", &[]),
        ("colorama", "0.4.6", &[]),
        ("lmx", "1.0.0", &["httpx"]),
        ("lmy", "1.0.0", &["httpx", "anyio"]),
    ])
}

fn open_base(notes: &[Note]) -> Vec<String> {
    told(notes)
        .into_iter()
        .filter(|l| l.contains("the base pins") || l.contains("dependencies the base"))
        .collect()
}

#[test]
fn a_base_pin_whose_dependencies_the_base_lacks_is_named() {
    let work = Work::new();
    work.write("in.txt", "lmx\n");
    work.write("image.txt", "httpx==0.27.2\ncertifi==2024.1.1\n");
    let layer = work.layer(&["in.txt"], &["image.txt"]);
    let compiled = compile(&layer, &work.checked(), &index()).unwrap();
    // The lock is what it was: the check names, it does not add.
    assert_eq!(pins(&compiled), ["lmx==1.0.0"]);
    let said = open_base(&compiled.notes);
    assert_eq!(said.len(), 1, "{said:?}");
    // colorama is for Windows only: not needed on this target.
    assert!(
        said[0].starts_with("warning: the base pins httpx==0.27.2 (")
            && said[0].contains(
                "image.txt:1) but not what it needs: anyio; layerlock takes it to be in the image at a version nobody wrote down"
            ),
        "{said:?}"
    );
    // The lock says the layer relies on it, so install and verify look
    // for it (at any version).
    let used: Vec<String> = compiled.written[0]
        .lock
        .base_used
        .iter()
        .map(|u| {
            let version = u
                .version
                .as_ref()
                .map(|v| format!("=={v}"))
                .unwrap_or_default();
            format!(
                "{}{version} ({}) via {}",
                u.name,
                u.origin,
                u.via.join(", ")
            )
        })
        .collect();
    assert_eq!(used.len(), 2, "{used:?}");
    assert_eq!(used[0], "anyio (not pinned by the base) via httpx");
    assert!(used[1].starts_with("httpx==0.27.2 ("), "{used:?}");
}

#[test]
fn a_closed_base_or_a_dependency_the_layer_brings_is_not_named() {
    let work = Work::new();
    work.write("in.txt", "lmx\n");
    work.write(
        "closed.txt",
        "httpx==0.27.2\ncertifi==2024.1.1\nanyio==4.0.0\n",
    );
    let layer = work.layer(&["in.txt"], &["closed.txt"]);
    let compiled = compile(&layer, &work.checked(), &index()).unwrap();
    assert_eq!(open_base(&compiled.notes), Vec::<String>::new());

    // The layer locks anyio itself, so the image's httpx has it.
    work.write("in.txt", "lmy\n");
    work.write("image.txt", "httpx==0.27.2\ncertifi==2024.1.1\n");
    let layer = work.layer(&["in.txt"], &["image.txt"]);
    let compiled = compile(&layer, &work.checked(), &index()).unwrap();
    assert_eq!(pins(&compiled), ["anyio==4.0.0", "lmy==1.0.0"]);
    assert_eq!(open_base(&compiled.notes), Vec::<String>::new());
}

#[test]
fn a_base_pin_that_cannot_be_read_is_said_not_passed() {
    let work = Work::new();
    work.write("in.txt", "lmx\n");
    work.write(
        "image.txt",
        "httpx==0.26.0\nanyio==4.0.0\ncertifi==2024.1.1\n",
    );
    let layer = work.layer(&["in.txt"], &["image.txt"]);
    let compiled = compile(&layer, &work.checked(), &index()).unwrap();
    let said = open_base(&compiled.notes);
    assert_eq!(
        said,
        ["not checked for dependencies the base does not pin (1 base pin the layer uses):",],
        "{:?}",
        told(&compiled.notes)
    );
    let all = told(&compiled.notes);
    assert!(
        all.iter().any(|l| l.starts_with("  httpx==0.26.0 (")),
        "{all:?}"
    );
}
