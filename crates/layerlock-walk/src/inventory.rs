//! The test inventory: test files under the test roots, as git tracks them
//! (`git ls-files`), or on disk outside a git work tree.

use std::collections::BTreeSet;
use std::path::Path;

fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".py")
        && (name.starts_with("test_") || name.ends_with("_test.py"))
        && name != "conftest.py"
        && name != "__init__.py"
}

/// Test files under the roots: tracked by git, or on disk outside a git tree.
pub fn inventory(root: &Path, roots: &[String]) -> Vec<String> {
    let mut args = vec!["ls-files", "-z", "--"];
    args.extend(roots.iter().map(String::as_str));
    let output = layerlock_git::Git::at(root).run(&args, None);
    let mut files: BTreeSet<String> = BTreeSet::new();
    match output {
        Ok(out) if !out.is_empty() => {
            for path in out.split(|b| *b == 0) {
                let path = String::from_utf8_lossy(path).into_owned();
                if is_test_file(&path) {
                    files.insert(path);
                }
            }
        }
        _ => {
            /// Deepest folder nesting walked; symlinked folders are not
            /// followed (`tests/loop -> ..` would never end).
            const MAX_DEPTH: usize = 64;
            fn walk_disk(dir: &Path, root: &Path, out: &mut BTreeSet<String>, depth: usize) {
                if depth > MAX_DEPTH {
                    return;
                }
                let Ok(entries) = fs_err::read_dir(dir) else {
                    return;
                };
                for entry in entries.filter_map(Result::ok) {
                    let path = entry.path();
                    let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
                    if path.is_dir() {
                        if !is_link {
                            walk_disk(&path, root, out, depth + 1);
                        }
                    } else if let Ok(rel) = path.strip_prefix(root) {
                        let rel = rel.display().to_string();
                        if is_test_file(&rel) {
                            out.insert(rel);
                        }
                    }
                }
            }
            for r in roots {
                walk_disk(&root.join(r), root, &mut files, 0);
            }
        }
    }
    files.into_iter().collect()
}
