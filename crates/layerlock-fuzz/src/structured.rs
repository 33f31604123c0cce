//! Structured targets: the fuzzer's bytes steer a small generator that
//! writes a well-formed document of one hostile shape, which then goes
//! through the ordinary target. A byte mutator rarely builds 50,000
//! balanced parentheses or a tree of aliases a megabyte wide; here two
//! bytes do.
//!
//! Each generator reads its input as a list of operations, one byte picking
//! the operation and the next ones its arguments; running out of bytes ends
//! the document. Sizes are capped so one input stays well under a second.

use std::fmt::Write as _;

use layerlock_lock::toml_string;

/// The longest marker written: a pylock file stays far below the lock
/// reader's own size limit, and each input stays fast.
const MAX_MARKER: usize = 1 << 20;

/// Bytes handed out one at a time; zero once they run out.
struct Ops<'a>(std::slice::Iter<'a, u8>);

impl Ops<'_> {
    fn next(&mut self) -> Option<u8> {
        self.0.next().copied()
    }

    fn arg(&mut self) -> u8 {
        self.next().unwrap_or(0)
    }

    /// A count from one byte, growing fast: 0..=255 plain, or (with the
    /// high bit) up to 127 × 512 ≈ 65,000.
    fn count(&mut self) -> usize {
        let byte = self.arg();
        if byte & 0x80 == 0 {
            usize::from(byte)
        } else {
            usize::from(byte & 0x7f) * 512
        }
    }
}

/// Marker atoms, each valid PEP 508, some with parentheses inside quotes so
/// that counting characters and reading the grammar disagree.
const ATOMS: &[&str] = &[
    "python_version >= '3.8'",
    "sys_platform == 'linux'",
    "platform_machine != \"x86_64\"",
    "implementation_name == 'cpython'",
    "'linux' in sys_platform",
    "python_full_version < '3.12.1'",
    "platform_release == ')'",
    "platform_version == '('",
    "os_name == \"posix\"",
];

/// A marker expression from `ops`: nesting, `and`/`or` chains, distinct
/// extras (a marker tree grows with the variables it holds), quoted
/// parentheses and stray bytes.
fn marker(ops: &mut Ops) -> String {
    let mut text = String::new();
    while text.len() < MAX_MARKER {
        let Some(op) = ops.next() else { break };
        match op % 10 {
            0 => text.push_str(&"(".repeat(ops.count())),
            1 => text.push_str(&")".repeat(ops.count())),
            2 => text.push_str(" and "),
            3 => text.push_str(" or "),
            4 => text.push_str(ATOMS[usize::from(ops.arg()) % ATOMS.len()]),
            // Wrap what is there in n balanced parentheses.
            5 => {
                let n = ops.count();
                text = format!("{}{text}{}", "(".repeat(n), ")".repeat(n));
            }
            // n levels of `(a == ')' or (` ... `)`: each level opens a
            // parenthesis the grammar recurses into and closes one inside a
            // string, which a character count reads as balanced.
            6 => {
                let n = ops.count();
                let atom = ATOMS[usize::from(ops.arg()) % ATOMS.len()];
                let level = "(platform_release == ')' or ";
                text = format!("{}{atom}{}{text}", level.repeat(n), ")".repeat(n));
            }
            // A chain of n distinct extras joined by `and` or `or`.
            7 => {
                let n = ops.count();
                let join = if ops.arg() & 1 == 0 { " and " } else { " or " };
                let chain: Vec<String> = (0..n).map(|i| format!("extra == 'e{i}'")).collect();
                text.push_str(&chain.join(join));
            }
            // One stray byte, quote characters included.
            8 => text.push(char::from(ops.arg() & 0x7f)),
            _ => text.push_str("python_version"),
        }
    }
    text.truncate(MAX_MARKER);
    text
}

/// The `pylock_markers` target: a PEP 751 lock whose `environments` and
/// package markers are generated, read as `install`, `verify`, `cooldown`
/// and `--base` read a pylock.toml (the `pylock` target's path).
pub fn pylock_markers(data: &[u8]) {
    let Some((&slots, rest)) = data.split_first() else {
        return;
    };
    let mut ops = Ops(rest.iter());
    let mut lock = String::from("lock-version = \"1.0\"\ncreated-by = \"fuzz\"\n");
    if slots & 1 != 0 {
        let _ = writeln!(lock, "environments = [{}]", toml_string(&marker(&mut ops)));
    }
    lock.push_str("requires-python = \">=3.8\"\n");
    let packages = 1 + usize::from(slots >> 1 & 3);
    for i in 0..packages {
        let _ = writeln!(lock, "\n[[packages]]\nname = \"p{i}\"\nversion = \"1.0\"");
        if slots & 8 != 0 || i > 0 {
            let _ = writeln!(lock, "marker = {}", toml_string(&marker(&mut ops)));
        }
        let _ = writeln!(
            lock,
            "[[packages.wheels]]\nname = \"p{i}-1.0-py3-none-any.whl\"\n\
             url = \"https://files.example/p{i}-1.0-py3-none-any.whl\"\n\
             hashes = {{ sha256 = \"{}\" }}",
            "0".repeat(64)
        );
    }
    crate::requirements::pylock(lock.as_bytes());
    // The same markers as a requirements line and in wheel metadata, the
    // two other ways a marker reaches layerlock.
    let mut ops = Ops(rest.iter());
    let marker = marker(&mut ops);
    crate::requirements::requirements(format!("six==1.16.0 ; {marker}\n").as_bytes());
    let metadata =
        format!("Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: b ; {marker}\n");
    if let Ok(meta) = layerlock_dist::CoreMetadata::parse(metadata.as_bytes()) {
        std::hint::black_box(meta.requires_dist.len());
    }
}

/// The longest scalar an anchor holds: a quarter of the 1 MiB of the alias
/// bomb that once asked for 4 GB, so that each input stays fast; 4,096
/// aliases of it still cross the parser's byte budget many times over.
const MAX_SCALAR: usize = 1 << 18;

/// The `yaml_aliases` target: documents built of anchors and aliases (wide
/// scalars aliased many times, nested fan-out "billion laughs", merge keys,
/// aliases inside flow collections), shaped as a Buildkite pipeline, then
/// read as the `yaml_ci` target reads CI files (`audit`, `blocks`).
pub fn yaml_aliases(data: &[u8]) {
    let mut ops = Ops(data.iter());
    let mut doc = String::from("steps:\n");
    let mut anchors = 0usize;
    let mut lines = 0usize;
    while lines < 20_000 {
        let Some(op) = ops.next() else { break };
        lines += 1;
        let last = anchors.saturating_sub(1);
        match op % 7 {
            // An anchored scalar of up to 1 MiB.
            0 => {
                let len = (ops.count() * 4).min(MAX_SCALAR);
                let _ = writeln!(doc, "  - &a{anchors} '{}'", "x".repeat(len));
                anchors += 1;
            }
            // A list of n aliases of the last anchor, itself anchored: each
            // one multiplies the tree by n.
            1 if anchors > 0 => {
                let n = ops.count().clamp(1, 4096);
                let items = vec![format!("*a{last}"); n].join(", ");
                let _ = writeln!(doc, "  - &a{anchors} [{items}]");
                anchors += 1;
            }
            // A step whose command is an alias.
            2 if anchors > 0 => {
                let _ = writeln!(doc, "  - label: s{lines}\n    command: *a{last}");
            }
            // A mapping merged from an earlier one, many times.
            3 => {
                let n = ops.count().clamp(1, 4096);
                let _ = writeln!(doc, "  - &a{anchors} {{label: m, command: pip install x}}");
                let merges = vec![format!("*a{anchors}"); n].join(", ");
                let _ = writeln!(doc, "  - <<: [{merges}]\n    key: k{lines}");
                anchors += 1;
            }
            // An alias of an anchor that does not exist (yet).
            4 => {
                let _ = writeln!(doc, "  - *a{}", anchors + usize::from(ops.arg()));
            }
            // An alias n block lists deep (`- - - *a0`).
            5 if anchors > 0 => {
                let _ = writeln!(doc, "  - {}*a{last}", "- ".repeat(ops.count()));
            }
            _ => {
                let _ = writeln!(doc, "  - command: \"pip install p{lines}\"");
            }
        }
    }
    crate::ci::yaml_ci(doc.as_bytes());
}
