use std::fs;

use super::*;

fn modules(source: &str, this_module: &str, is_package: bool) -> Vec<(String, Vec<String>)> {
    imports(source, this_module, is_package)
        .into_iter()
        .map(|import| (import.module, import.names))
        .collect()
}

fn import(module: &str, names: &[&str]) -> (String, Vec<String>) {
    (
        module.to_owned(),
        names.iter().map(|name| (*name).to_owned()).collect(),
    )
}

/// Every construct at once; also fed to the scanner prefix by prefix.
const TRICKY: &str = r##""""Module docstring.
import not_an_import_in_a_docstring
"""
import os, sys as system
import a.b.c as x, d
from . import sibling
from .. parent import (one as uno,
                       two,)   # trailing comma
from .mod import (a as b,)
from ...too_far import nothing
from x.y import *
import first; import second
if TYPE_CHECKING: import typing_only
try:
    import fast_json as json
except ImportError:  # import in_a_comment
    from slow import json
def late():
    from lazy.module import thing
    s = 'import in_single'; t = "from fake import x"
    u = rb'\'import raw'; v = f"{'import in_fstring'}"
    w = '''
import in_triple
'''
from continued \
    import name
x = 1 if y else 2; from z import w
"""import in_unterminated_docstring
"##;

#[test]
fn every_kind_of_import_statement() {
    let found = modules(TRICKY, "pkg.sub.mod", false);
    assert_eq!(
        found,
        [
            import("os", &[]),
            import("sys", &[]),
            import("a.b.c", &[]),
            import("d", &[]),
            import("pkg.sub", &["sibling"]),
            import("pkg.parent", &["one", "two"]),
            import("pkg.sub.mod", &["a"]),
            import("x.y", &["*"]),
            import("first", &[]),
            import("second", &[]),
            import("typing_only", &[]),
            import("fast_json", &[]),
            import("slow", &["json"]),
            import("lazy.module", &["thing"]),
            import("continued", &["name"]),
            import("z", &["w"]),
        ]
    );
}

#[test]
fn lines_are_those_of_the_keyword() {
    let lines: Vec<usize> = imports(TRICKY, "pkg.sub.mod", false)
        .iter()
        .map(|import| import.line)
        .collect();
    assert_eq!(
        lines,
        [4, 4, 5, 5, 6, 7, 9, 11, 12, 12, 13, 15, 17, 19, 25, 27]
    );
}

#[test]
fn relative_imports_resolve_against_the_package() {
    assert_eq!(
        modules("from . import x", "a.b", true),
        [import("a.b", &["x"])]
    );
    assert_eq!(
        modules("from . import x", "a.b", false),
        [import("a", &["x"])]
    );
    assert_eq!(
        modules("from .. import x", "a.b", true),
        [import("a", &["x"])]
    );
    assert_eq!(
        modules("from ..c import x", "a.b.m", false),
        [import("a.c", &["x"])]
    );
    // Above the top package: Python refuses it, and so it is dropped.
    assert_eq!(modules("from .. import x", "a.b", false), []);
    assert_eq!(modules("from . import x", "top", false), []);
    assert_eq!(modules("from .x import y", "", true), []);
    assert_eq!(
        modules("from .import x", "a.b", true),
        [import("a.b", &["x"])]
    );
}

#[test]
fn not_imports() {
    for source in [
        "x = 'import os'",
        "# import os",
        "raise X from y",
        "yield from gen",
        "importlib.import_module('os')",
        "print(import_thing)",
        "from import x",
        "from a import",
        "import",
        "s = '''\nimport os\n'''",
        "s = \"\"\"\nimport os\n\"\"\"",
        "s = 'unterminated\nx = 1",
    ] {
        assert_eq!(modules(source, "m", false), [], "{source}");
    }
}

#[test]
fn bounds_hold() {
    let many = "import a\n".repeat(MAX_IMPORTS + 10);
    assert_eq!(imports(&many, "m", false).len(), MAX_IMPORTS);
    let long = format!("{}\nimport beyond", " ".repeat(MAX_SOURCE_BYTES));
    assert_eq!(imports(&long, "m", false), []);
}

#[test]
fn never_panics_on_any_prefix_or_random_bytes() {
    for end in (0..=TRICKY.len()).filter(|&end| TRICKY.is_char_boundary(end)) {
        let _ = imports(&TRICKY[..end], "pkg.sub.mod", false);
    }
    let alphabet = b"import from . , ( ) ; \\ \n \r # ' \" f r b { } : as x";
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..3000 {
        let len = (xorshift(&mut state) % 300) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                let r = xorshift(&mut state);
                if r.is_multiple_of(5) {
                    (r >> 8) as u8
                } else {
                    alphabet[(r >> 8) as usize % alphabet.len()]
                }
            })
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        let _ = imports(&text, "a.b", false);
        let _ = imports(&text, "", true);
    }
    // A block header per statement, nested as deep as the source allows.
    let headers = format!("{}import deep\n", "if x: ".repeat(MAX_SOURCE_BYTES / 8));
    assert_eq!(modules(&headers, "m", false), [import("deep", &[])]);
    // Deeply nested f-strings stay bounded.
    let nested = format!("{}{}", "f'{".repeat(10_000), "}'".repeat(10_000));
    let _ = imports(&nested, "m", false);
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// A repository of files, each `path` holding `source`.
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, source) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, source).unwrap();
    }
    dir
}

fn files(root: &Path, start: &[&str], depth: usize) -> Vec<String> {
    let start: Vec<String> = start.iter().map(|s| (*s).to_owned()).collect();
    let options = ClosureOptions {
        depth,
        ..ClosureOptions::default()
    };
    closure(root, &start, &options).files.into_iter().collect()
}

#[test]
fn closure_follows_imports_packages_and_conftests() {
    let dir = repo(&[
        ("conftest.py", "import fixtures_top\n"),
        ("fixtures_top.py", ""),
        ("tests/conftest.py", ""),
        (
            "tests/unit/test_x.py",
            "import os\nfrom pkg.sub import helper, CONST\nfrom . import util\n",
        ),
        ("tests/unit/util.py", ""),
        ("tests/unit/__init__.py", ""),
        ("pkg/__init__.py", ""),
        ("pkg/sub/__init__.py", "from .deep import x\n"),
        ("pkg/sub/helper.py", "import pkg.other\n"),
        ("pkg/sub/deep.py", ""),
        ("pkg/other.py", ""),
        ("pkg/unused.py", ""),
    ]);
    let root = dir.path();
    assert_eq!(
        files(root, &["tests/unit/test_x.py"], 0),
        ["conftest.py", "tests/conftest.py", "tests/unit/test_x.py"]
    );
    assert_eq!(
        files(root, &["tests/unit/test_x.py"], 1),
        [
            "conftest.py",
            "pkg/__init__.py",
            "pkg/sub/__init__.py",
            "pkg/sub/helper.py",
            "tests/conftest.py",
            "tests/unit/__init__.py",
            "tests/unit/test_x.py",
            "tests/unit/util.py",
        ]
    );
    let deeper = files(root, &["tests/unit/test_x.py"], 2);
    assert!(deeper.contains(&"pkg/sub/deep.py".to_owned()));
    assert!(deeper.contains(&"pkg/other.py".to_owned()));
    // A conftest.py is one step away, so what it imports is two.
    assert!(deeper.contains(&"fixtures_top.py".to_owned()));
    let depth = closure(
        root,
        &["tests/unit/test_x.py".to_owned()],
        &ClosureOptions::default(),
    )
    .depth;
    assert_eq!(depth["tests/unit/test_x.py"], 0);
    assert_eq!(depth["tests/conftest.py"], 1);
    assert_eq!(depth["pkg/sub/helper.py"], 1);
    assert_eq!(depth["fixtures_top.py"], 2);
    assert!(!deeper.contains(&"pkg/unused.py".to_owned()));
}

#[test]
fn closure_looks_under_src() {
    let dir = repo(&[
        ("tests/test_a.py", "from mylib.core import run\n"),
        ("src/mylib/__init__.py", ""),
        (
            "src/mylib/core.py",
            "from .helpers import h\nfrom . import tools\n",
        ),
        ("src/mylib/helpers.py", ""),
        ("src/mylib/tools/__init__.py", ""),
    ]);
    assert_eq!(
        files(dir.path(), &["tests/test_a.py"], 3),
        [
            "src/mylib/__init__.py",
            "src/mylib/core.py",
            "src/mylib/helpers.py",
            "src/mylib/tools/__init__.py",
            "tests/test_a.py",
        ]
    );
}

#[test]
fn closure_stays_inside_the_root() {
    let outside = repo(&[
        ("secret.py", "import also_outside\n"),
        ("also_outside.py", ""),
    ]);
    let dir = repo(&[
        ("tests/test_a.py", "import escape\nimport linked\n"),
        ("linked_target.py", ""),
    ]);
    let root = dir.path();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path().join("secret.py"), root.join("escape.py"))
            .unwrap();
        std::os::unix::fs::symlink(root.join("linked_target.py"), root.join("linked.py")).unwrap();
    }
    let found = files(
        root,
        &[
            "tests/test_a.py",
            "../secret.py",
            "/etc/passwd",
            "tests/../tests/test_a.py",
        ],
        3,
    );
    #[cfg(unix)]
    assert_eq!(found, ["linked_target.py", "tests/test_a.py"]);
    #[cfg(not(unix))]
    assert_eq!(found, ["tests/test_a.py"]);
}

#[test]
fn closure_bounds_files_and_bytes() {
    let dir = repo(&[
        ("test_a.py", "import b\nimport c\nimport d\n"),
        ("b.py", ""),
        ("c.py", ""),
        ("d.py", ""),
        ("big.py", &format!("{}\nimport e\n", "#".repeat(100))),
        ("e.py", ""),
    ]);
    let start = vec!["test_a.py".to_owned()];
    let few = ClosureOptions {
        depth: 5,
        max_files: 2,
        max_file_bytes: 1024,
    };
    assert_eq!(closure(dir.path(), &start, &few).files.len(), 2);
    let short = ClosureOptions {
        depth: 5,
        max_files: 100,
        max_file_bytes: 50,
    };
    let start = vec!["big.py".to_owned()];
    assert_eq!(
        closure(dir.path(), &start, &short)
            .files
            .into_iter()
            .collect::<Vec<_>>(),
        ["big.py"]
    );
}

#[test]
fn closure_skips_absurdly_long_module_names() {
    let long = vec!["a"; MAX_SOURCE_BYTES / 4].join(".");
    let dir = repo(&[
        ("test_a.py", &format!("import {long}\nimport b\n")),
        ("a/__init__.py", ""),
        ("b.py", ""),
    ]);
    assert_eq!(files(dir.path(), &["test_a.py"], 1), ["b.py", "test_a.py"]);
}

#[test]
fn closure_of_missing_things_is_empty() {
    let dir = repo(&[("notes.txt", "")]);
    assert_eq!(
        files(dir.path(), &["missing.py", "notes.txt", ""], 2),
        Vec::<String>::new()
    );
    assert_eq!(
        files(&dir.path().join("nowhere"), &["a.py"], 2),
        Vec::<String>::new()
    );
}

#[test]
fn module_names_of_files() {
    let dir = repo(&[("src/pkg/__init__.py", "")]);
    let options = ClosureOptions::default();
    let walk = Walk::new(dir.path(), &options).unwrap();
    assert_eq!(
        walk.module_name("src/pkg/mod.py"),
        ("pkg.mod".to_owned(), false)
    );
    assert_eq!(
        walk.module_name("src/pkg/__init__.py"),
        ("pkg".to_owned(), true)
    );
    assert_eq!(
        walk.module_name("a/b/__init__.py"),
        ("a.b".to_owned(), true)
    );
    assert_eq!(
        walk.module_name("foo__init__.py"),
        ("foo__init__".to_owned(), false)
    );
    assert_eq!(walk.module_name("__init__.py"), (String::new(), true));
}
