#!/usr/bin/env python3
"""What a walk-back refusal costs on PyPI: wall time and sdist bytes.

    python3 bench/walk_back.py [--layerlock target/debug/layerlock] [--uv uv]

Compiles each case cold (a fresh cache) with layerlock, and with
`uv pip compile` for comparison, at a fixed --exclude-newer, for Python
3.12 on x86_64-manylinux_2_28. The cases are the two an earlier
measurement named: `dkimpy` (sdists only, the newer ones dynamic) and
`pyspark` (77 sdists of hundreds of MB, all dynamic). Reported: exit code,
wall time, the sdist bytes layerlock received (`--stats`), and the first
line of its error. uv builds the sdists, which layerlock never does, so
uv locks where layerlock refuses: the comparison is of cost, not result.
Talks to PyPI; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import _results

CASES = ["dkimpy", "pyspark"]
CUTOFF = "2026-11-15T00:00:00Z"


def run(cmd: list[str], cwd: Path) -> tuple[int, float, str]:
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=1800)
    first = next((l for l in proc.stderr.splitlines() if l.startswith("error")), "")
    return proc.returncode, time.monotonic() - start, first[:200]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layerlock", default="target/debug/layerlock")
    parser.add_argument("--uv", default="uv")
    args = parser.parse_args()
    layerlock = str(Path(args.layerlock).resolve())
    uv = args.uv if "/" not in args.uv else str(Path(args.uv).resolve())
    rows = []
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / "in.txt").write_text(case + "\n")
            target = ["--python-version", "3.12", "--exclude-newer", CUTOFF]
            code, secs, error = run(
                [layerlock, "compile", "in.txt", "-o", "-", "--platform", "x86_64-manylinux_2_28",
                 "--cache-dir", str(work / "ll-cache"), "--stats", "stats.json", *target],
                work,
            )
            stats = json.loads((work / "stats.json").read_text()) if (work / "stats.json").exists() else {}
            sdist = stats.get("requests", {}).get("sdist", {})
            uv_code, uv_secs, _ = run(
                [uv, "pip", "compile", "in.txt", "--python-platform", "x86_64-manylinux_2_28",
                 "--cache-dir", str(work / "uv-cache"), "--no-header", *target],
                work,
            )
        row = {
            "case": case,
            "layerlock_exit": code,
            "layerlock_seconds": round(secs, 2),
            "sdists": sdist.get("count", 0),
            "sdist_mib": round(sdist.get("bytes", 0) / 2**20, 1),
            "layerlock_error": error,
            "uv_exit": uv_code,
            "uv_seconds": round(uv_secs, 2),
        }
        rows.append(row)
        print(
            f"{case:10} layerlock exit {code} {secs:6.1f}s, {row['sdists']} sdists, "
            f"{row['sdist_mib']} MiB | uv exit {uv_code} {uv_secs:6.1f}s"
        )
    _results.write(
        "walk_back",
        {
            "cutoff": CUTOFF,
            "layerlock": _results.version_of([layerlock, "--version"]),
            "uv": _results.version_of([uv, "--version"]),
            "cases": rows,
        },
    )


if __name__ == "__main__":
    main()
