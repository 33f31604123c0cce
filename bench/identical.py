#!/usr/bin/env python3
"""Two layerlock binaries, the same inputs: are the outputs byte-identical?

For a change that must not change behaviour (a refactor), build the binary
before and after it and run

    python3 bench/identical.py --before OLD/layerlock --after target/debug/layerlock

Each case runs both binaries in the same working directory, with the same
cache, and compares stdout, stderr and the exit code byte for byte (locks
written with -o are compared as files). The cases are the bundled example,
the bench workloads (compile to requirements and pylock.toml, covers), the
generated trees of bench/audit.py and bench/tether.py (audit in every
format, tether, steps), the git history of bench/history.py (blocks,
triage), compile's failure wording, several targets, sources by URL (a
directory, a git revision), kept and freed pins, and the example lock's
cooldown, install (dry run) and verify. Compile cases read PyPI with a fixed --exclude-newer; the first
binary fills the cache, so both read the same pages.

Exit 0 when every case matches, 1 when one differs (the first lines of the
difference are printed).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CUTOFF = "2026-11-01T00:00:00Z"
TARGET = ["--python-version", "3.12", "--platform", "x86_64-manylinux_2_28"]


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(binary: str, args: list[str], cwd: Path, env: dict, out: Path | None) -> tuple:
    if out is not None and out.exists():
        out.unlink()
    proc = subprocess.run([binary, *args], cwd=cwd, env=env, capture_output=True, timeout=900)
    written = out.read_bytes() if out is not None and out.exists() else b""
    return proc.returncode, proc.stdout, proc.stderr, written


def cases(work: Path) -> list[tuple[str, list[str], Path, Path | None]]:
    example = REPO / "examples" / "vllm-kv"
    lock = work / "out" / "lock.txt"
    pylock = work / "out" / "pylock.toml"
    found = [
        ("example compile --check", ["compile", "--config", "layerlock.toml", "--check"], example, None),
        ("example compile -o -", ["compile", "--config", "layerlock.toml", "-o", "-"], example, None),
        ("example covers", ["covers", "kv_connectors.txt", "--base", "cuda.txt", "--base", "kv_connectors_cuda.txt",
                            "--owned", "nvidia-nccl-cu13", *TARGET, "--exclude-newer", CUTOFF], example, None),
    ]
    for workload in ("popular.in", "big.in"):
        src = REPO / "bench" / "workloads" / workload
        common = ["compile", str(src), *TARGET, "--exclude-newer", CUTOFF]
        found.append((f"{workload} -> requirements", [*common, "-o", str(lock)], work, lock))
        found.append((f"{workload} -> pylock.toml", [*common, "-o", str(pylock)], work, pylock))
    found.extend(compile_cases(work))
    found.extend(lifecycle_cases(work))
    audit_root = work / "audit-tree"
    tether_root = work / "tether-tree"
    for fmt in ("text", "json", "sarif", "github"):
        found.append((f"audit --format {fmt}", ["audit", ".", "--format", fmt], audit_root, None))
    found.append(("tether", ["tether"], tether_root, None))
    found.append(("tether --format json", ["tether", "--format", "json"], tether_root, None))
    found.append(("steps", ["steps", ".buildkite"], audit_root, None))
    history = work / "history"
    found.append(("blocks --disabled-by auto", [
        "blocks", "--disabled-by", "auto", "--format", "json",
        "--rewrite", "install-kv-connectors.sh=check-kv-connectors.sh", "--drop-line", "^uv pip install "],
        history, None))
    found.append(("triage --dark-since auto", [
        "triage", "nixl-tests=report.xml", "--dark-since", "auto", "--format", "json"], history, None))
    found.append(("triage text", ["triage", "nixl-tests=report.xml", "--dark-since", "auto"], history, None))
    return found


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def git(repo: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repo), "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def compile_cases(work: Path) -> list:
    """What moving compile into a library touches: its failure wording,
    several targets, sources by URL, cooldown notes, kept and freed pins."""
    cases = work / "compile"
    out = cases / "out.txt"
    common = ["--exclude-newer", CUTOFF]
    write(cases / "requests.in", "requests==2.32.3\n")
    write(cases / "old-urllib3.txt", "urllib3==1.20\n")
    write(cases / "missing.in", "layerlock-no-such-project-anywhere==1.0\n")
    write(cases / "two.in", "pandas\nscipy\n")
    write(cases / "proj" / "pyproject.toml",
          '[project]\nname = "proj"\nversion = "0.3.0"\ndependencies = ["six==1.16.0"]\n')
    write(cases / "dir.in", "-e ./proj\n")
    write(cases / "url.in", "proj @ file:./proj\n")
    write(cases / "dynamic" / "pyproject.toml", '[project]\nname = "dyn"\ndynamic = ["version"]\n')
    write(cases / "dynamic.in", "-e ./dynamic\n")
    repo = cases / "gitproj"
    write(repo / "pyproject.toml",
          '[project]\nname = "gitproj"\nversion = "1.2.0"\ndependencies = ["idna==3.10"]\n')
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", "v1")
    write(cases / "git.in", f"gitproj @ git+file://{repo}@v1\n")
    write(cases / "kept.txt", "# not a lock layerlock wrote\nrequests==2.31.0\nidna==3.6\n")
    write(cases / "bad.txt", "requests=2.31.0\n")
    write(cases / "notarget" / "layerlock.toml",
          'python-version = "3.12"\nplatform = "nope_64"\n[[layer]]\nname = "x"\ninputs = ["../requests.in"]\n')
    write(cases / "clash" / "layerlock.toml",
          'python-version = "3.12"\nplatform = "x86_64-manylinux_2_28"\n'
          '[[layer]]\nname = "a"\ninputs = ["../requests.in"]\noutput = "o.txt"\n'
          '[[layer]]\nname = "b"\ninputs = ["../two.in"]\noutput = "o.txt"\n')
    write(cases / "split" / "layerlock.toml",
          'python-versions = ["3.11", "3.12"]\nplatform = "x86_64-manylinux_2_28"\n'
          f'exclude-newer = "{CUTOFF}"\n'
          '[[layer]]\nname = "s"\ninputs = ["../requests.in"]\noutput = "o-{python}.txt"\n')
    return [
        ("compile: a config target that is no target", ["compile"], cases / "notarget", None),
        ("compile: two layers, one output", ["compile"], cases / "clash", None),
        ("compile: an output over its input", ["compile", "requests.in", *TARGET, *common, "-o", "requests.in"],
         cases, None),
        ("compile: one output per target", ["compile", "-o", "-"], cases / "split", None),
        ("compile: a base conflict", ["compile", "requests.in", "--base", "old-urllib3.txt", *TARGET, *common],
         cases, None),
        ("compile: not on the index", ["compile", "missing.in", *TARGET, *common], cases, None),
        ("compile: the cooldown holds back", ["compile", "requests.in", *TARGET, "--min-age", "3650d",
                                               "--now", CUTOFF, *common], cases, None),
        ("compile: the cooldown notes", ["compile", "two.in", *TARGET, "--min-age", "60d", "--now", CUTOFF,
                                          *common, "-o", "-"], cases, None),
        ("compile: two targets", ["compile", "two.in", "--python-version", "3.10", "--python-version", "3.12",
                                  "--platform", "x86_64-manylinux_2_28", *common], cases, None),
        ("compile: two platforms", ["compile", "two.in", "--python-version", "3.12",
                                            "--platform", "x86_64-manylinux_2_28", "--platform",
                                            "aarch64-manylinux_2_28", *common, "-o", str(out)], cases, out),
        ("compile: a directory", ["compile", "dir.in", *TARGET, *common], cases, None),
        ("compile: a directory by URL", ["compile", "url.in", *TARGET, *common], cases, None),
        ("compile: a dynamic directory", ["compile", "dynamic.in", *TARGET, *common], cases, None),
        ("compile: a git revision", ["compile", "git.in", *TARGET, *common], cases, None),
        ("compile: another tool's pins kept", ["compile", "requests.in", *TARGET, *common, "-o", "kept.txt",
                                              "--check"], cases, None),
        ("compile: an unreadable output", ["compile", "requests.in", *TARGET, *common, "-o", "bad.txt"],
         cases, None),
        ("compile: -P names nothing", ["compile", "requests.in", *TARGET, *common, "-P", "numpy"], cases, None),
        ("compile: a missing base", ["compile", "requests.in", "--base", "nowhere.txt", *TARGET, *common],
         cases, None),
        ("compile: a bad platform", ["compile", "requests.in", "--python-version", "3.12", "--platform",
                                     "x86_64-manylinux_2_82", *common], cases, None),
    ]


def lifecycle_cases(work: Path) -> list:
    """The example's lock afterwards: its cooldown, and an install into a
    venv that lacks the image (refused by the drift guard or the base
    check), dry-run."""
    example = REPO / "examples" / "vllm-kv"
    venv = work / "venv"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    lock = str(example / "kv_connectors_cuda.txt")
    return [
        ("cooldown", ["cooldown", lock, "--min-age", "7d", "--now", CUTOFF], example, None),
        ("cooldown --format json", ["cooldown", lock, "--min-age", "30d", "--now", CUTOFF, "--format", "json"],
         example, None),
        ("install --dry-run", ["install", lock, "--python", str(venv / "bin" / "python"), "--dry-run"],
         example, None),
        ("verify", ["verify", lock, "--python", str(venv / "bin" / "python")], example, None),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--commits", type=int, default=20_000, help="size of the generated history")
    parser.add_argument("--only", help="run only the cases whose name holds this text")
    args = parser.parse_args()
    before, after = str(Path(args.before).resolve()), str(Path(args.after).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "out").mkdir()
        load("audit").generate(work / "audit-tree", 50, 20)
        tether = load("tether")
        tether.generate(work / "tether-tree", 200, 300)
        load("history").generate(work / "history", args.commits)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "LAYERLOCK_CACHE_DIR": str(work / "cache")}
        differing = 0
        chosen = [c for c in cases(work) if args.only is None or args.only in c[0]]
        for name, argv, cwd, out in chosen:
            first = run(before, argv, cwd, env, out)
            second = run(after, argv, cwd, env, out)
            if first == second:
                print(f"same       {name} (exit {first[0]}, {len(first[1]) + len(first[3])} bytes)")
                continue
            differing += 1
            print(f"DIFFERENT  {name}")
            for label, a, b in (("exit", str(first[0]).encode(), str(second[0]).encode()),
                                ("stdout", first[1], second[1]), ("stderr", first[2], second[2]),
                                ("file", first[3], second[3])):
                if a != b:
                    diff = difflib.unified_diff(a.decode(errors="replace").splitlines(),
                                                b.decode(errors="replace").splitlines(),
                                                f"before {label}", f"after {label}", lineterm="", n=1)
                    for line in list(diff)[:20]:
                        print(f"    {line}")
        print(f"{differing} of {len(chosen)} cases differ")
        return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
