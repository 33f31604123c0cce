#!/usr/bin/env python3
"""Side-by-side benchmark of layerlock audit.

1. vLLM's CI corpus (../shared/corpus/vllm), with its container path mapped.
2. A generated tree of 1,000 Buildkite pipeline files and 500 shell scripts
   (each pipeline: steps with multi-line commands, installs, script calls),
   and half and a quarter of it, to show how the time grows with size.
3. Shared chains (issue 14): N pipelines and N scripts, where pipeline i
   calls script i and every script installs and calls the next one, so each
   pipeline reaches a chain as deep as the walker follows (32 calls; the
   call past it is reported, hence exit 2) and neighbouring pipelines share
   all of it but one script. N = 625, 1,250 and 2,500; the target at 2,500
   is under 1 s and 200 MiB.
4. GitHub workflows: the same generated set of 300 workflows scanned by
   layerlock and by zizmor (from PyPI, `--offline`, JSON output); reported
   per file.
5. Many findings (issue 22): one Buildkite file whose 20,000, 50,000 and
   200,000 steps each `pip install` a pin, in every output format (text,
   JSON, SARIF, GitHub). The target at 200,000 is under 5 s in each, and
   the time grows linearly.

    python3 bench/audit.py [--layerlock target/release/layerlock] [--zizmor zizmor] [--runs 5]
                           [--cases vllm,generated,chain,github,many]

Every case is timed (median wall time of --runs runs after one warm-up) and
its peak RSS taken from GNU time (`/usr/bin/time -f %M`, the largest of the
runs). Prints a table and writes bench/results/audit-<YYYY-MM-DD>.json.
Targets are reported, never asserted: layerlock at least as fast per file as
zizmor; the 2,500-pipeline chain under 1 s and 200 MiB. Python 3.11 standard
library only, and GNU time.
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


def chain_pipeline(i: int) -> str:
    return f"""steps:
  - label: "Chain {i}"
    key: chain-{i}
    env:
      PKG: "pkg{i}"
    commands:
      - pip install "$$PKG"
      - bash scripts/chain/c{i}.sh --flag
"""


def chain_script(i: int, scripts: int) -> str:
    call = f'bash c{i + 1}.sh "$@"\n' if i + 1 < scripts else ""
    return f"""#!/bin/bash
set -euo pipefail
cd "$(dirname "$0")"
echo "stage {i}"
pip install chain{i}==1.0.0
if [ "${{1:-}}" = --flag ]; then uv pip install --system helper{i}; fi
{call}"""


def generate_chain(root: Path, size: int) -> None:
    (root / ".buildkite").mkdir(parents=True)
    (root / "scripts" / "chain").mkdir(parents=True)
    for i in range(size):
        (root / ".buildkite" / f"c{i:04d}.yml").write_text(chain_pipeline(i))
        (root / "scripts" / "chain" / f"c{i}.sh").write_text(chain_script(i, size))


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


def generate_many(root: Path, steps: int) -> None:
    (root / ".buildkite").mkdir(parents=True)
    with open(root / ".buildkite" / "pipeline.yml", "w") as out:
        out.write("steps:\n")
        for i in range(steps):
            out.write(f"  - label: s{i}\n    key: s{i}\n    command: pip install pkg{i}==1.0.0\n")


def generate(root: Path, pipelines: int, scripts: int) -> None:
    (root / ".buildkite").mkdir(parents=True)
    (root / "scripts").mkdir()
    for i in range(pipelines):
        (root / ".buildkite" / f"p{i:04d}.yml").write_text(pipeline(i, scripts))
    for i in range(scripts):
        (root / "scripts" / f"s{i}.sh").write_text(script(i))


def timed(cmd: list[str], runs: int, ok=(0, 1, 11, 12, 13, 14)) -> tuple[float, float]:
    """Median wall seconds (the first run warms the page cache and is not
    counted) and the largest peak RSS in MiB."""
    times = []
    peak_kib = 0
    for _ in range(runs + 1):
        with tempfile.NamedTemporaryFile("r") as peak_file:
            start = time.perf_counter()
            proc = subprocess.run(
                ["/usr/bin/time", "-f", "%M", "-o", peak_file.name, *cmd],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            elapsed = time.perf_counter() - start
            # GNU time writes "Command exited with non-zero status N" first.
            peak_kib = max(peak_kib, int(peak_file.read().split()[-1]))
        if proc.returncode not in ok:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
        times.append(elapsed)
    return statistics.median(times[1:]), peak_kib / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layerlock", default=str(REPO / "target" / "release" / "layerlock"))
    parser.add_argument("--zizmor", default=shutil.which("zizmor") or "zizmor")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cases", default="vllm,generated,chain,github,many",
                        help="comma-separated: vllm, generated, chain, github, many")
    args = parser.parse_args()
    cases = set(args.cases.split(","))
    ll = args.layerlock
    work = Path(tempfile.mkdtemp(prefix="layerlock-bench-audit-"))
    results: dict[str, object] = {"runs": args.runs, "peak_rss": "GNU time %M, largest of the runs, MiB"}
    try:
        if "vllm" in cases and CORPUS.is_dir():
            results["vllm_corpus_s"], results["vllm_corpus_peak_mib"] = timed(
                [ll, "audit", str(CORPUS), "--path-map", f"/vllm-workspace={CORPUS}", "--format", "json"],
                args.runs)
        if "generated" in cases:
            growth, peaks = {}, {}
            for pipelines, scripts in ((250, 125), (500, 250), (1000, 500)):
                root = work / f"tree-{pipelines}"
                generate(root, pipelines, scripts)
                size = f"{pipelines}+{scripts}"
                growth[size], peaks[size] = timed([ll, "audit", str(root), "--format", "json"], args.runs)
            results["generated_s"] = growth
            results["generated_peak_mib"] = peaks
        if "chain" in cases:
            growth, peaks = {}, {}
            for size in (625, 1250, 2500):
                root = work / f"chain-{size}"
                generate_chain(root, size)
                # Exit 2: every chain is deeper than the walker follows.
                growth[str(size)], peaks[str(size)] = timed(
                    [ll, "audit", str(root), "--format", "json"], args.runs, ok=(2,))
            results["chain_s"] = growth
            results["chain_peak_mib"] = peaks
            results["chain_target"] = {
                "what": "2500 pipelines: under 1 s and 200 MiB",
                "met": growth["2500"] < 1.0 and peaks["2500"] < 200,
            }
        if "many" in cases:
            many: dict[str, dict[str, float]] = {}
            peaks: dict[str, dict[str, float]] = {}
            for steps in (20_000, 50_000, 200_000):
                root = work / f"many-{steps}"
                generate_many(root, steps)
                many[str(steps)], peaks[str(steps)] = {}, {}
                for fmt in ("text", "json", "sarif", "github"):
                    many[str(steps)][fmt], peaks[str(steps)][fmt] = timed(
                        [ll, "audit", str(root), "--format", fmt], max(1, args.runs // 2))
                shutil.rmtree(root, ignore_errors=True)
            results["many_findings_s"] = many
            results["many_findings_peak_mib"] = peaks
            results["many_findings_target"] = {
                "what": "200,000 findings: under 5 s in every format",
                "met": all(t < 5.0 for t in many["200000"].values()),
            }
        if "github" in cases:
            gh = work / "gh"
            (gh / ".github" / "workflows").mkdir(parents=True)
            count = 300
            for i in range(count):
                (gh / ".github" / "workflows" / f"wf{i:03d}.yml").write_text(workflow(i))
            layer, layer_peak = timed([ll, "audit", str(gh), "--format", "json"], args.runs)
            zizmor = None
            if shutil.which(args.zizmor) or Path(args.zizmor).exists():
                zizmor, _ = timed([args.zizmor, "--offline", "--format", "json", str(gh)], args.runs)
            results["github_workflows"] = {
                "files": count,
                "layerlock_s": layer,
                "layerlock_peak_mib": layer_peak,
                "zizmor_s": zizmor,
                "layerlock_ms_per_file": layer * 1000 / count,
                "zizmor_ms_per_file": zizmor * 1000 / count if zizmor else None,
                "ratio": layer / zizmor if zizmor else None,
                "target": "layerlock per file <= zizmor per file",
                "met": (layer <= zizmor) if zizmor else None,
            }
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"layerlock audit (median of {args.runs}; peak RSS):")
    if "vllm_corpus_s" in results:
        print(f"  vLLM corpus                         {results['vllm_corpus_s'] * 1000:8.1f} ms "
              f"{results['vllm_corpus_peak_mib']:7.1f} MiB")
    for size, seconds in results.get("generated_s", {}).items():
        print(f"  generated {size:<12} files    {seconds * 1000:8.1f} ms "
              f"{results['generated_peak_mib'][size]:7.1f} MiB")
    for size, seconds in results.get("chain_s", {}).items():
        print(f"  chains    {size:<5} pipelines+scripts {seconds * 1000:8.1f} ms "
              f"{results['chain_peak_mib'][size]:7.1f} MiB")
    if "chain_target" in results:
        print(f"  chains at 2500: under 1 s and 200 MiB: {'met' if results['chain_target']['met'] else 'NOT met'}")
    for steps, formats in results.get("many_findings_s", {}).items():
        line = "  ".join(f"{fmt} {seconds:6.2f} s" for fmt, seconds in formats.items())
        print(f"  many findings {steps:>7} steps   {line}")
    if "many_findings_target" in results:
        met = results["many_findings_target"]["met"]
        print(f"  200,000 findings under 5 s in every format: {'met' if met else 'NOT met'}")
    gh = results.get("github_workflows")
    if gh:
        print(f"GitHub workflows ({gh['files']} files):")
        print(f"  layerlock  {gh['layerlock_s'] * 1000:8.1f} ms  ({gh['layerlock_ms_per_file']:.3f} ms/file) "
              f"{gh['layerlock_peak_mib']:7.1f} MiB")
        if gh["zizmor_s"]:
            print(f"  zizmor     {gh['zizmor_s'] * 1000:8.1f} ms  ({gh['zizmor_ms_per_file']:.3f} ms/file)")
            print(f"  ratio layerlock/zizmor {gh['ratio']:.2f} (target <= 1: {'met' if gh['met'] else 'NOT met'})")
    _results.write("audit", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
