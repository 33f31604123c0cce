#!/usr/bin/env python3
"""Re-run the real-inputs measurement: layerlock compile against uv pip compile.

Every folder beside this script with a case.json is one case: in.txt (the
project's requirements, as taken from its repository, with the lines noted
in case.json stripped), base.txt when the case has a base lock, and the
target (python, platform). For each case, one at a time:

    layerlock compile in.txt [--base base.txt] --python-version V --platform P \
        --exclude-newer TS --timeout 60 -o layerlock.txt
    uv pip compile in.txt [-c base-for-uv.txt] --python-version V \
        --python-platform P --exclude-newer TS --generate-hashes --no-header \
        -o uv.txt

Both are timed (wall clock) and capped at --cap seconds. uv's output is then
cut down to what layerlock emits (every package the base pins is dropped,
as tests/online/differential.py does; a base pin behind a marker is dropped
only where the marker holds on the target), and the two are compared with
that script's comparison: the same names (PEP 503), versions and sha256
sets.

    python3 bench/real-inputs/run.py --layerlock PATH --uv PATH \
        [--work DIR] [--cache-dir DIR] [-k CASE]... [--exclude-newer TS] [--cases DIR]

Prints one Markdown table row per case as it finishes, then the table and
the counts; writes results.json into --work. Python 3.11 standard library
only (plus the packaging copy pip vendors, for markers, as the differential
suite does).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests" / "online"))
from differential import base_pins, compare_pins, parse_lock  # noqa: E402

EXCLUDE_NEWER = "2026-11-15T00:00:00Z"

# layerlock's refusals, by the reason its error gives (first match wins).
LL_REASONS = [
    ("other: base not pinned", re.compile(r"base entries are not pinned", re.I)),
    ("other: file clash", re.compile(r"without writing over files", re.I)),
    ("dynamic sdist metadata", re.compile(r"dependencies are dynamic|does not say its dependencies statically", re.I)),
    ("setup.py reader", re.compile(r"setup\.py|setup\.cfg", re.I)),
    ("requires-python", re.compile(r"requires[-_ ]python|python_requires", re.I)),
    ("unreadable Requires-Dist", re.compile(r"Requires-Dist layerlock cannot read", re.I)),
    ("no wheel for target", re.compile(r"no wheel|only-binary", re.I)),
    ("network/timeout", re.compile(r"timed? ?out|connection|network|dns|tls|HTTP (5\d\d|4\d\d)|status 5\d\d", re.I)),
]


def reason(stderr: str) -> str:
    for name, rx in LL_REASONS:
        if rx.search(stderr):
            return name
    return "other"


def first_error_line(stderr: str) -> str:
    """The first line that says what went wrong (skipping progress lines)."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if re.match(r"^(error|×|ERROR|Error)", l) or "error:" in l.lower():
            return l
    return lines[-1] if lines else ""


def uv_error(stderr: str) -> str:
    lines = [l.strip(" │╰─▶×") .strip() for l in stderr.splitlines() if l.strip()]
    lines = [l for l in lines if l and not l.startswith(("Resolved", "warning:"))]
    return " / ".join(lines[:3])[:300]


def run(cmd: list[str], cwd: Path, cap: int, env: dict[str, str]) -> dict:
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=cap)
        code, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        code, err = 124, f"timed out after {cap}s (harness cap)"
    return {"code": code, "stderr": err, "seconds": round(time.monotonic() - start, 1)}


def uv_view_of_base(base: Path, case: dict, args, env, cdir: Path) -> tuple[Path, set[str]]:
    """uv's -c file (base pins without local labels) and the names to drop
    from uv's output: unmarked pins, and marked ones whose marker holds on
    the target (asked of uv, with --no-deps)."""
    names, marked, lines = set(), [], []
    for norm, line, has_marker in base_pins(base):
        lines.append(line)
        if has_marker:
            marked.append(line)
        else:
            names.add(norm)
    cfile = cdir / "uv-constraints.txt"
    cfile.write_text("\n".join(lines) + "\n")
    if marked:
        src = cdir / "base-markers.in"
        src.write_text("\n".join(marked) + "\n")
        cmd = [args.uv, "pip", "compile", str(src), "--no-deps", "--no-header", "--no-annotate",
               "--python-platform", case["platform"], "--python-version", case["python"],
               "--exclude-newer", args.exclude_newer, "--cache-dir", str(args.cache_dir / "uv"), "--quiet"]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode == 0:
            names |= set(parse_lock(proc.stdout))
        else:
            print(f"  warning: uv could not evaluate the base's markers: {uv_error(proc.stderr)}",
                  file=sys.stderr)
    return cfile, names


def run_case(name: str, cdir_in: Path, args, env) -> dict:
    case = json.loads((cdir_in / "case.json").read_text())
    cdir = args.work / name
    cdir.mkdir(parents=True, exist_ok=True)
    base = cdir_in / "base.txt"
    has_base = base.is_file()
    ll_out, uv_out = cdir / "layerlock.txt", cdir / "uv.txt"
    for f in (ll_out, uv_out):
        f.unlink(missing_ok=True)

    ll_cmd = [args.layerlock, "compile", "in.txt"]
    if has_base:
        ll_cmd += ["--base", "base.txt"]
    ll_cmd += ["--python-version", case["python"], "--platform", case["platform"],
               "--exclude-newer", args.exclude_newer, "--timeout", "60", "--quiet",
               "--cache-dir", str(args.cache_dir / "layerlock"), "-o", str(ll_out)]
    skip: set[str] = set()
    uv_cmd = [args.uv, "pip", "compile", "in.txt"]
    if has_base:
        cfile, skip = uv_view_of_base(base, case, args, env, cdir)
        uv_cmd += ["-c", str(cfile)]
    uv_cmd += ["--python-version", case["python"], "--python-platform", case["platform"],
               "--exclude-newer", args.exclude_newer, "--generate-hashes", "--no-header",
               "--index-url", "https://pypi.org/simple",
               "--cache-dir", str(args.cache_dir / "uv"), "-o", str(uv_out)]

    ll = run(ll_cmd, cdir_in, args.cap, env)
    uv = run(uv_cmd, cdir_in, args.cap, env)
    (cdir / "layerlock.stderr").write_text(ll["stderr"])
    (cdir / "uv.stderr").write_text(uv["stderr"])

    res = {"case": name, "repo": case["repo"], "commit": case["commit"][:12], "path": case["path"],
           "base": case.get("base"), "python": case["python"], "platform": case["platform"],
           "ll_seconds": ll["seconds"], "uv_seconds": uv["seconds"], "ll_code": ll["code"],
           "uv_code": uv["code"]}
    ll_ok = ll["code"] == 0 and ll_out.exists()
    uv_ok = uv["code"] == 0 and uv_out.exists()
    if ll_ok:
        mine = parse_lock(ll_out.read_text())
        res["ll"] = f"{len(mine)} pkgs"
    else:
        res["ll"] = "refused"
        res["ll_error"] = first_error_line(ll["stderr"])[:300]
        res["ll_reason"] = "network/timeout" if ll["code"] == 124 else reason(ll["stderr"])
    if uv_ok:
        theirs = {k: v for k, v in parse_lock(uv_out.read_text()).items() if k not in skip}
        res["uv"] = f"{len(theirs)} pkgs"
    else:
        res["uv"] = "refused"
        res["uv_error"] = uv_error(uv["stderr"])

    if ll_ok and uv_ok:
        diffs, _ = compare_pins(name, mine, theirs, skip)
        res["verdict"] = "different" if diffs else "identical"
        res["diffs"] = diffs
    elif ll_ok:
        res["verdict"] = "refused by uv"
    elif uv_ok:
        res["verdict"] = "refused by layerlock"
    else:
        res["verdict"] = "both refuse"
    return res


def row(r: dict) -> str:
    ratio = f"{r['ll_seconds'] / r['uv_seconds']:.1f}x" if r["uv_seconds"] else "-"
    ll = r["ll"] if r["ll"] != "refused" else f"refused ({r['ll_reason']})"
    path = r["path"] if isinstance(r["path"], str) else " + ".join(p.rsplit("/", 1)[-1] for p in r["path"])
    base = f" (base {r['base']})" if r.get("base") else ""
    verdict = r["verdict"]
    if r["verdict"] == "different":
        verdict += f": {len(r['diffs'])} diff(s)"
    return (f"| {r['case']} | {r['repo']}@{r['commit']} | {path}{base} | {r['python']} {r['platform']} "
            f"| {ll} | {r['uv']} | {verdict} | {r['ll_seconds']}s / {r['uv_seconds']}s | {ratio} |")


HEADER = ("| case | repo@commit | path | target | layerlock | uv | verdict | time ll / uv | ratio |\n"
          "|---|---|---|---|---|---|---|---|---|")


def counts(results: list[dict]) -> str:
    out = {}
    for r in results:
        out[r["verdict"]] = out.get(r["verdict"], 0) + 1
    lines = [f"{k}: {v}" for k, v in sorted(out.items())]
    reasons = {}
    for r in results:
        if r.get("ll_reason"):
            reasons[r["ll_reason"]] = reasons.get(r["ll_reason"], 0) + 1
    if reasons:
        lines.append("layerlock refusals by reason: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layerlock", required=True)
    ap.add_argument("--uv", required=True)
    ap.add_argument("--work", type=Path, default=None, help="outputs and results.json (default: a temp dir)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="caches of both tools (default: under --work)")
    ap.add_argument("-k", action="append", default=[], help="run only this case (repeatable)")
    ap.add_argument("--exclude-newer", default=EXCLUDE_NEWER)
    ap.add_argument("--cap", type=int, default=600, help="seconds per tool per case")
    ap.add_argument("--cases", type=Path, default=HERE, help="folder of case folders (default: beside this script)")
    args = ap.parse_args()
    args.layerlock = str(Path(args.layerlock).resolve())
    args.uv = str(Path(args.uv).resolve()) if os.sep in args.uv else args.uv
    args.work = (args.work or Path(tempfile.mkdtemp(prefix="real-inputs-"))).resolve()
    args.cache_dir = (args.cache_dir or args.work / "cache").resolve()
    env = dict(os.environ)
    env["UV_PYTHON_DOWNLOADS"] = "never"
    for var in ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "LAYERLOCK_INDEX_URL"):
        env.pop(var, None)

    cases = sorted(p.parent for p in args.cases.resolve().glob("*/case.json"))
    if args.k:
        cases = [c for c in cases if c.name in args.k]
    results = []
    print(HEADER, flush=True)
    for cdir in cases:
        r = run_case(cdir.name, cdir, args, env)
        results.append(r)
        print(row(r), flush=True)
        (args.work / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print()
    print(HEADER)
    for r in results:
        print(row(r))
    print()
    print(counts(results))
    for r in results:
        if r["verdict"] == "different":
            print(f"\n{r['case']}: " + "; ".join(r["diffs"]))
        if r.get("ll_error"):
            print(f"\n{r['case']} layerlock: {r['ll_error']}")
        if r.get("uv_error"):
            print(f"\n{r['case']} uv: {r['uv_error']}")
    print(f"\nresults: {args.work / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
