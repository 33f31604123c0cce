//! `parse` never panics, hangs or overflows the stack, whatever the input:
//! random text over shell-significant characters, every prefix of real
//! scripts, and absurd nesting.

use layerlock_shell::parse;

const SCRIPTS: &[&str] = &[
    r#"uv pip install --python .venv/bin/python "$(.venv/bin/python - <<'PY'
from pathlib import Path
print(Path("x").read_text())
PY
)""#,
    "pip install \\\n    'opentelemetry-sdk>=1.26.0' \\\n    'opentelemetry-api>=1.26.0'",
    "bash -c 'pip install a && uv pip install b'",
    "if [ -f x ]; then pip install y; fi; [[ -f x ]] && pip install z",
    "for p in a b; do pip install \"$p\"; done",
    "cd /x && (source venv/bin/activate; pip install -r r.txt) | tee log",
    "bash <<EOF\npip install q\nEOF\ncat > f.txt <<'EOF'\nnot\nEOF\n",
    "python -c \"import pip\" --flag=\"a b\" $'a\\tb' \"$(date)\" `uname \\`arch\\``",
    "case \"$1\" in a) pip install x ;; *) echo no ;; esac",
    "function f { pip install a; }; f() ( pip install b )",
    "x=${y:-\"${z#*/}\"} arr=(1 \"$(a)\") cmd <(b) >(c) 2>&1 <<<\"s\" $(( $(d) + ${#e} ))",
    "for ((i=0;i<3;i++)); do echo $[i+1]; done; (( x++ )); echo @(a|b) !(c)",
];

/// A small xorshift generator: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn every_prefix_of_real_scripts() {
    for script in SCRIPTS {
        assert!(parse(script).is_ok(), "{script}");
        for (end, _) in script.char_indices() {
            let _ = parse(&script[..end]);
        }
        // Every suffix too: texts that start in the middle of a construct.
        for (start, _) in script.char_indices() {
            let _ = parse(&script[start..]);
        }
    }
}

#[test]
fn random_text() {
    const ALPHABET: &[&str] = &[
        " ", "\t", "\n", "\r", "\\", "\\\n", "'", "\"", "`", "$", "$(", "$((", "${", "}", "{", "(",
        ")", "((", "))", "[[", "]]", "[", "]", ";", ";;", "&", "&&", "|", "||", "<", ">", "<<",
        "<<-", "<<<", "EOF", "#", "=", "a", "x=", "bash", "-c", "sh", "if", "then", "fi", "case",
        "in", "esac", "for", "do", "done", "function", "!", "@", "*", "?", "2", "é", "-", "\u{0}",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let len = rng.below(60);
        let text: String = (0..len)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect();
        let _ = parse(&text);
    }
}

#[test]
fn random_bytes_as_text() {
    let mut rng = Rng(42);
    for _ in 0..5_000 {
        let len = rng.below(60);
        let text: String = (0..len)
            .map(|_| char::from_u32(rng.below(0x80) as u32).unwrap_or(' '))
            .collect();
        let _ = parse(&text);
    }
}

#[test]
fn absurd_nesting_fails_cleanly() {
    // Debug builds have large frames; the nesting limit must keep even them
    // within a small thread stack.
    let worker = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(|| {
            for open in [
                "$(",
                "\"$(",
                "(",
                "${x:-",
                "\"${x:-\"",
                "$((",
                "`",
                "bash -c '",
                "a=(",
                "[[ $(",
                "<(",
                "$( case x in a) ",
                "f() { $(",
                "bash -c \"bash -c '",
            ] {
                let _ = parse(&open.repeat(5_000));
                let _ = parse(&format!("{}x{}", open.repeat(5_000), ")".repeat(5_000)));
            }
        });
    assert!(worker.map(|w| w.join().is_ok()).unwrap_or(false));
    let deep = format!("{}echo{}", "$(".repeat(3_000), ")".repeat(3_000));
    assert!(parse(&deep).is_err());
    let fine = format!("{}echo{}", "$(".repeat(20), ")".repeat(20));
    assert_eq!(parse(&fine).map(|s| s.commands.len()).ok(), Some(21));
}

#[test]
fn long_inputs_stay_fast() {
    let long = "pip install a && echo \"$(date)\" | tee -a log\n".repeat(5_000);
    let script = parse(&long).map(|s| s.commands.len());
    assert_eq!(script.ok(), Some(20_000));
    let digits = "1".repeat(50_000);
    let _ = parse(&digits);
    let _ = parse(&format!("{digits}>x"));
    let _ = parse(&"$((".repeat(2_000));
}
