#!/usr/bin/env python3
"""Benchmark of layerlock tether --all and layerlock steps on generated
repositories, wall time (median) and peak RSS (GNU time's %M):

- plain steps (`pytest DIR --ignore FILE`, `python -m pytest FILE::node`):
  300 Buildkite steps and 2,000 test files, a quarter and a half of that, and
  issue 14's sizes, 5,000 steps x 2,500 files and 3,000 steps x 20,000 files;
- mixed steps on nested folders, 750 x 5,000 and 3,000 x 20,000: file globs,
  folder globs, `find -exec pytest`, `--ignore`, `--ignore-glob`,
  `--deselect`, `-k`, node ids and `cd DIR && pytest`.

    python3 bench/tether.py [--layerlock target/release/layerlock] [--runs 5] [--only plain|mixed]

Prints a table and writes bench/results/tether-<YYYY-MM-DD>.json. Python 3.11
standard library only; needs git and /usr/bin/time.
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


def commit(root: Path) -> None:
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "init.defaultBranch=main"]
    subprocess.run(git + ["init", "-q"], cwd=root, check=True)
    subprocess.run(git + ["add", "."], cwd=root, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "bench"], cwd=root, check=True)


def write_pipelines(root: Path, steps: list[list[str]]) -> None:
    """Ten steps a pipeline file, each depending on the one before."""
    (root / ".buildkite").mkdir()
    per_file = 10
    for p in range(0, len(steps), per_file):
        out = ["steps:"]
        for s in range(p, min(p + per_file, len(steps))):
            out += [f"  - label: step {s}", f"    key: step-{s}", "    commands:"]
            out += [f"      - {c}" for c in steps[s]]
            if s > 0:
                out.append(f"    depends_on: step-{s - 1}")
        (root / ".buildkite" / f"pipeline{p // per_file:03d}.yml").write_text("\n".join(out) + "\n")


def generate(root: Path, steps: int, files: int) -> None:
    """The plain shape (the figures before 2026-12 were taken on it)."""
    dirs = max(files // 20, 1)
    for i in range(files):
        d = root / "tests" / f"area{i % dirs:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"test_{i:05d}.py").write_text("def test_x():\n    pass\n")
    lines = []
    for s in range(steps):
        area = s % dirs
        nxt = (area + 1) % dirs
        lines.append(
            [
                f"pytest -v -s tests/area{area:03d} --ignore=tests/area{area:03d}/test_{area:05d}.py",
                f"python -m pytest tests/area{nxt:03d}/test_{nxt + dirs:05d}.py::test_x",
            ]
        )
    write_pipelines(root, lines)
    commit(root)


def generate_mixed(root: Path, steps: int, files: int) -> None:
    """Nested folders (tests/areaNNN/subK) and steps of six kinds, each kind
    aimed at one area, so every selection has a literal folder prefix."""
    areas = max(files // 40, 1)
    for i in range(files):
        area, sub = i % areas, (i // areas) % 5
        d = root / "tests" / f"area{area:03d}"
        if sub:
            d = d / f"sub{sub}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"test_{i:05d}.py").write_text("def test_x():\n    pass\n")
    lines = []
    for s in range(steps):
        a = s % areas
        area = f"tests/area{a:03d}"
        first = f"test_{a:05d}.py"
        kind = (s // areas) % 6
        if kind == 0:
            cmd = [f"pytest -v -s {area} --ignore={area}/sub1 --deselect {area}/{first} -k 'not slow'"]
        elif kind == 1:
            cmd = [f"pytest -v -s {area}/test_*.py {area}/sub2/test_0*.py --ignore-glob='*/test_{a + areas:05d}.py'"]
        elif kind == 2:
            cmd = [f"find {area}/sub1 {area}/sub3 -name 'test_*.py' -exec pytest -q {{}} +"]
        elif kind == 3:
            cmd = [f"python -m pytest {area}/sub2/test_{a + 2 * areas:05d}.py::test_x {area}/{first}::test_x"]
        elif kind == 4:
            cmd = [f"pytest -v -s {area}/sub[34] -m 'not gpu'"]
        else:
            cmd = [f"cd {area} && pytest -v -s sub4 sub1/test_{a + areas:05d}.py --ignore=sub4/test_{a + 4 * areas:05d}.py"]
        lines.append(cmd)
    write_pipelines(root, lines)
    commit(root)


def timed(cmd: list[str], cwd: Path, runs: int) -> tuple[float, int]:
    """Median wall time of `runs` runs after one warm-up, and the largest
    peak RSS (KiB) GNU time saw."""
    times, rss = [], 0
    out = cwd / ".time"
    for _ in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", str(out)] + cmd,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{cmd} failed: {proc.stderr.decode()[:400]}")
        rss = max(rss, int(out.read_text().split()[-1]))
    out.unlink()
    return statistics.median(times[1:]), rss


CASES = [
    ("plain", 75, 500),
    ("plain", 150, 1000),
    ("plain", 300, 2000),
    ("plain", 5000, 2500),
    ("plain", 3000, 20000),
    ("mixed", 750, 5000),
    ("mixed", 3000, 20000),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layerlock", default=str(REPO / "target" / "release" / "layerlock"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=["plain", "mixed"])
    args = parser.parse_args()
    # The commands run in the generated trees: a relative path to the binary
    # is taken from here, a bare name from PATH.
    layerlock = str(Path(args.layerlock).absolute()) if "/" in args.layerlock else args.layerlock
    work = Path(tempfile.mkdtemp(prefix="layerlock-bench-tether-"))
    results = {}
    try:
        for shape, steps, files in CASES:
            if args.only and shape != args.only:
                continue
            root = work / f"{shape}{steps}-{files}"
            root.mkdir()
            (generate if shape == "plain" else generate_mixed)(root, steps, files)
            # The plain cases keep their old names, so earlier results compare.
            name = f"{steps} steps, {files} files" + ("" if shape == "plain" else ", mixed")
            tether_s, tether_kib = timed([layerlock, "tether", "--all"], root, args.runs)
            steps_s, steps_kib = timed([layerlock, "steps"], root, args.runs)
            results[name] = {
                "tether_all_s": tether_s,
                "tether_all_peak_rss_kib": tether_kib,
                "steps_s": steps_s,
                "steps_peak_rss_kib": steps_kib,
            }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"median of {args.runs} runs (peak RSS in MiB):")
    for size, r in results.items():
        print(
            f"  {size:<34} tether --all {r['tether_all_s'] * 1000:8.1f} ms {r['tether_all_peak_rss_kib'] / 1024:6.1f}"
            f"   steps {r['steps_s'] * 1000:7.1f} ms {r['steps_peak_rss_kib'] / 1024:6.1f}"
        )
    _results.write("tether", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
