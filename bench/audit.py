#!/usr/bin/env python3
"""Side-by-side benchmark of layerlock audit.

1. vLLM's CI corpus (../shared/corpus/vllm), with its container path mapped.
2. A generated tree of 1,000 Buildkite pipeline files and 500 shell scripts
   (each pipeline: steps with multi-line commands, installs, script calls),
   and half and a quarter of it, to show how the time grows with size.
3. GitHub workflows: the same generated set of 300 workflows scanned by
   layerlock and by zizmor (from PyPI, `--offline`, JSON output); reported
   per file.

    python3 bench/audit.py [--layerlock target/release/layerlock] [--zizmor zizmor] [--runs 5]

Prints a table and writes bench/results/audit-<YYYY-MM-DD>.json. Targets are
reported, never asserted: layerlock at least as fast per file as zizmor.
Python 3.11 standard library only.
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
CORPUS = REPO.parent / "shared" / "corpus" / "vllm"


def pipeline(i: int, scripts: int) -> str:
    steps = []
    for s in range(6):
        n = i * 6 + s
        steps.append(f"""  - label: "Step {n}"
    key: step-{n}
    env:
      PKG: "pkg{n}"
    commands:
      - export A=1
      - pip install pkg{n}==1.0.{s}
      - |
        set -euo pipefail
        if [ -f x ]; then echo "building {n}"; fi
        uv pip install --system "$PKG" 'other>=2'
        bash scripts/s{n % scripts}.sh --flag
      - pytest -v -s tests/test_{n}.py -k "not slow"
""")
    return "steps:\n" + "".join(steps)


def script(i: int) -> str:
    return f"""#!/bin/bash
set -e
cd "$(dirname "$0")"
for x in a b c; do
  echo "$x" | tee -a /tmp/log{i}
done
python -m pip install --require-hashes -r requirements.txt
case "$1" in
  --flag) pip install helper{i} ;;
  *) echo none ;;
esac
"""


def workflow(i: int) -> str:
    return f"""name: wf{i}
on: [push, pull_request]
permissions:
  contents: read
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          persist-credentials: false
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - run: pip install pkg{i}
      - name: tests
        run: |
          python -m pip install -r requirements.txt
          pytest -q tests/test_{i}.py
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          persist-credentials: false
      - run: uvx ruff@0.6.0 check .
"""


def generate(root: Path, pipelines: int, scripts: int) -> None:
    (root / ".buildkite").mkdir(parents=True)
    (root / "scripts").mkdir()
    for i in range(pipelines):
        (root / ".buildkite" / f"p{i:04d}.yml").write_text(pipeline(i, scripts))
    for i in range(scripts):
        (root / "scripts" / f"s{i}.sh").write_text(script(i))


def timed(cmd: list[str], runs: int, ok=(0, 1, 11, 12, 13, 14)) -> float:
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        if proc.returncode not in ok:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
        times.append(elapsed)
    return statistics.median(times[1:])  # the first run warms the page cache


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layerlock", default=str(REPO / "target" / "release" / "layerlock"))
    parser.add_argument("--zizmor", default=shutil.which("zizmor") or "zizmor")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    ll = args.layerlock
    work = Path(tempfile.mkdtemp(prefix="layerlock-bench-audit-"))
    results: dict[str, object] = {"runs": args.runs}
    try:
        if CORPUS.is_dir():
            results["vllm_corpus_s"] = timed(
                [ll, "audit", str(CORPUS), "--path-map", f"/vllm-workspace={CORPUS}", "--format", "json"],
                args.runs)
        growth = {}
        for pipelines, scripts in ((250, 125), (500, 250), (1000, 500)):
            root = work / f"tree-{pipelines}"
            generate(root, pipelines, scripts)
            growth[f"{pipelines}+{scripts}"] = timed(
                [ll, "audit", str(root), "--format", "json"], args.runs)
        results["generated_s"] = growth
        gh = work / "gh"
        (gh / ".github" / "workflows").mkdir(parents=True)
        count = 300
        for i in range(count):
            (gh / ".github" / "workflows" / f"wf{i:03d}.yml").write_text(workflow(i))
        layer = timed([ll, "audit", str(gh), "--format", "json"], args.runs)
        zizmor = None
        if shutil.which(args.zizmor) or Path(args.zizmor).exists():
            zizmor = timed([args.zizmor, "--offline", "--format", "json", str(gh)], args.runs)
        results["github_workflows"] = {
            "files": count,
            "layerlock_s": layer,
            "zizmor_s": zizmor,
            "layerlock_ms_per_file": layer * 1000 / count,
            "zizmor_ms_per_file": zizmor * 1000 / count if zizmor else None,
            "ratio": layer / zizmor if zizmor else None,
            "target": "layerlock per file <= zizmor per file",
            "met": (layer <= zizmor) if zizmor else None,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"layerlock audit (median of {args.runs}):")
    if "vllm_corpus_s" in results:
        print(f"  vLLM corpus                         {results['vllm_corpus_s'] * 1000:8.1f} ms")
    for size, seconds in results["generated_s"].items():
        print(f"  generated {size:<12} files    {seconds * 1000:8.1f} ms")
    gh = results["github_workflows"]
    print(f"GitHub workflows ({gh['files']} files):")
    print(f"  layerlock  {gh['layerlock_s'] * 1000:8.1f} ms  ({gh['layerlock_ms_per_file']:.3f} ms/file)")
    if gh["zizmor_s"]:
        print(f"  zizmor     {gh['zizmor_s'] * 1000:8.1f} ms  ({gh['zizmor_ms_per_file']:.3f} ms/file)")
        print(f"  ratio layerlock/zizmor {gh['ratio']:.2f} (target <= 1: {'met' if gh['met'] else 'NOT met'})")
    _results.write("audit", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
