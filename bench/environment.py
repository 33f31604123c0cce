#!/usr/bin/env python3
"""Side-by-side benchmark of layerlock verify and install.

1. verify on an environment of 300 distributions (built here: wheels from the
   test harness, installed with uv) against `uv pip check` and `pip check`;
   also the time of the inspection alone (`layerlock install --dry-run` on an
   already complete environment: inspect, scan, plan).
2. install overhead: a 16-package layer installed into fresh venvs with
   `uv pip install --require-hashes --no-deps -r LOCK` alone, and with
   `layerlock install LOCK --installer uv` (inspection, plan, env lock and the
   drift guard on top of the same uv call). Target: under 10% overhead.

    python3 bench/environment.py [--layerlock target/release/layerlock] [--runs 7]

Everything is local: a harness index on 127.0.0.1 serves the wheels. Prints a
table and writes bench/results/environment-<YYYY-MM-DD>.json. Targets are
reported, never asserted. Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import os
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
HARNESS = REPO / "tests" / "harness" / "pyindex.py"
PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def scenario(count: int, prefix: str) -> str:
    lines = ['upload_time = "2024-01-01T00:00:00Z"']
    for i in range(count):
        lines += ["", "[[package]]", f'name = "{prefix}{i:03d}"', 'version = "1.0.0"']
    return "\n".join(lines) + "\n"


def timed(cmd: list[str], env: dict[str, str] | None = None, ok=(0,)) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.decode()}")
    return elapsed


def median(values: list[float]) -> float:
    return statistics.median(values)


class Server:
    def __init__(self, scenario_file: Path, root: Path):
        self.proc = subprocess.Popen(
            [sys.executable, str(HARNESS), "serve", str(scenario_file), "--root", str(root),
             "--stdin-lifetime"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("READY "):
            raise SystemExit(f"test index did not start: {line!r}")
        self.url = line[len("READY "):] + "/json/simple/"

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def venv(path: Path, with_pip: bool = False) -> Path:
    cmd = [sys.executable, "-m", "venv"]
    if not with_pip:
        cmd.append("--without-pip")
    subprocess.run(cmd + [str(path)], check=True)
    return path / "bin" / "python"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layerlock", default=str(REPO / "target" / "release" / "layerlock"))
    parser.add_argument("--uv", default=shutil.which("uv") or "uv")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    layerlock = args.layerlock
    work = Path(tempfile.mkdtemp(prefix="layerlock-bench-env-"))
    env = dict(os.environ, UV_CACHE_DIR=str(work / "uv-cache"), PIP_FIND_LINKS="",
               LAYERLOCK_CACHE_DIR=str(work / "ll-cache"))
    results: dict[str, object] = {"python": PY, "runs": args.runs}
    try:
        (work / "big.toml").write_text(scenario(300, "dist"))
        (work / "layer.toml").write_text(scenario(16, "layer"))
        big = Server(work / "big.toml", work / "big-files")
        layer = Server(work / "layer.toml", work / "layer-files")

        def compile_lock(url: str, names: list[str], out: Path) -> None:
            inp = out.with_suffix(".in")
            inp.write_text("".join(f"{n}\n" for n in names))
            subprocess.run([layerlock, "compile", str(inp), "-o", str(out), "--python-version", PY,
                            "--platform", "x86_64-manylinux_2_28", "--index-url", url, "-q"],
                           check=True, env=env)

        # 1. verify on 300 distributions.
        big_lock = work / "big.txt"
        compile_lock(big.url, [f"dist{i:03d}" for i in range(300)], big_lock)
        python = venv(work / "big-venv", with_pip=True)
        subprocess.run([args.uv, "pip", "install", "--quiet", "--no-deps", "--require-hashes",
                        "--python", str(python), "--index-url", big.url, "-r", str(big_lock)],
                       check=True, env=env)
        rows = {
            "layerlock verify": [layerlock, "verify", str(big_lock), "--python", str(python)],
            "layerlock verify --integrity": [layerlock, "verify", str(big_lock), "--python",
                                             str(python), "--integrity"],
            "layerlock inspect+plan (install --dry-run)": [layerlock, "install", str(big_lock),
                                                           "--python", str(python), "--dry-run"],
            "uv pip check": [args.uv, "pip", "check", "--python", str(python)],
            "pip check": [str(python), "-m", "pip", "check"],
        }
        verify_times = {}
        for label, cmd in rows.items():
            timed(cmd, env)  # warm the page cache
            verify_times[label] = median([timed(cmd, env) for _ in range(args.runs)])
        results["verify_300"] = verify_times

        # 2. install overhead for a 16-package layer.
        layer_lock = work / "layer.txt"
        compile_lock(layer.url, [f"layer{i:03d}" for i in range(16)], layer_lock)
        plain, wrapped = [], []
        for run in range(args.runs + 1):
            py_a = venv(work / f"a{run}")
            py_b = venv(work / f"b{run}")
            a = timed([args.uv, "pip", "install", "--quiet", "--require-hashes", "--no-deps",
                       "--python", str(py_a), "--index-url", layer.url, "-r", str(layer_lock)], env)
            b = timed([layerlock, "install", str(layer_lock), "--python", str(py_b),
                       "--installer", "uv", "--quiet", "--index-url", layer.url], env)
            if run > 0:  # the first pair fills uv's cache
                plain.append(a)
                wrapped.append(b)
        overhead = median(wrapped) / median(plain) - 1.0
        results["install_16"] = {
            "uv pip install": median(plain),
            "layerlock install": median(wrapped),
            "overhead": overhead,
            "target": "< 10%",
            "met": overhead < 0.10,
        }
        big.stop()
        layer.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"verify, 300 distributions (median of {args.runs}, Python {PY}):")
    for label, seconds in results["verify_300"].items():
        print(f"  {label:<45} {seconds * 1000:8.1f} ms")
    uvc = results["verify_300"]["uv pip check"]
    pipc = results["verify_300"]["pip check"]
    ll = results["verify_300"]["layerlock verify"]
    print(f"  ratio layerlock verify / uv pip check: {ll / uvc:.2f}; / pip check: {ll / pipc:.2f}")
    inst = results["install_16"]
    print(f"install, 16-package layer (median of {args.runs}, warm uv cache):")
    print(f"  uv pip install alone   {inst['uv pip install'] * 1000:8.1f} ms")
    print(f"  layerlock install      {inst['layerlock install'] * 1000:8.1f} ms")
    print(f"  overhead               {inst['overhead'] * 100:8.1f} %  (target < 10%: "
          f"{'met' if inst['met'] else 'NOT met'})")
    _results.write("environment", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
