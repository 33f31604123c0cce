#!/usr/bin/env python3
"""Online lifecycle suite: a lock regenerated step by step, layerlock beside
`uv pip compile`, each tool over its own output file from the step before.

The steps (one requirements input, Python 3.12 on x86_64-manylinux_2_28):

1. compile at an old cutoff;
2. compile again at a later cutoff: both keep every pin;
3. add one requirement: only its closure is added;
4. `-P urllib3`: only it (and what it forces) moves;
5. `-P certifi==VER`: it moves to exactly that version;
6. a base whose pin forbids a kept pin (layerlock `--base`, uv `-c`): the
   kept pin is replaced; the base's package is left out of uv's output for
   the comparison, since layerlock never emits it;
7. `-U`: every pin is freed.

After each step the two outputs must pin the same packages at the same
versions. Prints `PASS step`, `FAIL step: details`, then `N passed, M failed`
on a line of its own; exits 1 on any failure. Talks to PyPI; never skips.

    python3 tests/online/lifecycle.py --layerlock target/debug/layerlock [--uv uv]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

OLD = "2023-06-01T00:00:00Z"
LATER = "2024-06-01T00:00:00Z"
TARGET_LL = ["--python-version", "3.12", "--platform", "x86_64-manylinux_2_28"]
TARGET_UV = ["--python-version", "3.12", "--python-platform", "x86_64-manylinux_2_28"]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        m = PIN.match(line)
        if m:
            out[normalize(m.group(1))] = m.group(2)
    return out


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("UV_EXCLUDE_NEWER", None)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layerlock", required=True)
    parser.add_argument("--uv", default="uv")
    parser.add_argument("--cache-dir", default=None)
    args = parser.parse_args()
    layerlock = str(Path(args.layerlock).resolve())
    uv_bin = args.uv if "/" not in args.uv else str(Path(args.uv).resolve())
    work = Path(tempfile.mkdtemp(prefix="layerlock-lifecycle-"))
    cache = args.cache_dir or str(work / "cache")
    (work / "in.txt").write_text("requests\n")
    (work / "base.txt").write_text("urllib3==1.26.18\n")

    steps = [
        ("1 old cutoff", OLD, [], [], set()),
        ("2 later cutoff keeps every pin", LATER, [], [], set()),
        ("3 a new requirement adds its closure", LATER, [], [], set()),
        ("4 -P urllib3", LATER, ["-P", "urllib3"], ["-P", "urllib3"], set()),
        ("5 -P certifi==2023.11.17", LATER, ["-P", "certifi==2023.11.17"],
         ["-P", "certifi==2023.11.17"], set()),
        ("6 a base forbids a kept pin", LATER, ["--base", "base.txt"], ["-c", "base.txt"],
         {"urllib3"}),
        ("7 -U", LATER, ["-U", "--base", "base.txt"], ["-U", "-c", "base.txt"], {"urllib3"}),
    ]
    passed = failed = 0
    previous: dict[str, str] | None = None
    for name, cutoff, ll_extra, uv_extra, base in steps:
        if name.startswith("3"):
            (work / "in.txt").write_text("requests\nrich\n")
        ll = run([layerlock, "compile", "in.txt", "-o", "ll.txt", "--exclude-newer", cutoff,
                  "--cache-dir", cache, "-q", *TARGET_LL, *ll_extra], work)
        uv = run([uv_bin, "pip", "compile", "in.txt", "-o", "uv.txt", "--exclude-newer", cutoff,
                  "--generate-hashes", "--no-header", "--quiet", *TARGET_UV, *uv_extra], work)
        if ll.returncode != 0 or uv.returncode != 0:
            failed += 1
            print(f"FAIL {name}: layerlock exit {ll.returncode} {ll.stderr.strip()[-400:]!r}; "
                  f"uv exit {uv.returncode} {uv.stderr.strip()[-400:]!r}")
            continue
        mine = pins(work / "ll.txt")
        theirs = {k: v for k, v in pins(work / "uv.txt").items() if k not in base}
        why = ""
        if mine != theirs:
            keys = sorted(set(mine) | set(theirs))
            why = ", ".join(f"{k}: {mine.get(k)} vs uv {theirs.get(k)}"
                            for k in keys if mine.get(k) != theirs.get(k))
        elif name.startswith("2") and previous is not None and mine != previous:
            why = f"pins moved: {previous} -> {mine}"
        elif name.startswith("4") and previous is not None:
            moved = {k for k in mine if previous.get(k) != mine[k]}
            if not moved <= {"urllib3"}:
                why = f"more than urllib3 moved: {sorted(moved)}"
        if why:
            failed += 1
            print(f"FAIL {name}: {why}")
        else:
            passed += 1
            print(f"PASS {name}: {len(mine)} pins agree")
        previous = mine
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
