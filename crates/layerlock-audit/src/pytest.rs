//! From one command to the test files it runs: pytest in its forms
//! (`pytest`, `python -m pytest`, `coverage run -m pytest`, `torchrun … -m
//! pytest`, through `xargs` after `find`, or `find … -exec pytest`), and
//! `python path/x.py`. `-k` and `-m` are not modelled: a step that filters by
//! keyword or marker still counts as running the files it names.

pub use layerlock_ci::glob::fnmatch;
use layerlock_walk::{Arg, is_python, strip_wrappers};

/// What a command selects, as paths written in the command (not resolved).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Files and directories given (`file::node` reduced to the file).
    pub paths: Vec<String>,
    /// `find DIR -name PATTERN` feeding pytest: (dir, pattern).
    pub finds: Vec<(String, String)>,
    /// `--ignore PATH`: a prefix.
    pub ignore: Vec<String>,
    /// `--ignore-glob PATTERN`: fnmatch on the path.
    pub ignore_glob: Vec<String>,
    /// `--deselect FILE` of a whole file.
    pub deselect: Vec<String>,
    /// pytest ran with no path: it collects from where it runs.
    pub whole_dir: bool,
    /// A plain `python x.py` script, not pytest.
    pub script: bool,
    /// A path argument is computed at run time: what it selects is unknown.
    pub dynamic: bool,
}

/// pytest options that take a value (as a separate word).
const VALUE_OPTIONS: &[&str] = &[
    "-k",
    "-m",
    "-c",
    "-p",
    "-o",
    "-n",
    "-W",
    "-r",
    "--rootdir",
    "--confcutdir",
    "--basetemp",
    "--junitxml",
    "--junit-xml",
    "--durations",
    "--durations-min",
    "--maxfail",
    "--tb",
    "--timeout",
    "--log-level",
    "--log-cli-level",
    "--log-file",
    "--override-ini",
    "--cov",
    "--cov-report",
    "--cov-config",
    "--dist",
    "--reruns",
    "--reruns-delay",
    "--count",
    "--shard-id",
    "--num-shards",
    "--capture",
    "--import-mode",
    "--color",
    "--code-highlight",
    "--pyargs",
    "--html",
    "--json-report-file",
    "--randomly-seed",
    "--splits",
    "--group",
    "--maxprocesses",
    "--max-worker-restart",
    "--rsyncdir",
    "--tx",
    "--forked-timeout",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "--trace-config",
    "--debug",
    "--report-log",
    "--junit-prefix",
    "--log-format",
    "--log-date-format",
];

fn value(arg: &Arg) -> Option<&str> {
    arg.value.as_deref()
}

/// The index in `args` where pytest's own arguments start, if this runs
/// pytest.
fn pytest_start(args: &[Arg]) -> Option<usize> {
    let first = value(args.first()?)?;
    let program = first.rsplit('/').next().unwrap_or(first);
    if program == "pytest" || program == "py.test" {
        return Some(1);
    }
    // `python -m pytest`, `coverage run -m pytest`, `torchrun … -m pytest`,
    // `python -m torch.distributed.run … -m pytest`.
    let mut last = None;
    for (i, pair) in args.windows(2).enumerate() {
        if value(&pair[0]) == Some("-m") && value(&pair[1]) == Some("pytest") {
            last = Some(i + 2);
        }
    }
    last
}

fn find_selection(args: &[Arg]) -> (Vec<String>, Vec<String>) {
    // `find DIR… -name PATTERN …`: directories before the first `-`/`(`/`!`.
    let mut dirs = Vec::new();
    let mut patterns = Vec::new();
    let mut i = 1;
    while let Some(v) = args.get(i).and_then(value) {
        if v.starts_with('-') || v == "(" || v == "!" {
            break;
        }
        dirs.push(v.to_string());
        i += 1;
    }
    while i < args.len() {
        if matches!(value(&args[i]), Some("-name" | "-iname"))
            && let Some(p) = args.get(i + 1).and_then(value)
        {
            patterns.push(p.to_string());
        }
        i += 1;
    }
    if dirs.is_empty() {
        dirs.push(".".to_string());
    }
    if patterns.is_empty() {
        patterns.push("*.py".to_string());
    }
    (dirs, patterns)
}

fn pytest_args(args: &[Arg], selection: &mut Selection) {
    let mut i = 0;
    while i < args.len() {
        let Some(v) = value(&args[i]) else {
            selection.dynamic = true;
            i += 1;
            continue;
        };
        let (flag, inline) = match v.split_once('=') {
            Some((f, val)) if f.starts_with("--") => (f, Some(val.to_string())),
            _ => (v, None),
        };
        let take = |i: &mut usize| -> Option<String> {
            if let Some(val) = &inline {
                return Some(val.clone());
            }
            *i += 1;
            args.get(*i).and_then(value).map(str::to_string)
        };
        match flag {
            "--ignore" => selection.ignore.extend(take(&mut i)),
            "--ignore-glob" => selection.ignore_glob.extend(take(&mut i)),
            "--deselect" => {
                if let Some(target) = take(&mut i)
                    && !target.contains("::")
                {
                    selection.deselect.push(target);
                }
            }
            f if f.starts_with('-') => {
                if inline.is_none() && VALUE_OPTIONS.contains(&f) {
                    i += 1;
                }
            }
            "{}" => {}
            path => {
                let file = path.split("::").next().unwrap_or(path);
                selection.paths.push(file.to_string());
            }
        }
        i += 1;
    }
}

/// What `args` runs, given the command before it in the same script.
pub fn selection(args: &[Arg], previous: Option<&[Arg]>) -> Option<Selection> {
    let first_raw = value(args.first()?)?;
    let mut selection = Selection::default();
    // `find … -exec pytest … {} +`
    if first_raw == "find"
        && let Some(exec) = args
            .iter()
            .position(|a| matches!(value(a), Some("-exec" | "-execdir")))
    {
        let inner = &args[exec + 1..];
        let start = pytest_start(strip_wrappers(inner))?;
        let (dirs, patterns) = find_selection(args);
        for dir in &dirs {
            for pattern in &patterns {
                selection.finds.push((dir.clone(), pattern.clone()));
            }
        }
        let inner = strip_wrappers(inner);
        let end = inner
            .iter()
            .position(|a| matches!(value(a), Some(";" | "+")))
            .unwrap_or(inner.len());
        pytest_args(&inner[start..end], &mut selection);
        return Some(selection);
    }
    let via_xargs = first_raw.rsplit('/').next() == Some("xargs");
    let args = strip_wrappers(args);
    if let Some(start) = pytest_start(args) {
        pytest_args(&args[start..], &mut selection);
        if via_xargs
            && let Some(prev) = previous
            && prev.first().and_then(value) == Some("find")
        {
            let (dirs, patterns) = find_selection(prev);
            for dir in &dirs {
                for pattern in &patterns {
                    selection.finds.push((dir.clone(), pattern.clone()));
                }
            }
        }
        if selection.paths.is_empty() && selection.finds.is_empty() && !selection.dynamic {
            selection.whole_dir = true;
        }
        return Some(selection);
    }
    // `python [flags] path/x.py`, and launchers that run a file the same
    // way: `torchrun --nproc-per-node 2 x.py`, `python -m
    // torch.distributed.run … x.py`, `accelerate launch x.py`, `deepspeed`.
    let script = launched_script(args)?;
    selection.paths.push(script);
    selection.script = true;
    Some(selection)
}

/// The Python file a command runs, if it runs one directly.
fn launched_script(args: &[Arg]) -> Option<String> {
    let first = value(args.first()?)?;
    let program = first.rsplit('/').next().unwrap_or(first);
    let rest: &[Arg] = if is_python(program) {
        // Interpreter options that take a value.
        let mut i = 1;
        while let Some(v) = args.get(i).and_then(value) {
            match v {
                "-c" => return None,
                "-m" => {
                    let module = args.get(i + 1).and_then(value)?;
                    if !matches!(module, "torch.distributed.run" | "torch.distributed.launch") {
                        return None;
                    }
                    return first_python_file(&args[i + 2..]);
                }
                "-W" | "-X" | "-Q" => i += 2,
                v if v.starts_with('-') => i += 1,
                v => return v.ends_with(".py").then(|| v.to_string()),
            }
        }
        return None;
    } else if matches!(program, "torchrun" | "deepspeed") {
        &args[1..]
    } else if program == "accelerate" && args.get(1).and_then(value) == Some("launch") {
        &args[2..]
    } else {
        return None;
    };
    first_python_file(rest)
}

/// A launcher's script: its first operand, which must be a `.py` file
/// (option values such as `--nproc-per-node 2` are never one).
fn first_python_file(args: &[Arg]) -> Option<String> {
    for arg in args {
        let v = value(arg)?;
        if v.starts_with('-') {
            continue;
        }
        if v.ends_with(".py") {
            return Some(v.to_string());
        }
        if v == "-m" || v.contains('/') {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Arg> {
        text.split_whitespace().map(Arg::lit).collect()
    }

    fn sel(text: &str) -> Option<Selection> {
        selection(&words(text), None)
    }

    #[test]
    fn pytest_forms() {
        let s = sel("pytest -v -s -m not_slow v1/core tests/a.py::test_x --ignore=v1/core/slow --deselect v1/core/test_b.py").unwrap();
        assert_eq!(s.paths, vec!["v1/core", "tests/a.py"]);
        assert_eq!(s.ignore, vec!["v1/core/slow"]);
        assert_eq!(s.deselect, vec!["v1/core/test_b.py"]);
        assert_eq!(sel("python3 -m pytest x.py").unwrap().paths, vec!["x.py"]);
        assert_eq!(
            sel("coverage run --source=. -m pytest y").unwrap().paths,
            vec!["y"]
        );
        assert_eq!(
            sel("torchrun --nproc-per-node=2 -m pytest dist/test_d.py")
                .unwrap()
                .paths,
            vec!["dist/test_d.py"]
        );
        assert!(sel("pytest -q").unwrap().whole_dir);
        assert_eq!(
            sel("python examples/run.py --flag").unwrap().paths,
            vec!["examples/run.py"]
        );
        assert!(sel("python -c x").is_none());
        assert_eq!(
            sel("torchrun --nproc-per-node 2 dist/run_x.py --tp 2")
                .unwrap()
                .paths,
            vec!["dist/run_x.py"]
        );
        assert_eq!(
            sel("python -W ignore t/x.py").unwrap().paths,
            vec!["t/x.py"]
        );
        assert_eq!(
            sel("python -m torch.distributed.run --nproc_per_node=4 t/y.py")
                .unwrap()
                .paths,
            vec!["t/y.py"]
        );
        assert!(sel("echo pytest").is_none());
        let f = sel("find tests/k -name test_*.py -exec pytest -q {} +").unwrap();
        assert_eq!(
            f.finds,
            vec![("tests/k".to_string(), "test_*.py".to_string())]
        );
        let prev = words("find tests/x -name *_test.py");
        let x = selection(&words("xargs -n1 pytest -v"), Some(&prev)).unwrap();
        assert_eq!(
            x.finds,
            vec![("tests/x".to_string(), "*_test.py".to_string())]
        );
    }

    #[test]
    fn fnmatch_rules() {
        assert!(fnmatch("test_*.py", "test_a.py"));
        assert!(fnmatch("*/slow/*", "tests/slow/test_a.py"));
        assert!(fnmatch("test_[ab].py", "test_b.py"));
        assert!(!fnmatch("test_[!ab].py", "test_b.py"));
        assert!(!fnmatch("test_?.py", "test_ab.py"));
    }
}
