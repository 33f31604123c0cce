//! What installing one wheel writes, as its zip directory says: every
//! member's path with its CRC-32 and size, and the console scripts its
//! entry points make the installer write. Pure: the index reads the bytes.

use uv_distribution_filename::WheelFilename;
use uv_platform_tags::TagCompatibility;

use crate::{IndexFile, Target};

/// One member of a wheel.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListedFile {
    /// As the zip names it (`cupy/__init__.py`, `x.data/scripts/tool`).
    pub path: String,
    pub crc32: u32,
    /// Uncompressed.
    pub size: u64,
}

/// A wheel's members and the scripts it makes at install.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WheelListing {
    pub files: Vec<ListedFile>,
    /// `[console_scripts]` and `[gui_scripts]` names of its
    /// `entry_points.txt`, each `NAME = module:function` (what the
    /// generated script runs).
    pub scripts: Vec<(String, String)>,
}

/// The version of [`WheelListing::encode`]'s form.
const FORM: &str = "layerlock-wheel-listing 1";

impl WheelListing {
    /// A text form to cache: a line per file (`crc size path`) and per
    /// script (`script name target`).
    pub fn encode(&self) -> String {
        let mut out = format!("{FORM}\n");
        for f in &self.files {
            out.push_str(&format!("f {:08x} {} {}\n", f.crc32, f.size, f.path));
        }
        for (name, target) in &self.scripts {
            out.push_str(&format!("s {name} {target}\n"));
        }
        out
    }

    /// What [`WheelListing::encode`] wrote, or `None` when it is not that.
    pub fn decode(text: &str) -> Option<Self> {
        let mut lines = text.lines();
        if lines.next()? != FORM {
            return None;
        }
        let mut listing = Self::default();
        for line in lines {
            match line.split_once(' ')? {
                ("f", rest) => {
                    let (crc, rest) = rest.split_once(' ')?;
                    let (size, path) = rest.split_once(' ')?;
                    listing.files.push(ListedFile {
                        path: path.to_string(),
                        crc32: u32::from_str_radix(crc, 16).ok()?,
                        size: size.parse().ok()?,
                    });
                }
                ("s", rest) => {
                    let (name, target) = rest.split_once(' ')?;
                    listing.scripts.push((name.to_string(), target.to_string()));
                }
                _ => return None,
            }
        }
        Some(listing)
    }
}

/// The scripts an `entry_points.txt` makes the installer write: the
/// `[console_scripts]` and `[gui_scripts]` entries, `(name, target)`.
pub fn entry_point_scripts(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut wanted = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.starts_with('[') {
            wanted = matches!(line, "[console_scripts]" | "[gui_scripts]");
            continue;
        }
        if let (true, Some((name, target))) = (wanted, line.split_once('='))
            && !name.trim().is_empty()
        {
            out.push((name.trim().to_string(), target.trim().to_string()));
        }
    }
    out
}

/// The wheel of `files` an installer takes on `target`: the one whose
/// tags fit it best. `None` when none fits.
pub fn best_wheel<'a>(files: &[&'a IndexFile], target: &Target) -> Option<&'a IndexFile> {
    files
        .iter()
        .filter_map(|f| {
            let wheel = f.filename.parse::<WheelFilename>().ok()?;
            match wheel.compatibility(target.tags()) {
                TagCompatibility::Compatible(priority) => Some((priority, *f)),
                TagCompatibility::Incompatible(_) => None,
            }
        })
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.filename.cmp(&a.1.filename)))
        .map(|(_, f)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_reads_back_as_it_was_written() {
        let listing = WheelListing {
            files: vec![ListedFile {
                path: "a b/c.py".to_string(),
                crc32: 0xdead_beef,
                size: 12,
            }],
            scripts: vec![("tool".to_string(), "pkg.cli:main".to_string())],
        };
        assert_eq!(WheelListing::decode(&listing.encode()), Some(listing));
        assert_eq!(WheelListing::decode("something else\n"), None);
    }

    #[test]
    fn only_console_and_gui_scripts_are_scripts() {
        let text = "[console_scripts]\ntool = pkg.cli:main\n\n[pytest11]\nplug = pkg.plug\n[gui_scripts]\nwin=pkg.gui:run\n";
        assert_eq!(
            entry_point_scripts(text),
            [
                ("tool".to_string(), "pkg.cli:main".to_string()),
                ("win".to_string(), "pkg.gui:run".to_string())
            ]
        );
    }
}
