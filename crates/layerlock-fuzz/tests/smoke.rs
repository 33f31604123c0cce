//! Every fuzz target over its committed seeds (`fuzz/corpus/<target>/`) and a
//! few thousand deterministic mutations of them, on every `cargo test`.
//!
//! The long cargo-fuzz runs are where bugs are found; this keeps the seeds
//! loading and catches the shallow panics a parser change brings back. The
//! mutator and its random numbers are ours and seeded per target, so a
//! failure names an iteration that fails the same way on every machine.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use layerlock_fuzz::{TARGETS, Target};

/// Mutated inputs per target: from a tenth of a second (JSON pages) to a
/// second and a half (Dockerfiles) in a debug build.
const ITERATIONS: usize = 3_000;

/// The same cap the long runs use (`-max_len=65536`).
const MAX_LEN: usize = 64 * 1024;

/// Mutants for the structured targets: a few bytes there grow into a
/// document of megabytes (that is their point), so each input costs up to a
/// tenth of a second in a debug build.
const STRUCTURED_ITERATIONS: usize = 150;

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_root().join(target);
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| {
            let entry = entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
            let path = entry.path();
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (entry.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    // Directory order differs between file systems; the mutations must not.
    seeds.sort();
    assert!(
        seeds.len() >= 3,
        "{} holds {} seeds; keep a handful",
        dir.display(),
        seeds.len()
    );
    seeds
}

/// splitmix64: tiny, fast, and good enough to pick mutations.
struct Rng(u64);

impl Rng {
    /// One stream per target, so adding a target leaves the others' runs as
    /// they were.
    fn for_target(name: &str) -> Self {
        // FNV-1a of the name.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in name.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Self(hash)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A length from 1 to `max`, short ones far more often.
    fn len(&mut self, max: usize) -> usize {
        let cap = [4, 16, 64, max][self.below(4)].min(max).max(1);
        1 + self.below(cap)
    }
}

/// Bytes that mean something to one of the parsers: quotes, brackets,
/// separators, escapes, UTF-8 lead bytes, zip length extremes.
const INTERESTING: &[u8] = b"\0\n\r\t \"'`\\$#;:,=-[]{}()<>&|*!%@~?\x7f\x80\xbf\xc3\xe2\xf0\xff";

/// Little-endian values a zip field is likely to mishandle.
const WIDE: &[u64] = &[0, 1, 0x7f, 0xff, 0xffff, 0xffff_ffff, u64::MAX, 1 << 31];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, seeds: &[(String, Vec<u8>)]) {
    let at = |rng: &mut Rng, input: &Vec<u8>| rng.below(input.len() + 1);
    match rng.below(8) {
        // Flip one bit.
        0 if !input.is_empty() => {
            let i = rng.below(input.len());
            input[i] ^= 1 << rng.below(8);
        }
        // Replace a byte with an interesting or a random one.
        1 if !input.is_empty() => {
            let i = rng.below(input.len());
            input[i] = if rng.below(2) == 0 {
                INTERESTING[rng.below(INTERESTING.len())]
            } else {
                rng.next() as u8
            };
        }
        // Insert a few bytes.
        2 => {
            let i = at(rng, input);
            let count = rng.len(8);
            let bytes: Vec<u8> = (0..count)
                .map(|_| INTERESTING[rng.below(INTERESTING.len())])
                .collect();
            input.splice(i..i, bytes);
        }
        // Delete a range.
        3 if !input.is_empty() => {
            let i = rng.below(input.len());
            let end = (i + rng.len(256)).min(input.len());
            input.drain(i..end);
        }
        // Splice in a piece of another seed (or cut over to its tail).
        4 => {
            let (_, other) = &seeds[rng.below(seeds.len())];
            if other.is_empty() {
                return;
            }
            let from = rng.below(other.len());
            let end = (from + rng.len(512)).min(other.len());
            let i = at(rng, input);
            if rng.below(4) == 0 {
                input.truncate(i);
                input.extend_from_slice(&other[from..]);
            } else {
                input.splice(i..i, other[from..end].iter().copied());
            }
        }
        // Repeat a chunk: deep nesting, long lines, many entries.
        5 if !input.is_empty() => {
            let i = rng.below(input.len());
            let end = (i + rng.len(16)).min(input.len());
            let chunk = input[i..end].to_vec();
            let times = rng.len(512);
            let repeated: Vec<u8> = chunk
                .iter()
                .copied()
                .cycle()
                .take(chunk.len() * times)
                .collect();
            input.splice(end..end, repeated);
        }
        // Overwrite 2, 4 or 8 bytes with an extreme little-endian value.
        6 if input.len() >= 8 => {
            let width = [2, 4, 8][rng.below(3)];
            let i = rng.below(input.len() - width + 1);
            let value = WIDE[rng.below(WIDE.len())].to_le_bytes();
            input[i..i + width].copy_from_slice(&value[..width]);
        }
        // Copy a piece of the input over another place in it.
        7 if input.len() >= 2 => {
            let from = rng.below(input.len());
            let len = rng.len(64).min(input.len() - from);
            let to = rng.below(input.len() - len + 1);
            input.copy_within(from..from + len, to);
        }
        _ => {}
    }
}

/// Run `target` on every seed, then on `ITERATIONS` mutants; a mutant is
/// one to five mutations of a seed or, half the time, of the last mutant.
fn survives(name: &str) {
    survives_for(name, ITERATIONS);
}

/// As `survives`, with `iterations` mutants.
fn survives_for(name: &str, iterations: usize) {
    let target: Target = TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("no target named {name}"));
    let seeds = seeds(name);
    for (seed, bytes) in &seeds {
        run(name, target, bytes, &format!("seed {seed}"));
    }
    let mut rng = Rng::for_target(name);
    let mut last = seeds[0].1.clone();
    for iteration in 0..iterations {
        let mut input = if rng.below(2) == 0 {
            last
        } else {
            seeds[rng.below(seeds.len())].1.clone()
        };
        for _ in 0..=rng.below(5) {
            mutate(&mut rng, &mut input, &seeds);
        }
        input.truncate(MAX_LEN);
        run(name, target, &input, &format!("iteration {iteration}"));
        last = input;
    }
}

/// Run one input; on a panic, save it where `cargo fuzz run` can replay it.
fn run(name: &str, target: Target, input: &[u8], what: &str) {
    if catch_unwind(AssertUnwindSafe(|| target(input))).is_ok() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-smoke");
    let path = dir.join(format!("{name}-{}", what.replace(' ', "-")));
    let saved = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, input));
    let saved = match saved {
        Ok(()) => format!("saved to {}", path.display()),
        Err(e) => format!("could not save it: {e}"),
    };
    panic!(
        "target `{name}` panicked on {what} ({saved}); replay with `cargo fuzz run {name} <file>` in fuzz/"
    );
}

#[test]
fn every_corpus_folder_is_a_target_and_every_target_has_seeds() {
    let mut folders: Vec<String> = std::fs::read_dir(corpus_root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut targets: Vec<String> = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    targets.sort();
    assert_eq!(folders, targets);
}

#[test]
fn requirements_reader_survives_mutated_requirements_files() {
    survives("requirements");
}

#[test]
fn simple_json_reader_survives_mutated_pep691_pages() {
    survives("simple_json");
}

#[test]
fn cached_page_lines_survive_mutation_and_read_back_as_written() {
    survives("page_lines");
}

#[test]
fn simple_html_reader_survives_mutated_pep503_pages() {
    survives("simple_html");
}

#[test]
fn wheel_zip_and_metadata_readers_survive_mutated_wheels() {
    survives("wheel_zip");
}

#[test]
fn sdist_archive_and_source_metadata_readers_survive_mutated_sdists() {
    survives("sdist_archive");
}

#[test]
fn ci_yaml_models_survive_mutated_pipelines_and_workflows() {
    survives("yaml_ci");
}

#[test]
fn shell_reader_survives_mutated_scripts() {
    survives("shell");
}

#[test]
fn dockerfile_reader_survives_mutated_dockerfiles() {
    survives("dockerfile");
}

#[test]
fn pylock_reader_survives_mutated_pylock_files() {
    survives("pylock");
}

#[test]
fn test_report_readers_survive_mutated_junit_and_buildkite_reports() {
    survives("test_report");
}

#[test]
fn python_import_and_xfail_readers_survive_mutated_sources() {
    survives("python_source");
}

#[test]
fn pylock_markers_deep_wide_or_quoted_are_refused_or_read() {
    survives_for("pylock_markers", STRUCTURED_ITERATIONS);
}

#[test]
fn yaml_alias_bombs_are_refused_within_the_byte_budget() {
    survives_for("yaml_aliases", STRUCTURED_ITERATIONS);
}
