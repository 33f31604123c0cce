#!/usr/bin/env python3
"""Side-by-side benchmark: layerlock compile vs uv pip compile (vs pip-compile).

Five workloads (--workload, default all), for Python 3.12 on
x86_64-manylinux_2_28 unless said, with a fixed --exclude-newer. See
bench/README.md.

  kv          vLLM's kv-connectors layer (requirements/kv_connectors.txt@4742f9e)
              on its CUDA test lock (requirements/test/cuda.txt); pip-compile too
  big         bench/workloads/big.in, ten frameworks (158 new packages) on the
              same CUDA test lock
  popular     bench/workloads/popular.in, 150 popular projects, no base
  kv-one      the bundled example (examples/vllm-kv), one target
  kv-two      the bundled example for x86_64 and aarch64 (Python 3.12)
  kv-targets  the bundled example for four targets in one lock: x86_64 and
              aarch64 x Python 3.12 and 3.13; uv runs once per target, one
              after the other, and its time is their sum

    python3 bench/compile.py [--layerlock target/release/layerlock] [--uv uv]
        [--workload kv|big|popular|all] [--pip-compile PATH]
        [--cold-runs 3] [--warm-runs 5] [--skip-pip-compile]

For each workload it times cold runs (a fresh cache each) and warm --offline
runs, records peak RSS, the size of each tool's cache after the warm-up, and
whether layerlock's and uv's pins and hashes agree. When layerlock's
`compile` takes --stats, the median cold run's statistics are kept too.

Writes bench/results/compile-<YYYY-MM-DD>.json and prints tables. The targets
are judged and reported, never asserted: the exit code is 0 unless a tool
failed. Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shlex
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
VLLM_REQ = REPO.parent / "shared" / "corpus" / "vllm" / "requirements"
WORKLOADS_DIR = HERE / "workloads"

PYTHON = "3.12"
PLATFORM = "x86_64-manylinux_2_28"

# The targets of bench/README.md, judged for every workload.
TARGETS = {
    "cold_ratio_max": 1.0,  # layerlock cold <= 1.0x uv cold
    "warm_offline_ratio_max": 0.5,  # layerlock --offline <= 0.5x uv --offline
    "layerlock_rss_mib_max": 150.0,  # layerlock peak RSS < 150 MiB
}

# A target: (key, what, metric, operator, bound). The bound is a number or
# the name of another metric (uv's figure). Metrics are those of `metrics()`.
Target = tuple[str, str, str, str, float | str]

GENERAL_TARGETS: list[Target] = [
    ("cold_le_1.0x_uv", "cold layerlock/uv", "cold_ratio", "<=", TARGETS["cold_ratio_max"]),
    ("warm_offline_le_0.5x_uv", "warm offline layerlock/uv", "warm_ratio", "<=",
     TARGETS["warm_offline_ratio_max"]),
    ("layerlock_rss_lt_150MiB", "layerlock peak RSS", "ll_rss", "<", TARGETS["layerlock_rss_mib_max"]),
]

# Issue 14's targets, per workload.
ISSUE_TARGETS: dict[str, list[Target]] = {
    "kv": [
        ("cold_le_0.1x_uv", "cold layerlock/uv", "cold_ratio", "<=", 0.1),
    ],
    "big": [
        ("cold_le_0.15x_uv", "cold layerlock/uv", "cold_ratio", "<=", 0.15),
        ("cold_lt_1.2s", "cold layerlock", "ll_cold_s", "<", 1.2),
        ("warm_offline_le_0.1x_uv", "warm offline layerlock/uv", "warm_ratio", "<=", 0.1),
        ("warm_offline_lt_60ms", "warm offline layerlock", "ll_warm_s", "<", 0.060),
        ("warm_offline_rss_lt_40MiB", "warm offline layerlock RSS", "ll_warm_rss", "<", 40.0),
    ],
    "popular": [
        ("warm_offline_le_0.3x_uv", "warm offline layerlock/uv", "warm_ratio", "<=", 0.3),
        ("warm_offline_rss_le_uv", "warm offline layerlock RSS", "ll_warm_rss", "<=", "uv_warm_rss"),
        ("cold_rss_le_uv", "cold layerlock RSS", "ll_cold_rss", "<=", "uv_cold_rss"),
    ],
}

UNITS = {"cold_ratio": "x", "warm_ratio": "x", "ll_cold_s": "s", "ll_warm_s": "s"}  # else MiB


@dataclasses.dataclass
class Workload:
    name: str
    title: str
    cwd: Path
    input: str  # relative to cwd
    base: str | None  # relative to cwd
    owned: list[str]
    exclude_newer: str
    pip_compile: bool  # also time pip-compile (kv only)
    # (python, platform) each; one lock for all of them.
    targets: list[tuple[str, str]] = dataclasses.field(
        default_factory=lambda: [(PYTHON, PLATFORM)]
    )
    # --override files for every tool (absolute), and the image's packages
    # layerlock replaces on purpose: its file check refuses the vLLM
    # kv-connectors layer otherwise (nixl-cu12 beside nixl-cu13, cupy-cuda13x
    # over the image's cupy-cuda12x).
    overrides: list[str] = dataclasses.field(default_factory=list)
    replace: list[str] = dataclasses.field(default_factory=list)


CUDA13 = dict(
    overrides=[str(REPO / "tests" / "online" / "cases" / "overrides" / "cuda13.txt")],
    replace=["cupy-cuda12x"],
)

WORKLOADS = {
    "kv": Workload(
        name="kv",
        title="kv_connectors.txt@4742f9e on test/cuda.txt",
        cwd=VLLM_REQ,
        input="kv_connectors.txt@4742f9e",
        base="test/cuda.txt",
        owned=["nvidia-nccl-cu13"],
        exclude_newer="2026-11-01T00:00:00Z",
        pip_compile=True,
        **CUDA13,
    ),
    "big": Workload(
        name="big",
        title="workloads/big.in (ten frameworks) on test/cuda.txt",
        cwd=VLLM_REQ,
        input=str(WORKLOADS_DIR / "big.in"),
        base="test/cuda.txt",
        owned=["nvidia-nccl-cu13"],
        exclude_newer="2026-11-20T00:00:00Z",
        pip_compile=False,
    ),
    "popular": Workload(
        name="popular",
        title="workloads/popular.in (150 popular projects), no base",
        cwd=WORKLOADS_DIR,
        input="popular.in",
        base=None,
        owned=[],
        exclude_newer="2026-11-20T00:00:00Z",
        pip_compile=False,
    ),
}

# The bundled example, for one target, two and four.
KV_ONE = Workload(
    name="kv-one",
    title="examples/vllm-kv (kv_connectors.txt on cuda.txt), one target",
    cwd=REPO / "examples" / "vllm-kv",
    input="kv_connectors.txt",
    base="cuda.txt",
    owned=["nvidia-nccl-cu13"],
    exclude_newer="2026-11-01T00:00:00Z",
    pip_compile=False,
    **CUDA13,
)
WORKLOADS["kv-one"] = KV_ONE
WORKLOADS["kv-two"] = dataclasses.replace(
    KV_ONE,
    name="kv-two",
    title="examples/vllm-kv for x86_64 and aarch64 (Python 3.12), one lock",
    targets=[("3.12", "x86_64-manylinux_2_28"), ("3.12", "aarch64-manylinux_2_28")],
)
WORKLOADS["kv-targets"] = dataclasses.replace(
    KV_ONE,
    name="kv-targets",
    title="examples/vllm-kv for x86_64 and aarch64 x Python 3.12 and 3.13, one lock",
    targets=[(py, plat) for plat in ("x86_64-manylinux_2_28", "aarch64-manylinux_2_28")
             for py in ("3.12", "3.13")],
)

# Issue 28: several targets cost little more than one (they share pages and
# metadata), and stay as far ahead of uv's per-target runs as one target is.
TARGETS_OVER_ONE_MAX = 1.3


class ToolFailed(Exception):
    pass


# GNU time reports its child's peak RSS. Read from os.wait4 instead, a child
# started by this script starts from the script's own memory (vfork shares
# it, fork copies its counters), so ru_maxrss never reads below the
# interpreter's ~37 MiB: small figures would all look alike.
GNU_TIME = Path("/usr/bin/time")


def measure(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[float, float]:
    """Run cmd; return (wall seconds, peak RSS in MiB) of the child."""
    rss_file = log.with_suffix(".rss")
    timed = GNU_TIME.is_file()
    if timed:
        cmd = [str(GNU_TIME), "-f", "%M", "-o", str(rss_file), *cmd]
    with open(log, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=err, stderr=err
        )
        # Without GNU time: wait4 gives the rusage of this child (and of the
        # children it waited for); ru_maxrss is in KiB on Linux.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-6:]
        raise ToolFailed(f"{cmd[0]} exited {proc.returncode}:\n  " + "\n  ".join(tail))
    if timed:
        lines = rss_file.read_text().strip().splitlines()
        return wall, int(lines[-1]) / 1024.0
    return wall, usage.ru_maxrss / 1024.0


def strip_local_labels(src: Path, dst: Path) -> None:
    """The base as uv and pip-compile get it: `torch==2.11.0+cu130` -> `torch==2.11.0`."""
    out = []
    for line in src.read_text().splitlines():
        out.append(re.sub(r"^([A-Za-z0-9][A-Za-z0-9._-]*==[^\s;+#]+)\+[A-Za-z0-9.]+", r"\1", line))
    dst.write_text("\n".join(out) + "\n")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*([^\s;\\#]+)")
HASH = re.compile(r"--hash[=\s]+sha256:([0-9a-fA-F]{64})")


def parse_pins(path: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """A requirements lock as {normalised name: (version, sha256 set)}."""
    pins: dict[str, tuple[str, frozenset[str]]] = {}
    # Join continuation lines, so a requirement and its --hash options are one line.
    for line in path.read_text().replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        if match:
            hashes = frozenset(h.lower() for h in HASH.findall(line))
            pins[normalize(match.group(1))] = (match.group(2), hashes)
    return pins


def compare_pins(layerlock_out: Path, uv_out: Path, skip: set[str]) -> dict:
    """Agreement of layerlock's and uv's locks on the packages outside `skip`
    (the base's pins and the owned packages, which layerlock never emits)."""
    ll = parse_pins(layerlock_out)
    uv = {n: p for n, p in parse_pins(uv_out).items() if n not in skip}
    agree, differ = [], []
    for name in sorted(set(ll) | set(uv)):
        if name not in uv:
            differ.append({"name": name, "layerlock": ll[name][0], "uv": None, "why": "only layerlock"})
        elif name not in ll:
            differ.append({"name": name, "layerlock": None, "uv": uv[name][0], "why": "only uv"})
        elif ll[name][0] != uv[name][0]:
            differ.append({"name": name, "layerlock": ll[name][0], "uv": uv[name][0], "why": "version"})
        elif ll[name][1] != uv[name][1]:
            differ.append({
                "name": name, "layerlock": ll[name][0], "uv": uv[name][0], "why": "hashes",
                "only_layerlock_hashes": len(ll[name][1] - uv[name][1]),
                "only_uv_hashes": len(uv[name][1] - ll[name][1]),
            })
        else:
            agree.append(name)
    return {
        "layerlock_packages": len(ll),
        "uv_packages": len(uv),
        "agree": len(agree),
        "differ": differ,
    }


def base_names(wl: Workload) -> set[str]:
    names = set(parse_pins(wl.cwd / wl.base)) if wl.base else set()
    return names | {normalize(o.split("==")[0]) for o in wl.owned}


def disk_usage_mib(path: Path) -> float | None:
    """What `du -s` says of a directory, in MiB (hard links counted once)."""
    if not path.exists():
        return None
    seen: set[tuple[int, int]] = set()
    total = 0
    paths = [str(path)]
    for root, dirs, files in os.walk(path):
        paths += [os.path.join(root, n) for n in dirs + files]
    for p in paths:
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return round(total / 2**20, 1)


def supports_stats(layerlock: Path) -> bool:
    """Whether this layerlock's `compile` takes --stats FILE."""
    try:
        proc = subprocess.run([str(layerlock), "compile", "--help"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return re.search(r"(^|\s)--stats\b", proc.stdout) is not None


def read_stats(path: Path | None) -> object | None:
    if path is None:
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


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


def print_requests(stats: object) -> None:
    """The `requests` mapping of layerlock's --stats as a small table. Each
    entry may be a count, {"count": N, "bytes": B} or [count, bytes]."""
    requests = stats.get("requests") if isinstance(stats, dict) else None
    if not isinstance(requests, dict) or not requests:
        return
    print(f"  layerlock --stats, median cold run:\n  {'kind':<28} {'count':>8} {'bytes':>14}")
    for kind, entry in requests.items():
        count = nbytes = None
        if isinstance(entry, dict):
            count = entry.get("count", entry.get("requests"))
            nbytes = entry.get("bytes")
        elif isinstance(entry, (list, tuple)) and len(entry) == 2:
            count, nbytes = entry
        else:
            count = entry
        shown = [("-" if x is None else f"{x:,}" if isinstance(x, int) else str(x)) for x in (count, nbytes)]
        print(f"  {kind:<28} {shown[0]:>8} {shown[1]:>14}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layerlock", default=str(REPO / "target" / "release" / "layerlock"))
    parser.add_argument("--uv", default="uv")
    parser.add_argument("--workload", default="all",
                        help=f"all, or some of {', '.join(WORKLOADS)} (comma-separated)")
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
    parser.add_argument("--skip-pip-compile", action="store_true", help="(pip-compile runs for kv only)")
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--results", type=Path, default=HERE / "results")
    args = parser.parse_args()
    chosen = list(WORKLOADS) if args.workload == "all" else args.workload.split(",")
    unknown = [w for w in chosen if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")

    layerlock = Path(shutil.which(args.layerlock) or args.layerlock).resolve()
    uv = shutil.which(args.uv)
    if not layerlock.is_file():
        print(f"error: no layerlock binary at {layerlock}; build it with "
              "`cargo build --release -p layerlock`", file=sys.stderr)
        return 2
    if uv is None:
        print("error: uv not found; `python3 -m pip install uv`", file=sys.stderr)
        return 2
    for name in chosen:
        wl = WORKLOADS[name]
        missing = [p for p in (wl.input, wl.base) if p and not (wl.cwd / p).is_file()]
        if missing:
            print(f"error: workload {name}: no {', '.join(str(wl.cwd / p) for p in missing)}"
                  + (" (the vLLM corpus)" if wl.cwd == VLLM_REQ else ""), file=sys.stderr)
            return 2
    pip_compile = None
    if not args.skip_pip_compile and any(WORKLOADS[n].pip_compile for n in chosen):
        if args.pip_compile:
            pip_compile = Path(shutil.which(args.pip_compile) or args.pip_compile)
        else:
            pip_compile = ensure_pip_compile(args.tools_dir / "piptools-venv")
    with_stats = supports_stats(layerlock)
    binary_sha = hashlib.sha256(layerlock.read_bytes()).hexdigest()

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
    counter = iter(range(10**6))
    pip_prior = pip_compile is not None and pip_supports_uploaded_prior_to(pip_compile)
    failures: list[str] = []
    results: dict[str, dict] = {}

    print(f"layerlock {'takes' if with_stats else 'does not take'} --stats; scratch {scratch}", flush=True)
    for name in chosen:
        wl = WORKLOADS[name]
        wl_scratch = scratch / name
        wl_scratch.mkdir()
        results[name] = run_workload(wl, wl_scratch, counter, layerlock, uv, pip_compile, pip_prior,
                                     with_stats, env, args, failures)

    for many in ("kv-two", "kv-targets"):
        if "kv-one" in results and many in results:
            results[many]["over_one_target"] = targets_over_one(results["kv-one"], results[many])

    # Side by side, every workload.
    print()
    print(f"{'workload':<9} {'mode':<13} {'layerlock':>10} {'uv':>10} {'ratio':>7} "
          f"{'ll MiB':>7} {'uv MiB':>7}")
    print("-" * 68)
    for name, res in results.items():
        runs = res["runs"]
        for mode, ll_label, uv_label, ratio_key in (
            ("cold", "layerlock cold", "uv cold", "cold_layerlock_over_uv"),
            ("warm offline", "layerlock --offline", "uv --offline", "warm_offline_layerlock_over_uv"),
        ):
            ll, uvr = runs.get(ll_label, {}), runs.get(uv_label, {})
            ratio = res["ratios"][ratio_key]
            print(f"{name:<9} {mode:<13} {fmt_s(ll.get('median_s')):>10} {fmt_s(uvr.get('median_s')):>10} "
                  f"{'-' if ratio is None else f'{ratio:.3f}':>7} {fmt_mib(ll.get('max_rss_mib')):>7} "
                  f"{fmt_mib(uvr.get('max_rss_mib')):>7}")
    print()
    print(f"{'workload':<9} {'ll pkgs':>8} {'uv pkgs':>8} {'agree':>6} {'differ':>7} "
          f"{'ll cache MiB':>13} {'uv cache MiB':>13}")
    print("-" * 70)
    for name, res in results.items():
        ag, cache = res["agreement"], res["cache_mib"]
        if ag is None:
            print(f"{name:<9} {'-':>8} {'-':>8} {'-':>6} {'-':>7} {fmt_mib(cache['layerlock']):>13} "
                  f"{fmt_mib(cache['uv']):>13}")
            continue
        print(f"{name:<9} {ag['layerlock_packages']:>8} {ag['uv_packages']:>8} {ag['agree']:>6} "
              f"{len(ag['differ']):>7} {fmt_mib(cache['layerlock']):>13} {fmt_mib(cache['uv']):>13}")
    for f in failures:
        print(f"FAILED {f}")
    binary_changed = hashlib.sha256(layerlock.read_bytes()).hexdigest() != binary_sha
    if binary_changed:
        print(f"WARNING: {layerlock} changed during the run (rebuilt?): the figures mix two builds")

    now = dt.datetime.now(dt.timezone.utc)
    git_rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                             capture_output=True, text=True).stdout.strip()
    in_repo = str(layerlock).startswith(str(REPO))
    result: dict = {
        "date": now.isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "host_python": platform.python_version()},
        "tools": {
            "layerlock": {"path": os.path.relpath(layerlock, REPO) if in_repo else layerlock.name,
                          "version": _results.version_of([str(layerlock), "--version"]),
                          # The checkout's revision, which need not be the binary's:
                          # the sha256 tells two builds apart.
                          "git": git_rev,
                          "sha256": binary_sha,
                          "changed_during_run": binary_changed,
                          "stats": with_stats},
            "uv": _results.version_of([uv, "--version"]),
            "pip-compile": None if pip_compile is None else {
                "version": _results.version_of([str(pip_compile), "--version"]),
                # Only "pip X.Y": the rest of pip's answer is a local path.
                "pip": " ".join(_results.version_of([str(pip_compile.parent / "python"), "-m", "pip", "--version"]).split()[:2]),
                "uploaded_prior_to": pip_prior,
                "note": "no platform targeting: resolves for the host interpreter and platform",
            },
        },
        "method": {
            "cold": "fresh empty cache dir per run (layerlock --cache-dir, uv --cache-dir; "
                    "pip-compile --cache-dir plus pip --cache-dir, PIP_CACHE_DIR, XDG_CACHE_HOME)",
            "warm_offline": "one online run fills the cache, then --offline runs",
            "output": "a new output path per run (uv and pip-compile read an existing one as preferences)",
            "rss": "GNU time %M of the tool (ru_maxrss from os.wait4 when /usr/bin/time is missing)",
            "uv_env": "UV_PYTHON_DOWNLOADS=never",
            "cache_mib": "du of each tool's cache directory right after the warm-up run",
            "agreement": "name==version and sha256 sets of the first cold run's locks; uv's "
                         "packages the base pins (and owned ones) are left out, as layerlock never emits them",
            "stats": "layerlock --stats of the median cold run, when compile takes --stats",
        },
        "workloads": results,
        "targets": TARGETS,
        "failures": failures,
    }
    if "kv" in results:
        # The keys of the one-workload results, for kv, as before.
        kv = results["kv"]
        result.update({
            "workload": kv["workload"], "runs": kv["runs"], "ratios": kv["ratios"],
            "peak_rss_mib": kv["peak_rss_mib"], "judged": kv["judged"],
        })
    args.results.mkdir(parents=True, exist_ok=True)
    out = args.results / f"compile-{now.date().isoformat()}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failures else 0


def targets_over_one(one: dict, many: dict) -> dict:
    """Several targets in one lock against one target alone: layerlock's
    wall time (cold and warm offline), and whether its lead over uv (whose
    time is the sum of its per-target runs) is what it is for one target."""
    def median_of(res: dict, label: str) -> float | None:
        return res["runs"].get(label, {}).get("median_s")

    out: dict = {"bound": TARGETS_OVER_ONE_MAX}
    print(f"\n== {len(many['workload']['targets'])} targets in one lock against one target")
    for mode, label, ratio_key in (("cold", "layerlock cold", "cold_layerlock_over_uv"),
                                   ("warm_offline", "layerlock --offline",
                                    "warm_offline_layerlock_over_uv")):
        a, b = median_of(many, label), median_of(one, label)
        ratio = round(a / b, 3) if a and b else None
        lead_many, lead_one = many["ratios"][ratio_key], one["ratios"][ratio_key]
        out[mode] = {
            "targets_over_one": ratio,
            "within_bound": None if ratio is None else ratio <= TARGETS_OVER_ONE_MAX,
            "layerlock_over_uv_sum": lead_many,
            "layerlock_over_uv_one_target": lead_one,
            "lead_kept": None if lead_many is None or lead_one is None else lead_many <= lead_one,
        }
        verdict = "n/a" if ratio is None else ("PASS" if ratio <= TARGETS_OVER_ONE_MAX else "MISS")
        print(f"  {mode:<13} {fmt_s(a)} against {fmt_s(b)}: "
              f"{'-' if ratio is None else f'{ratio:.3f}x'} (target <= {TARGETS_OVER_ONE_MAX}x) {verdict}; "
              f"layerlock/uv {lead_many} for all targets, {lead_one} for one")
    return out


def shown_path(path: Path) -> str:
    """A path as the results give it: from the repository's root, or from its
    parent for the corpus beside it (`shared/corpus/...`)."""
    rel = os.path.relpath(path, REPO)
    return rel if not rel.startswith("..") else os.path.relpath(path, REPO.parent)


def fmt_s(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def fmt_mib(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def run_workload(wl: Workload, scratch: Path, counter, layerlock: Path, uv: str,
                 pip_compile: Path | None, pip_prior: bool, with_stats: bool,
                 env: dict[str, str], args, failures: list[str]) -> dict:
    base_nolocal = None
    if wl.base:
        base_nolocal = scratch / "base-nolocal.txt"
        strip_local_labels(wl.cwd / wl.base, base_nolocal)

    def fresh(label: str) -> Path:
        path = scratch / f"{label.replace(' ', '-')}-{next(counter)}"
        path.mkdir(parents=True)
        return path

    def layerlock_cmd(cache: Path, out: Path, offline: bool = False, stats: Path | None = None) -> list[str]:
        cmd = [str(layerlock), "compile", wl.input]
        if wl.base:
            cmd += ["--base", wl.base]
        for python in dict.fromkeys(py for py, _ in wl.targets):
            cmd += ["--python-version", python]
        for plat in dict.fromkeys(plat for _, plat in wl.targets):
            cmd += ["--platform", plat]
        cmd += ["--exclude-newer", wl.exclude_newer, "--quiet", "--cache-dir", str(cache), "-o", str(out)]
        for o in wl.owned:
            cmd += ["--owned", o]
        for path in wl.overrides:
            cmd += ["--override", path]
        for name in wl.replace:
            cmd += ["--replace", name]
        if stats is not None:
            cmd += ["--stats", str(stats)]
        return cmd + (["--offline"] if offline else [])

    def uv_one(cache: Path, out: Path, offline: bool, python: str, plat: str) -> list[str]:
        cmd = [uv, "pip", "compile", wl.input]
        if base_nolocal:
            cmd += ["-c", str(base_nolocal)]
        cmd += ["--python-platform", plat, "--python-version", python,
                "--exclude-newer", wl.exclude_newer, "--generate-hashes", "--no-header",
                "--quiet", "--cache-dir", str(cache), "-o", str(out)]
        for path in wl.overrides:
            cmd += ["--override", path]
        return cmd + (["--offline"] if offline else [])

    def uv_cmd(cache: Path, out: Path, offline: bool = False) -> list[str]:
        if len(wl.targets) == 1:
            return uv_one(cache, out, offline, *wl.targets[0])
        # One run per target, one after the other, in one shell: its wall
        # time is their sum; its peak RSS the largest of theirs.
        runs = [shlex.join(uv_one(cache, out.with_suffix(f".{i}.txt"), offline, py, plat))
                for i, (py, plat) in enumerate(wl.targets)]
        return ["sh", "-c", " && ".join(runs)]

    def pip_compile_cmd(cache: Path, out: Path) -> list[str]:
        cmd = [str(pip_compile), wl.input]
        if base_nolocal:
            cmd += ["-c", str(base_nolocal)]
        cmd += ["--generate-hashes", "--no-header", "--strip-extras", "--quiet",
                "--cache-dir", str(cache / "pip-tools"), "-o", str(out)]
        pip_args = f"--cache-dir {cache / 'pip'}"
        if pip_prior:
            pip_args += f" --uploaded-prior-to {wl.exclude_newer}"
        return cmd + ["--pip-args", pip_args]

    rows: dict[str, dict] = {}
    outputs: dict[str, list[Path]] = {}
    run_stats: dict[str, list[Path | None]] = {}

    def series(label: str, runs: int, make, prepare=None, extra_env=None, stats: bool = False) -> None:
        walls, rsses, outs, stat_paths = [], [], [], []
        try:
            for i in range(runs):
                work = fresh(label)
                cache, out = (prepare(work) if prepare else (work / "cache", work / "out.txt"))
                stat_path = work / "stats.json" if stats else None
                run_env = dict(env, **(extra_env(work) if extra_env else {}))
                cmd = make(cache, out, stat_path) if stats else make(cache, out)
                wall, rss = measure(cmd, wl.cwd, run_env, work / "log")
                walls.append(wall)
                rsses.append(rss)
                outs.append(out)
                stat_paths.append(stat_path)
                print(f"  {label} run {i + 1}/{runs}: {fmt_s(wall)}, {rss:.1f} MiB", flush=True)
        except ToolFailed as exc:
            failures.append(f"{wl.name}: {label}: {exc}")
            print(f"  {label} FAILED: {exc}", flush=True)
        rows[label] = {
            "runs_s": [round(w, 4) for w in walls],
            "median_s": round(median(walls), 4) if walls else None,
            "runs_rss_mib": [round(r, 1) for r in rsses],
            "max_rss_mib": round(max(rsses), 1) if rsses else None,
        }
        outputs[label] = outs
        # The median run (the lower of the middle two for an even count).
        order = sorted(range(len(walls)), key=lambda j: walls[j])
        run_stats[label] = [stat_paths[order[(len(order) - 1) // 2]]] if order else []

    shown_targets = ", ".join(f"Python {py} {plat}" for py, plat in wl.targets)
    print(f"\n== {wl.name}: {wl.title}; {shown_targets}, owned {wl.owned or '-'}, "
          f"exclude-newer {wl.exclude_newer}", flush=True)

    # Cold: a fresh, empty cache directory for every run.
    print("cold (fresh empty cache each run):", flush=True)
    series("layerlock cold", args.cold_runs,
           lambda c, o, s=None: layerlock_cmd(c, o, stats=s), stats=with_stats)
    series("uv cold", args.cold_runs, uv_cmd)
    if pip_compile is not None and wl.pip_compile:
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
        measure(layerlock_cmd(warm["layerlock"], scratch / "ll-warmup.txt",
                              stats=scratch / "ll-warmup-stats.json" if with_stats else None),
                wl.cwd, env, scratch / "ll-warmup.log")
        measure(uv_cmd(warm["uv"], scratch / "uv-warmup.txt"), wl.cwd, env, scratch / "uv-warmup.log")
    except ToolFailed as exc:
        failures.append(f"{wl.name}: warm-up: {exc}")
    cache_mib = {tool: disk_usage_mib(path) for tool, path in warm.items()}
    series("layerlock --offline", args.warm_runs,
           lambda c, o, s=None: layerlock_cmd(c, o, offline=True, stats=s),
           prepare=lambda w: (warm["layerlock"], w / "out.txt"), stats=with_stats)
    series("uv --offline", args.warm_runs,
           lambda c, o: uv_cmd(c, o, offline=True),
           prepare=lambda w: (warm["uv"], w / "out.txt"))

    def ratio(a: str, b: str) -> float | None:
        x, y = rows.get(a, {}).get("median_s"), rows.get(b, {}).get("median_s")
        return round(x / y, 3) if x and y else None

    def rss(label: str) -> float | None:
        return rows.get(label, {}).get("max_rss_mib")

    def largest(*xs: float | None) -> float | None:
        return max((x for x in xs if x is not None), default=None)

    m = {
        "cold_ratio": ratio("layerlock cold", "uv cold"),
        "warm_ratio": ratio("layerlock --offline", "uv --offline"),
        "ll_cold_s": rows.get("layerlock cold", {}).get("median_s"),
        "ll_warm_s": rows.get("layerlock --offline", {}).get("median_s"),
        "ll_cold_rss": rss("layerlock cold"),
        "ll_warm_rss": rss("layerlock --offline"),
        "uv_cold_rss": rss("uv cold"),
        "uv_warm_rss": rss("uv --offline"),
    }
    m["ll_rss"] = largest(m["ll_cold_rss"], m["ll_warm_rss"])
    m["uv_rss"] = largest(m["uv_cold_rss"], m["uv_warm_rss"])

    # Table.
    print()
    print(f"{'tool / mode':<28} {'median':>9} {'runs (s)':<34} {'max RSS MiB':>11}")
    print("-" * 86)
    for label, row in rows.items():
        runs = ", ".join(f"{r:.3f}" for r in row["runs_s"]) or "failed"
        med = fmt_s(row["median_s"])
        print(f"{label:<28} {med:>9} {runs:<34} {fmt_mib(row['max_rss_mib']):>11}")
    print()

    def show(metric: str, x: float | None) -> str:
        if x is None:
            return "n/a"
        unit = UNITS.get(metric, "MiB")
        return f"{x:.3f}x" if unit == "x" else fmt_s(x) if unit == "s" else f"{x:.1f} MiB"

    judged: dict[str, bool | None] = {}
    for key, what, metric, op, bound in GENERAL_TARGETS + ISSUE_TARGETS.get(wl.name, []):
        value = m[metric]
        limit = m[bound] if isinstance(bound, str) else bound
        ok = None if value is None or limit is None else (value <= limit if op == "<=" else value < limit)
        judged[key] = ok
        limit_text = (f"uv's ({show(bound, limit)})" if isinstance(bound, str) else show(metric, limit))
        verdict = "n/a" if ok is None else ("PASS" if ok else "MISS")
        print(f"{what + ':':<28} {show(metric, value):>10}  target {op} {limit_text:<18} {verdict}")
    if m["uv_rss"] and m["ll_rss"]:
        print(f"{'peak RSS layerlock/uv:':<28} {m['ll_rss'] / m['uv_rss']:>9.3f}x")
    if rows.get("pip-compile cold (host)", {}).get("median_s"):
        print(f"{'cold layerlock/pip-compile:':<28} "
              f"{show('cold_ratio', ratio('layerlock cold', 'pip-compile cold (host)')):>10}"
              f"  (pip-compile resolves for the host: {platform.python_version()} "
              f"{platform.machine()} Linux, no platform targeting)")
    print(f"{'cache after warm-up:':<28} layerlock {fmt_mib(cache_mib['layerlock'])} MiB, "
          f"uv {fmt_mib(cache_mib['uv'])} MiB")

    # Pins and hashes: the first cold run of each tool.
    agreement = None
    ll_outs, uv_outs = outputs.get("layerlock cold", []), outputs.get("uv cold", [])
    # Several targets: the online differential compares each target's
    # entries with uv's (tests/online/differential.py).
    if ll_outs and uv_outs and len(wl.targets) == 1:
        agreement = compare_pins(ll_outs[0], uv_outs[0], base_names(wl))
        # Every run of a tool should have written the same lock.
        agreement["stable"] = {
            tool: len({json.dumps(sorted((n, v, sorted(h)) for n, (v, h) in parse_pins(p).items()))
                       for p in paths}) == 1
            for tool, paths in (("layerlock", ll_outs + outputs.get("layerlock --offline", [])),
                                ("uv", uv_outs + outputs.get("uv --offline", [])))
        }
        scope = " beyond the base" if wl.base else ""
        print(f"{'pins and hashes:':<28} layerlock {agreement['layerlock_packages']} packages, "
              f"uv {agreement['uv_packages']}{scope}; {agreement['agree']} agree, "
              f"{len(agreement['differ'])} differ")
        for d in agreement["differ"]:
            print(f"  differs: {d['name']}: layerlock {d['layerlock'] or '-'}, uv {d['uv'] or '-'} ({d['why']})")
        for tool, same in agreement["stable"].items():
            if not same:
                print(f"  {tool}'s runs wrote different locks")

    stats = read_stats(run_stats["layerlock cold"][0]) if run_stats.get("layerlock cold") else None
    print_requests(stats)

    return {
        "workload": {
            "input": shown_path(wl.cwd / wl.input),
            "base": shown_path(wl.cwd / wl.base) if wl.base else None,
            "targets": [{"python": py, "platform": plat} for py, plat in wl.targets],
            "owned": wl.owned,
            "exclude_newer": wl.exclude_newer,
        },
        "runs": rows,
        "ratios": {
            "cold_layerlock_over_uv": m["cold_ratio"],
            "warm_offline_layerlock_over_uv": m["warm_ratio"],
            "cold_layerlock_over_pip_compile": ratio("layerlock cold", "pip-compile cold (host)"),
        },
        "peak_rss_mib": {"layerlock": m["ll_rss"], "uv": m["uv_rss"]},
        "cache_mib": cache_mib,
        "targets": [{"key": k, "what": w, "metric": mt, "op": op, "bound": b}
                    for k, w, mt, op, b in GENERAL_TARGETS + ISSUE_TARGETS.get(wl.name, [])],
        "judged": judged,
        "agreement": agreement,
        "stats": stats,
    }


if __name__ == "__main__":
    sys.exit(main())
