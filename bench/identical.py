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
format, tether, steps) and the git history of bench/history.py (blocks,
triage). Compile cases read PyPI with a fixed --exclude-newer; the first
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--commits", type=int, default=20_000, help="size of the generated history")
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
        for name, argv, cwd, out in cases(work):
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
        print(f"{differing} of {len(cases(work))} cases differ")
        return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
