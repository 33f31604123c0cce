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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_are_named_so_and_conftest_is_not_one() {
        for yes in ["tests/test_a.py", "tests/x/b_test.py", "test_top.py"] {
            assert!(is_test_file(yes), "{yes}");
        }
        for no in [
            "tests/conftest.py",
            "tests/__init__.py",
            "tests/util.py",
            "tests/test_a.txt",
        ] {
            assert!(!is_test_file(no), "{no}");
        }
    }

    #[test]
    fn outside_git_the_disk_is_walked_without_following_folder_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("tests/unit")).unwrap();
        std::fs::write(root.join("tests/unit/test_one.py"), "").unwrap();
        std::fs::write(root.join("tests/helper.py"), "").unwrap();
        std::fs::write(root.join("other_test.py"), "").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("tests"), root.join("tests/loop")).unwrap();
        assert_eq!(
            inventory(root, &["tests".to_string()]),
            ["tests/unit/test_one.py"]
        );
    }
}
