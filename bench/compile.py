#!/usr/bin/env python3
"""Side-by-side benchmark: layerlock compile vs uv pip compile vs pip-compile.

The workload is vLLM's kv-connectors layer (requirements/kv_connectors.txt@4742f9e)
on top of its CUDA test lock (requirements/test/cuda.txt), for Python 3.12 on
x86_64-manylinux_2_28, with a fixed --exclude-newer. See bench/README.md.

    python3 bench/compile.py [--layerlock target/release/layerlock] [--uv uv]
        [--pip-compile PATH] [--cold-runs 3] [--warm-runs 5] [--skip-pip-compile]

Writes bench/results/compile-<YYYY-MM-DD>.json and prints a table. The targets
are judged and reported, never asserted: the exit code is 0 unless a tool
failed. Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VLLM_REQ = REPO.parent / "shared" / "corpus" / "vllm" / "requirements"

INPUT = "kv_connectors.txt@4742f9e"
BASE = "test/cuda.txt"
PYTHON = "3.12"
PLATFORM = "x86_64-manylinux_2_28"
OWNED = ["nvidia-nccl-cu13"]
EXCLUDE_NEWER = "2026-11-01T00:00:00Z"

TARGETS = {
    "cold_ratio_max": 1.0,  # layerlock cold <= 1.0x uv cold
    "warm_offline_ratio_max": 0.5,  # layerlock --offline <= 0.5x uv --offline
    "layerlock_rss_mib_max": 150.0,  # layerlock peak RSS < 150 MiB
}


class ToolFailed(Exception):
    pass


def measure(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[float, float]:
    """Run cmd; return (wall seconds, peak RSS in MiB) of the child."""
    with open(log, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=err, stderr=err
        )
        # wait4 gives the rusage of this child (and of the children it waited
        # for); ru_maxrss is in KiB on Linux.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-6:]
        raise ToolFailed(f"{cmd[0]} exited {proc.returncode}:\n  " + "\n  ".join(tail))
    return wall, usage.ru_maxrss / 1024.0


def strip_local_labels(src: Path, dst: Path) -> None:
    """The base as uv and pip-compile get it: `torch==2.11.0+cu130` -> `torch==2.11.0`."""
    out = []
    for line in src.read_text().splitlines():
        out.append(re.sub(r"^([A-Za-z0-9][A-Za-z0-9._-]*==[^\s;+#]+)\+[A-Za-z0-9.]+", r"\1", line))
    dst.write_text("\n".join(out) + "\n")


def version_of(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return (proc.stdout or proc.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return f"unknown ({exc})"


def ensure_pip_compile(venv: Path) -> Path:
    """A pip-tools install with a current pip (for PEP 658 metadata and
    --uploaded-prior-to); created once and reused."""
    exe = venv / "bin" / "pip-compile"
    if exe.exists():
        return exe
    print(f"installing pip-tools into {venv} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip", "pip-tools"],
        check=True,
    )
    return exe


def pip_supports_uploaded_prior_to(pip_compile: Path) -> bool:
    python = pip_compile.parent / "python"
    if not python.exists():
        return False
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "--help"], capture_output=True, text=True
    )
    return "--uploaded-prior-to" in proc.stdout


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layerlock", default=str(REPO / "target" / "release" / "layerlock"))
    parser.add_argument("--uv", default="uv")
    parser.add_argument(
        "--pip-compile",
        help="pip-compile to use (default: a pip-tools venv under --tools-dir, created if missing)",
    )
    parser.add_argument(
        "--tools-dir",
        type=Path,
        default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "layerlock-bench",
        help="where the pip-tools venv lives",
    )
    parser.add_argument("--skip-pip-compile", action="store_true")
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--results", type=Path, default=HERE / "results")
    args = parser.parse_args()

    layerlock = Path(shutil.which(args.layerlock) or args.layerlock).resolve()
    uv = shutil.which(args.uv)
    if not layerlock.is_file():
        print(f"error: no layerlock binary at {layerlock}; build it with "
              "`cargo build --release -p layerlock`", file=sys.stderr)
        return 2
    if uv is None:
        print("error: uv not found; `python3 -m pip install uv`", file=sys.stderr)
        return 2
    if not (VLLM_REQ / INPUT).is_file():
        print(f"error: the vLLM corpus is not at {VLLM_REQ}", file=sys.stderr)
        return 2
    pip_compile = None
    if not args.skip_pip_compile:
        if args.pip_compile:
            pip_compile = Path(shutil.which(args.pip_compile) or args.pip_compile)
        else:
            pip_compile = ensure_pip_compile(args.tools_dir / "piptools-venv")

    env = dict(os.environ)
    # uv would otherwise spend seconds failing to download a managed CPython
    # for --python-version (only PyPI is reachable); nothing here needs one.
    env["UV_PYTHON_DOWNLOADS"] = "never"
    # The machine points pip at an (empty) wheel directory; keep pip on PyPI alone.
    env.pop("PIP_FIND_LINKS", None)
    for var in ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "LAYERLOCK_INDEX_URL", "UV_CACHE_DIR",
                "LAYERLOCK_CACHE_DIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        env.pop(var, None)

    scratch = Path(tempfile.mkdtemp(prefix="layerlock-bench-"))
    base_nolocal = scratch / "cuda-nolocal.txt"
    strip_local_labels(VLLM_REQ / BASE, base_nolocal)
    counter = iter(range(10**6))

    def fresh(name: str) -> Path:
        path = scratch / f"{name}-{next(counter)}"
        path.mkdir(parents=True)
        return path

    def layerlock_cmd(cache: Path, out: Path, offline: bool = False) -> list[str]:
        cmd = [str(layerlock), "compile", INPUT, "--base", BASE, "--python-version", PYTHON,
               "--platform", PLATFORM, "--exclude-newer", EXCLUDE_NEWER, "--quiet",
               "--cache-dir", str(cache), "-o", str(out)]
        for o in OWNED:
            cmd += ["--owned", o]
        return cmd + (["--offline"] if offline else [])

    def uv_cmd(cache: Path, out: Path, offline: bool = False) -> list[str]:
        cmd = [uv, "pip", "compile", INPUT, "-c", str(base_nolocal),
               "--python-platform", PLATFORM, "--python-version", PYTHON,
               "--exclude-newer", EXCLUDE_NEWER, "--generate-hashes", "--no-header",
               "--quiet", "--cache-dir", str(cache), "-o", str(out)]
        return cmd + (["--offline"] if offline else [])

    pip_prior = pip_compile is not None and pip_supports_uploaded_prior_to(pip_compile)

    def pip_compile_cmd(cache: Path, out: Path) -> list[str]:
        cmd = [str(pip_compile), INPUT, "-c", str(base_nolocal), "--generate-hashes",
               "--no-header", "--strip-extras", "--quiet", "--cache-dir", str(cache / "pip-tools"),
               "-o", str(out)]
        pip_args = f"--cache-dir {cache / 'pip'}"
        if pip_prior:
            pip_args += f" --uploaded-prior-to {EXCLUDE_NEWER}"
        return cmd + ["--pip-args", pip_args]

    rows: dict[str, dict] = {}
    failures: list[str] = []

    def series(label: str, runs: int, make, prepare=None, extra_env=None) -> None:
        walls, rsses = [], []
        try:
            for i in range(runs):
                work = fresh(label)
                cache, out = (prepare(work) if prepare else (work / "cache", work / "out.txt"))
                run_env = dict(env, **(extra_env(work) if extra_env else {}))
                wall, rss = measure(make(cache, out), VLLM_REQ, run_env, work / "log")
                walls.append(wall)
                rsses.append(rss)
                print(f"  {label} run {i + 1}/{runs}: {wall:.2f} s, {rss:.1f} MiB", flush=True)
        except ToolFailed as exc:
            failures.append(f"{label}: {exc}")
            print(f"  {label} FAILED: {exc}", flush=True)
        rows[label] = {
            "runs_s": [round(w, 4) for w in walls],
            "median_s": round(median(walls), 4) if walls else None,
            "max_rss_mib": round(max(rsses), 1) if rsses else None,
        }

    print(f"benchmark: {INPUT} on {BASE}, Python {PYTHON} {PLATFORM}, "
          f"exclude-newer {EXCLUDE_NEWER}; scratch {scratch}", flush=True)

    # Cold: a fresh, empty cache directory for every run.
    print("cold (fresh empty cache each run):", flush=True)
    series("layerlock cold", args.cold_runs, layerlock_cmd)
    series("uv cold", args.cold_runs, uv_cmd)
    if pip_compile is not None:
        # pip-tools' own cache and pip's HTTP cache both start empty; XDG and
        # PIP_CACHE_DIR point into the run's directory too, so nothing warm
        # under ~/.cache can be used.
        series(
            "pip-compile cold (host)", args.cold_runs, pip_compile_cmd,
            extra_env=lambda w: {"PIP_CACHE_DIR": str(w / "cache" / "pip"),
                                 "XDG_CACHE_HOME": str(w / "xdg")},
        )

    # Warm offline: one online run fills a cache, then --offline runs reuse it.
    print("warm, --offline (after one online warm-up run):", flush=True)
    warm = {"layerlock": fresh("layerlock-warm") / "cache", "uv": fresh("uv-warm") / "cache"}
    try:
        measure(layerlock_cmd(warm["layerlock"], scratch / "ll-warmup.txt"), VLLM_REQ, env,
                scratch / "ll-warmup.log")
        measure(uv_cmd(warm["uv"], scratch / "uv-warmup.txt"), VLLM_REQ, env,
                scratch / "uv-warmup.log")
    except ToolFailed as exc:
        failures.append(f"warm-up: {exc}")
    series("layerlock --offline", args.warm_runs,
           lambda c, o: layerlock_cmd(c, o, offline=True),
           prepare=lambda w: (warm["layerlock"], w / "out.txt"))
    series("uv --offline", args.warm_runs,
           lambda c, o: uv_cmd(c, o, offline=True),
           prepare=lambda w: (warm["uv"], w / "out.txt"))

    def ratio(a: str, b: str) -> float | None:
        x, y = rows.get(a, {}).get("median_s"), rows.get(b, {}).get("median_s")
        return round(x / y, 3) if x and y else None

    cold_ratio = ratio("layerlock cold", "uv cold")
    warm_ratio = ratio("layerlock --offline", "uv --offline")
    ll_rss = max(
        (rows[k]["max_rss_mib"] for k in ("layerlock cold", "layerlock --offline")
         if rows.get(k, {}).get("max_rss_mib") is not None),
        default=None,
    )
    uv_rss = max(
        (rows[k]["max_rss_mib"] for k in ("uv cold", "uv --offline")
         if rows.get(k, {}).get("max_rss_mib") is not None),
        default=None,
    )
    judged = {
        "cold_le_1.0x_uv": None if cold_ratio is None else cold_ratio <= TARGETS["cold_ratio_max"],
        "warm_offline_le_0.5x_uv": None if warm_ratio is None
        else warm_ratio <= TARGETS["warm_offline_ratio_max"],
        "layerlock_rss_lt_150MiB": None if ll_rss is None
        else ll_rss < TARGETS["layerlock_rss_mib_max"],
    }

    # Table.
    print()
    print(f"{'tool / mode':<28} {'median s':>9} {'runs (s)':<34} {'max RSS MiB':>11}")
    print("-" * 86)
    for label, row in rows.items():
        runs = ", ".join(f"{r:.2f}" for r in row["runs_s"]) or "failed"
        med = f"{row['median_s']:.2f}" if row["median_s"] is not None else "-"
        rss = f"{row['max_rss_mib']:.1f}" if row["max_rss_mib"] is not None else "-"
        print(f"{label:<28} {med:>9} {runs:<34} {rss:>11}")
    print()

    def show(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}x"

    def verdict(ok: bool | None) -> str:
        return "n/a" if ok is None else ("PASS" if ok else "MISS")

    print(f"cold layerlock/uv:          {show(cold_ratio):>8}  target <= 1.0x  {verdict(judged['cold_le_1.0x_uv'])}")
    print(f"warm offline layerlock/uv:  {show(warm_ratio):>8}  target <= 0.5x  {verdict(judged['warm_offline_le_0.5x_uv'])}")
    rss_text = "n/a" if ll_rss is None else f"{ll_rss:.1f} MiB"
    print(f"layerlock peak RSS:         {rss_text:>8}  target < 150 MiB  {verdict(judged['layerlock_rss_lt_150MiB'])}")
    if uv_rss and ll_rss:
        print(f"peak RSS layerlock/uv:      {ll_rss / uv_rss:.3f}x")
    if "pip-compile cold (host)" in rows and rows["pip-compile cold (host)"]["median_s"]:
        print(f"cold layerlock/pip-compile: {show(ratio('layerlock cold', 'pip-compile cold (host)'))}"
              f"   (pip-compile resolves for the host: {platform.python_version()} "
              f"{platform.machine()} Linux, no platform targeting)")
    for f in failures:
        print(f"FAILED {f}")

    now = dt.datetime.now(dt.timezone.utc)
    git_rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                             capture_output=True, text=True).stdout.strip()
    result = {
        "date": now.isoformat(timespec="seconds"),
        "workload": {
            "input": f"shared/corpus/vllm/requirements/{INPUT}",
            "base": f"shared/corpus/vllm/requirements/{BASE}",
            "python": PYTHON, "platform": PLATFORM, "owned": OWNED,
            "exclude_newer": EXCLUDE_NEWER,
        },
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "host_python": platform.python_version()},
        "tools": {
            "layerlock": {"path": os.path.relpath(layerlock, REPO) if str(layerlock).startswith(str(REPO)) else layerlock.name, "version": version_of([str(layerlock), "--version"]),
                          "git": git_rev},
            "uv": version_of([uv, "--version"]),
            "pip-compile": None if pip_compile is None else {
                "version": version_of([str(pip_compile), "--version"]),
                # Only "pip X.Y": the rest of pip's answer is a local path.
                "pip": " ".join(version_of([str(pip_compile.parent / "python"), "-m", "pip", "--version"]).split()[:2]),
                "uploaded_prior_to": pip_prior,
                "note": "no platform targeting: resolves for the host interpreter and platform",
            },
        },
        "method": {
            "cold": "fresh empty cache dir per run (layerlock --cache-dir, uv --cache-dir; "
                    "pip-compile --cache-dir plus pip --cache-dir, PIP_CACHE_DIR, XDG_CACHE_HOME)",
            "warm_offline": "one online run fills the cache, then --offline runs",
            "output": "a new output path per run (uv and pip-compile read an existing one as preferences)",
            "rss": "ru_maxrss of the child from os.wait4",
            "uv_env": "UV_PYTHON_DOWNLOADS=never",
        },
        "runs": rows,
        "ratios": {"cold_layerlock_over_uv": cold_ratio,
                   "warm_offline_layerlock_over_uv": warm_ratio,
                   "cold_layerlock_over_pip_compile": ratio("layerlock cold", "pip-compile cold (host)")},
        "peak_rss_mib": {"layerlock": ll_rss, "uv": uv_rss},
        "targets": TARGETS,
        "judged": judged,
        "failures": failures,
    }
    args.results.mkdir(parents=True, exist_ok=True)
    out = args.results / f"compile-{now.date().isoformat()}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
