#!/usr/bin/env python3
"""Keeping pins costs nothing: a regeneration over an existing lock, timed
beside one without it, for layerlock and `uv pip compile`.

The workload is compile.py's `big` (ten frameworks, 158 new packages, on
vLLM's CUDA test lock; needs ../shared/corpus/vllm). Each tool first fills
its cache and writes its lock once; then, per tool:

  warm --offline, no lock    the output is removed before each run
  warm --offline, lock kept  the output is the tool's own lock (pins kept)
  cold, no lock              a fresh empty cache each run
  cold, lock kept            a fresh empty cache, the lock in place

Judged, never asserted (issue 26's targets): layerlock's warm --offline run
with the lock kept under 0.1x uv's, and layerlock's cold regeneration over
its lock no slower than its cold compile without one (within the runs'
spread). Writes bench/results/keep-<YYYY-MM-DD>.json.

    python3 bench/keep.py [--layerlock target/release/layerlock] [--uv uv]
        [--cold-runs 3] [--warm-runs 5]
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
spec = importlib.util.spec_from_file_location("compile_bench", HERE / "compile.py")
bench = importlib.util.module_from_spec(spec)
sys.modules["compile_bench"] = bench
spec.loader.exec_module(bench)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layerlock", default=str(bench.REPO / "target/release/layerlock"))
    parser.add_argument("--uv", default="uv")
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=5)
    args = parser.parse_args()
    wl = bench.WORKLOADS["big"]
    if not (wl.cwd / wl.base).is_file():
        print(f"SKIP: {wl.cwd / wl.base} is not here (vLLM's corpus is not beside this checkout)")
        return 0
    layerlock = str(Path(args.layerlock).resolve())
    scratch = Path(tempfile.mkdtemp(prefix="layerlock-keep-"))
    base_nolocal = scratch / "base-nolocal.txt"
    bench.strip_local_labels(wl.cwd / wl.base, base_nolocal)
    env = dict(os.environ)

    def cmd(tool: str, cache: Path, out: Path, offline: bool) -> list[str]:
        if tool == "layerlock":
            c = [layerlock, "compile", wl.input, "--base", wl.base, "--python-version",
                 bench.PYTHON, "--platform", bench.PLATFORM, "--exclude-newer",
                 wl.exclude_newer, "--quiet", "--cache-dir", str(cache), "-o", str(out)]
            for o in wl.owned:
                c += ["--owned", o]
        else:
            c = [args.uv, "pip", "compile", wl.input, "-c", str(base_nolocal),
                 "--python-platform", bench.PLATFORM, "--python-version", bench.PYTHON,
                 "--exclude-newer", wl.exclude_newer, "--generate-hashes", "--no-header",
                 "--quiet", "--cache-dir", str(cache), "-o", str(out)]
        return c + (["--offline"] if offline else [])

    results: dict[str, dict] = {}
    for tool in ("layerlock", "uv"):
        warm_cache = scratch / f"{tool}-cache"
        seed = scratch / f"{tool}-seed.txt"
        bench.measure(cmd(tool, warm_cache, seed, False), wl.cwd, env, scratch / "log")
        series = {}
        for label, runs, cold, keep in [
            ("warm offline, no lock", args.warm_runs, False, False),
            ("warm offline, lock kept", args.warm_runs, False, True),
            ("cold, no lock", args.cold_runs, True, False),
            ("cold, lock kept", args.cold_runs, True, True),
        ]:
            walls = []
            for i in range(runs):
                work = scratch / f"{tool}-{label.replace(' ', '-').replace(',', '')}-{i}"
                work.mkdir()
                out = work / "out.txt"
                if keep:
                    shutil.copy(seed, out)
                cache = work / "cache" if cold else warm_cache
                wall, _ = bench.measure(cmd(tool, cache, out, not cold), wl.cwd, env, work / "log")
                walls.append(wall)
                body = lambda p: [l for l in p.read_text().splitlines() if not l.startswith("#")]
                if keep and body(out) != body(seed):
                    print(f"  note: {tool} {label}: the pins changed", flush=True)
            series[label] = {"runs_s": [round(w, 4) for w in walls],
                             "median_s": round(bench.median(walls), 4)}
            print(f"{tool:<9} {label:<24} median {series[label]['median_s']:.3f} s", flush=True)
        results[tool] = series
    ll, uv = results["layerlock"], results["uv"]
    ratios = {
        "warm_offline_kept_vs_uv": round(ll["warm offline, lock kept"]["median_s"]
                                         / uv["warm offline, lock kept"]["median_s"], 4),
        "cold_kept_vs_cold_fresh": round(ll["cold, lock kept"]["median_s"]
                                         / ll["cold, no lock"]["median_s"], 4),
        "warm_kept_vs_warm_fresh": round(ll["warm offline, lock kept"]["median_s"]
                                         / ll["warm offline, no lock"]["median_s"], 4),
    }
    print(json.dumps(ratios, indent=2))
    out = HERE / "results" / f"keep-{dt.date.today().isoformat()}.json"
    out.write_text(json.dumps({"workload": wl.name, "exclude_newer": wl.exclude_newer,
                               "tools": results, "ratios": ratios,
                               "targets": {"warm_offline_kept_vs_uv": 0.1,
                                           "cold_kept_vs_cold_fresh": 1.0}}, indent=2) + "\n")
    print(f"wrote {out.relative_to(bench.REPO)}")
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
