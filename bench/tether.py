#!/usr/bin/env python3
"""Benchmark of layerlock tether --all and layerlock steps on generated
repositories: 300 Buildkite steps and 2,000 test files, and a quarter and a
half of that, to show how the time grows with size.

    python3 bench/tether.py [--layerlock target/release/layerlock] [--runs 5]

Prints a table and writes bench/results/tether-<YYYY-MM-DD>.json. Python 3.11
standard library only; needs git.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _results

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def generate(root: Path, steps: int, files: int) -> None:
    dirs = max(files // 20, 1)
    for i in range(files):
        d = root / "tests" / f"area{i % dirs:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"test_{i:05d}.py").write_text("def test_x():\n    pass\n")
    (root / ".buildkite").mkdir()
    per_file = 10
    for p in range(0, steps, per_file):
        out = ["steps:"]
        for s in range(p, min(p + per_file, steps)):
            area = s % dirs
            out += [
                f"  - label: step {s}",
                f"    key: step-{s}",
                "    commands:",
                f"      - pytest -v -s tests/area{area:03d} --ignore=tests/area{area:03d}/test_{area:05d}.py",
                f"      - python -m pytest tests/area{(area + 1) % dirs:03d}/test_{(area + 1) % dirs + dirs:05d}.py::test_x",
            ]
            if s > 0:
                out.append(f"    depends_on: step-{s - 1}")
        (root / ".buildkite" / f"pipeline{p // per_file:03d}.yml").write_text("\n".join(out) + "\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "init.defaultBranch=main"]
    subprocess.run(git + ["init", "-q"], cwd=root, check=True)
    subprocess.run(git + ["add", "."], cwd=root, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "bench"], cwd=root, check=True)


def timed(cmd: list[str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{cmd} failed: {proc.stderr.decode()[:400]}")
    return statistics.median(times[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layerlock", default=str(REPO / "target" / "release" / "layerlock"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="layerlock-bench-tether-"))
    results = {}
    try:
        for steps, files in ((75, 500), (150, 1000), (300, 2000)):
            root = work / f"r{steps}"
            root.mkdir()
            generate(root, steps, files)
            results[f"{steps} steps, {files} files"] = {
                "tether_all_s": timed([args.layerlock, "tether", "--all"], root, args.runs),
                "steps_s": timed([args.layerlock, "steps"], root, args.runs),
            }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"median of {args.runs} runs:")
    for size, r in results.items():
        print(f"  {size:<24} tether --all {r['tether_all_s'] * 1000:8.1f} ms   steps {r['steps_s'] * 1000:7.1f} ms")
    _results.write("tether", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
