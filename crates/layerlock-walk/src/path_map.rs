//! Container paths mapped into the repository (`--path-map
//! /vllm-workspace=.`): one parser for flags and config files alike, and
//! the one place a path written in CI is mapped.

use std::path::{Path, PathBuf};

/// A `CONTAINER=DIR` that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not CONTAINER=DIR with an absolute container path (e.g. /vllm-workspace=.)")]
pub struct PathMapError(pub String);

/// Container path prefixes and the directories of the repository they
/// stand for; the longest matching prefix wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathMap {
    /// `(/vllm-workspace, /abs/checkout)`: the prefix without a trailing
    /// `/`, the directory absolute.
    entries: Vec<(String, PathBuf)>,
}

impl PathMap {
    /// Add one `CONTAINER=DIR`; a relative DIR is taken from `base` (the
    /// working directory for flags, the config file's directory for the
    /// config). The directory is canonicalised when it exists.
    pub fn add(&mut self, mapping: &str, base: &Path) -> Result<(), PathMapError> {
        let Some((container, dir)) = mapping
            .split_once('=')
            .filter(|(c, d)| c.starts_with('/') && c.len() > 1 && !d.is_empty())
        else {
            return Err(PathMapError(mapping.to_string()));
        };
        let dir = base.join(dir);
        let dir = fs_err::canonicalize(&dir).unwrap_or(dir);
        self.entries
            .push((container.trim_end_matches('/').to_string(), dir));
        Ok(())
    }

    /// How many mappings there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A path as written in CI, mapped: through the longest prefix that
    /// matches it whole (`/ws` maps `/ws/a`, not `/wsx/a`), else unchanged.
    pub fn map(&self, path: &str) -> PathBuf {
        let mut best: Option<(&String, &PathBuf)> = None;
        for (prefix, target) in &self.entries {
            let matches = path == prefix
                || path
                    .strip_prefix(prefix.as_str())
                    .is_some_and(|rest| rest.starts_with('/'));
            if matches && best.is_none_or(|(p, _)| prefix.len() > p.len()) {
                best = Some((prefix, target));
            }
        }
        match best {
            Some((prefix, target)) => target.join(path[prefix.len()..].trim_start_matches('/')),
            None => PathBuf::from(path),
        }
    }

    /// A directory as written in CI (a default working directory), in the
    /// tree: mapped, and a relative one taken from `root`.
    pub fn dir_in(&self, dir: &str, root: &Path) -> PathBuf {
        let mapped = self.map(dir);
        if mapped.is_absolute() {
            mapped
        } else {
            root.join(mapped)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(mappings: &[&str]) -> PathMap {
        let mut map = PathMap::default();
        for m in mappings {
            map.add(m, Path::new("/no/such/repo")).expect("a mapping");
        }
        map
    }

    #[test]
    fn the_longest_whole_prefix_wins() {
        let map = map(&["/ws=.", "/ws/tests/=t", "/w=w"]);
        assert_eq!(map.len(), 3);
        assert_eq!(map.map("/ws/a.sh"), Path::new("/no/such/repo/./a.sh"));
        assert_eq!(map.map("/ws/tests/x"), Path::new("/no/such/repo/t/x"));
        assert_eq!(map.map("/ws"), Path::new("/no/such/repo/."));
        assert_eq!(map.map("/wsx/a"), Path::new("/wsx/a"));
        assert_eq!(map.map("rel/a"), Path::new("rel/a"));
        assert_eq!(
            map.dir_in("/ws/tests", Path::new("/checkout")),
            Path::new("/no/such/repo/t/")
        );
        assert_eq!(
            PathMap::default().dir_in("tests", Path::new("/checkout")),
            Path::new("/checkout/tests")
        );
    }

    #[test]
    fn a_mapping_needs_an_absolute_container_path_and_a_dir() {
        for bad in ["ws=.", "/=.", "/ws=", "/ws", ""] {
            let err = PathMap::default().add(bad, Path::new("/")).expect_err(bad);
            assert_eq!(
                err.to_string(),
                format!(
                    "`{bad}` is not CONTAINER=DIR with an absolute container path (e.g. /vllm-workspace=.)"
                )
            );
        }
    }
}
