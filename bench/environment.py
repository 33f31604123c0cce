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
3. verify on an environment of 10,000 distributions against `uv pip check`.
   Building and installing 10,000 wheels is slow, so the site-packages is
   written directly (in about 10 s), as an installer leaves it: per
   distribution a `.dist-info` (METADATA with Requires-Dist on other
   distributions of the set, RECORD with every file's sha256 and size,
   INSTALLER, WHEEL) and a package of two modules; one in fifty also holds
   an extension-sized file, for about 500 MB in all. A lock pins all of
   them. Target: layerlock verify at most 0.5x uv pip check.
4. `verify --integrity` on that environment: MB/s over the files RECORD
   hashes, beside sha256sum and openssl over exactly those files, one
   process and one per core (xargs -P).

    python3 bench/environment.py [--layerlock target/release/layerlock] [--runs 7]
    python3 bench/environment.py --cases large,integrity --compare /tmp/old/layerlock
    python3 bench/environment.py --cases large --keep /tmp/envbench   # write it once

Everything is local: a harness index on 127.0.0.1 serves the wheels. Prints a
table and writes bench/results/environment-<YYYY-MM-DD>.json. Targets are
reported, never asserted. Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import platform
import random
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
CASES = ("small", "install", "large", "integrity")


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


def peak_rss(cmd: list[str], env: dict[str, str]) -> float:
    """Peak RSS in MiB, GNU time's %M (the largest of the process and the
    children it waited for). wait4's ru_maxrss from this script would count
    the pages of this Python process the child held before its exec."""
    with tempfile.NamedTemporaryFile("r") as out:
        timed(["/usr/bin/time", "-f", "%M", "-o", out.name, *cmd], env)
        return int(out.read().split()[-1]) / 1024.0


def median(values: list[float]) -> float:
    return statistics.median(values)


def side_by_side(rows: dict[str, list[str]], env: dict[str, str], runs: int) -> dict[str, dict]:
    """Every command once under GNU time (warming the page cache and taking
    peak memory), then `runs` rounds that run each command once in turn, so
    a slow moment of the machine falls on all of them alike. Median wall
    time of the rounds."""
    rss = {label: peak_rss(cmd, env) for label, cmd in rows.items()}
    walls: dict[str, list[float]] = {label: [] for label in rows}
    for _ in range(runs):
        for label, cmd in rows.items():
            walls[label].append(timed(cmd, env))
    return {label: {"median_s": median(walls[label]), "runs_s": walls[label],
                    "peak_rss_mib": rss[label]} for label in rows}


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


def record_hash(data: bytes) -> str:
    """A RECORD digest (PEP 376: urlsafe base64, no padding)."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def synthesise(site: Path, count: int, seed: int = 14) -> tuple[str, list[Path], int]:
    """Write `count` installed distributions into `site`, as an installer
    leaves them. Returns the text of a lock pinning all of them, the files
    their RECORDs hash and those files' total size.

    Distribution i is `synth-{i:05d}` (every seventh spelled `Synth_…` in
    METADATA, as many projects spell themselves), at a version of its own,
    with up to six Requires-Dist on earlier distributions that its pins
    satisfy (`>=`, `~=`, `<`, `!=`, an extra), and two that must be skipped:
    one under a marker that is false and one for an extra nobody asks for.
    So `uv pip check` reads and evaluates about 40,000 requirements and finds
    all of them met."""
    rng = random.Random(seed)
    versions = [(1 + i % 5, i % 13, i % 3) for i in range(count)]
    files: list[Path] = []
    total = 0
    lock = [f"# layerlock-target: python={PY} platform=x86_64-manylinux_2_28"]
    for i in range(count):
        name = f"synth-{i:05d}"
        spelled = f"Synth_{i:05d}" if i % 7 == 0 else name
        major, minor, micro = versions[i]
        version = f"{major}.{minor}.{micro}"
        module = f"synth_{i:05d}"
        dist_info = f"{module}-{version}.dist-info"
        requires = []
        for j in sorted(rng.sample(range(i), min(i, rng.randint(0, 6)))):
            jm, jn, jp = versions[j]
            dep = f"synth-{j:05d}"
            requires.append([f"{dep}>={jm}.0", f"{dep}~={jm}.{jn}", f"{dep}>={jm},<{jm + 1}",
                             f"{dep}!={jm}.{jn}.{jp + 1}", f"{dep}[extra] >={jm}"][j % 5])
        if i > 0:
            requires.append(f'synth-{i - 1:05d}>=99; python_version < "3.0"')
            requires.append(f'synth-missing-{i:05d}; extra == "docs"')
        metadata = "".join([
            "Metadata-Version: 2.1\n", f"Name: {spelled}\n", f"Version: {version}\n",
            f"Summary: Synthetic distribution {i} of the verify benchmark\n",
            "Requires-Python: >=3.8\n", 'Provides-Extra: extra\nProvides-Extra: docs\n',
            *(f"Requires-Dist: {r}\n" for r in requires),
            "\n", f"# {name}\n\n", "A distribution written by bench/environment.py.\n" * 8,
        ]).encode()
        # Module sources of 0.5 to 8 KiB, and one distribution in fifty with a
        # 1 to 3 MiB extension module, as native wheels have.
        contents = {
            f"{module}/__init__.py": (f'"""{name}"""\n' + "VALUE = %d\n" % i * rng.randint(40, 300)).encode(),
            f"{module}/core.py": (f"def f{i}(x):\n    return x + {i}\n\n" * rng.randint(16, 250)).encode(),
        }
        if i % 50 == 25:
            contents[f"{module}/_native.cpython-311-x86_64-linux-gnu.so"] = rng.randbytes(
                rng.randint(1 << 20, 3 << 20))
        contents[f"{dist_info}/METADATA"] = metadata
        contents[f"{dist_info}/INSTALLER"] = b"uv\n"
        contents[f"{dist_info}/WHEEL"] = (
            b"Wheel-Version: 1.0\nGenerator: bench/environment.py\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n")
        record = []
        (site / module).mkdir(parents=True)
        (site / dist_info).mkdir()
        for rel, data in contents.items():
            path = site / rel
            path.write_bytes(data)
            files.append(path)
            total += len(data)
            record.append(f"{rel},{record_hash(data)},{len(data)}\n")
        record.append(f"{dist_info}/RECORD,,\n")
        (site / dist_info / "RECORD").write_text("".join(record))
        # Locks list hashes of the wheels; verify never reads them, so these
        # stand in (well-formed, as the lock readers require).
        lock.append(f"{name}=={version} \\\n    --hash=sha256:"
                    f"{hashlib.sha256(name.encode()).hexdigest()}")
    return "\n".join(lock) + "\n", files, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layerlock", default=str(REPO / "target" / "release" / "layerlock"))
    parser.add_argument("--compare", metavar="PATH",
                        help="another layerlock build, timed beside --layerlock in the same rounds "
                             "(large and integrity cases)")
    parser.add_argument("--uv", default=shutil.which("uv") or "uv")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated, from {', '.join(CASES)} (default: all)")
    parser.add_argument("--dists", type=int, default=10_000,
                        help="distributions in the large environment (10,000)")
    parser.add_argument("--keep", metavar="DIR",
                        help="write the large environment under DIR once and reuse it")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    if unknown := [c for c in cases if c not in CASES]:
        parser.error(f"unknown case {', '.join(unknown)}")
    layerlock = args.layerlock
    work = Path(tempfile.mkdtemp(prefix="layerlock-bench-env-"))
    env = dict(os.environ, UV_CACHE_DIR=str(work / "uv-cache"), PIP_FIND_LINKS="",
               LAYERLOCK_CACHE_DIR=str(work / "ll-cache"))
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                         text=True).stdout.strip()
    results: dict[str, object] = {
        "python": PY, "runs": args.runs,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "tools": {"layerlock": _results.version_of([layerlock, "--version"]), "git": git,
                  "uv": _results.version_of([args.uv, "--version"]),
                  "sha256sum": _results.version_of(["sha256sum", "--version"]),
                  "openssl": _results.version_of(["openssl", "version"])},
    }
    if args.compare:
        results["tools"]["layerlock (compare)"] = _results.version_of([args.compare, "--version"])
    try:
        if "small" in cases or "install" in cases:
            small_cases(args, cases, work, env, results)
        if "large" in cases or "integrity" in cases:
            large_cases(args, cases, work, env, results)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(results, args)
    _results.write("environment", results)
    return 0


def small_cases(args, cases: list[str], work: Path, env: dict[str, str], results: dict) -> None:
    layerlock = args.layerlock
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
    if "small" in cases:
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
    if "install" in cases:
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


def large_cases(args, cases: list[str], work: Path, env: dict[str, str], results: dict) -> None:
    count = args.dists
    # With --keep, the environment is written once and reused by later runs.
    where = Path(args.keep).resolve() / f"synth-{count}" if args.keep else work
    python = where / "large-venv" / "bin" / "python"
    lock = where / "large.txt"
    listing = where / "hashed-files"
    if not (lock.exists() and listing.exists()):
        shutil.rmtree(where / "large-venv", ignore_errors=True)
        venv(where / "large-venv")
        site = where / "large-venv" / "lib" / f"python{PY}" / "site-packages"
        start = time.perf_counter()
        lock_text, files, total = synthesise(site, count)
        listing.write_bytes(b"".join(bytes(f) + b"\0" for f in files))
        lock.write_text(lock_text)
        print(f"wrote {count:,} distributions, {len(files):,} hashed files, {total / 1e6:.0f} MB "
              f"in {time.perf_counter() - start:.1f} s", flush=True)
    files = [Path(f.decode()) for f in listing.read_bytes().split(b"\0") if f]
    total = sum(f.stat().st_size for f in files)
    builds = {"layerlock": args.layerlock}
    if args.compare:
        builds["layerlock (compare)"] = args.compare
    # 3. verify on 10,000 distributions.
    if "large" in cases:
        rows = {f"{label} verify": [exe, "verify", str(lock), "--python", str(python)]
                for label, exe in builds.items()}
        rows["uv pip check"] = [args.uv, "pip", "check", "--python", str(python)]
        measured_rows = side_by_side(rows, env, args.runs)
        uv = measured_rows["uv pip check"]["median_s"]
        ratio = measured_rows["layerlock verify"]["median_s"] / uv
        results[f"verify_{count}"] = {
            "dists": count,
            "rows": measured_rows,
            "ratio_layerlock_to_uv": ratio,
            "target": "<= 0.5",
            "met": ratio <= 0.5,
        }
        if args.compare:
            results[f"verify_{count}"]["ratio_compare_to_uv"] = (
                measured_rows["layerlock (compare) verify"]["median_s"] / uv)
    # 4. --integrity: MB/s over the files RECORD hashes, beside sha256sum and
    # openssl over exactly those files.
    if "integrity" in cases:
        # Chunks of a quarter of the list: `xargs -P 2` keeps both cores
        # busy and a chunk that ends early leaves little idle time.
        chunk = str(max(1, len(files) // 4))
        list_args = ["xargs", "-0", "-a", str(listing)]
        rows = {f"{label} verify --integrity": [exe, "verify", str(lock), "--python", str(python),
                                                 "--integrity"]
                for label, exe in builds.items()}
        rows["sha256sum"] = list_args + ["sha256sum"]
        rows["sha256sum, xargs -P 2"] = list_args + ["-P", "2", "-n", chunk, "sha256sum"]
        rows["openssl dgst -sha256"] = list_args + ["openssl", "dgst", "-sha256"]
        rows["openssl dgst -sha256, xargs -P 2"] = list_args + ["-P", "2", "-n", chunk, "openssl",
                                                                "dgst", "-sha256"]
        measured_rows = side_by_side(rows, env, args.runs)
        for row in measured_rows.values():
            row["mb_per_s"] = total / 1e6 / row["median_s"]
        results["integrity"] = {
            "dists": count, "files": len(files), "bytes": total, "rows": measured_rows,
            "ratio_layerlock_to_sha256sum": (measured_rows["layerlock verify --integrity"]["median_s"]
                                             / measured_rows["sha256sum"]["median_s"]),
        }


def report(results: dict, args) -> None:
    if "verify_300" in results:
        print(f"verify, 300 distributions (median of {args.runs}, Python {PY}):")
        for label, seconds in results["verify_300"].items():
            print(f"  {label:<45} {seconds * 1000:8.1f} ms")
        uvc = results["verify_300"]["uv pip check"]
        pipc = results["verify_300"]["pip check"]
        ll = results["verify_300"]["layerlock verify"]
        print(f"  ratio layerlock verify / uv pip check: {ll / uvc:.2f}; / pip check: {ll / pipc:.2f}")
    if "install_16" in results:
        inst = results["install_16"]
        print(f"install, 16-package layer (median of {args.runs}, warm uv cache):")
        print(f"  uv pip install alone   {inst['uv pip install'] * 1000:8.1f} ms")
        print(f"  layerlock install      {inst['layerlock install'] * 1000:8.1f} ms")
        print(f"  overhead               {inst['overhead'] * 100:8.1f} %  (target < 10%: "
              f"{'met' if inst['met'] else 'NOT met'})")
    large = results.get(f"verify_{args.dists}")
    if large:
        print(f"verify, {args.dists:,} distributions (median of {args.runs}, side by side):")
        for label, row in large["rows"].items():
            print(f"  {label:<45} {row['median_s'] * 1000:8.1f} ms  {row['peak_rss_mib']:6.1f} MiB")
        print(f"  ratio layerlock verify / uv pip check: {large['ratio_layerlock_to_uv']:.2f} "
              f"(target <= 0.5: {'met' if large['met'] else 'NOT met'})")
    integrity = results.get("integrity")
    if integrity:
        print(f"verify --integrity, {integrity['files']:,} files, {integrity['bytes'] / 1e6:.0f} MB "
              f"(median of {args.runs}, side by side):")
        for label, row in integrity["rows"].items():
            print(f"  {label:<45} {row['median_s'] * 1000:8.1f} ms  {row['mb_per_s']:7.0f} MB/s  "
                  f"{row['peak_rss_mib']:6.1f} MiB")
        print(f"  ratio layerlock --integrity / sha256sum: "
              f"{integrity['ratio_layerlock_to_sha256sum']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
