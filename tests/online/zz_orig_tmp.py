#!/usr/bin/env python3
"""Online differential suite: layerlock compile against `uv pip compile`.

For every case both tools resolve the same inputs for the same target against
the same base, with a fixed --exclude-newer, and the results are compared:
the same package names (PEP 503 normalised), the same versions and the same
sha256 sets.

The reference is

    uv pip compile IN -c BASE_WITHOUT_LOCAL_LABELS --python-platform P \
        --python-version V --exclude-newer TS --generate-hashes --no-header

after which every package the base pins (and every --owned package) is dropped
from uv's output, since layerlock never emits those. Local version labels
(`+cu130`) are stripped from the base for uv: uv is only given PyPI, where
those versions carry no label.

This talks to PyPI. If PyPI cannot be reached the suite fails loudly; it never
skips.

    python3 tests/online/differential.py --layerlock target/release/layerlock \
        [--cache-dir DIR] [-k CASE] [--uv uv] [--jobs 2] [--keep DIR]

Prints `PASS case` or `FAIL case: details` per case, then `N passed, M failed`.
Exits 1 on any failure. Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CASES_DIR = HERE / "cases"
# In CI the repository is cloned fresh with shared/ beside it.
VLLM_REQ = REPO.parent / "shared" / "corpus" / "vllm" / "requirements"

EXCLUDE_NEWER = "2026-11-01T00:00:00Z"
PYPI_PROBE = "https://pypi.org/simple/pip/"
COMMAND_TIMEOUT = 900  # seconds, per tool invocation


@dataclasses.dataclass
class Case:
    cwd: Path
    inputs: list[str]
    bases: list[str]
    python: str
    platform: str
    owned: list[str] = dataclasses.field(default_factory=list)
    prerelease: str | None = None
    # None: both must succeed and agree. A regex: both must fail, and
    # layerlock must exit 2 with a stderr matching it.
    expect_failure: str | None = None
    note: str = ""


def _local(name: str) -> Path:
    return CASES_DIR / name


CASES: dict[str, Case] = {
    "vllm-kv-connectors": Case(
        cwd=VLLM_REQ,
        inputs=["kv_connectors.txt@4742f9e"],
        bases=["test/cuda.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        owned=["nvidia-nccl-cu13"],
        note="the real vLLM kv-connectors layer on the CUDA test image",
    ),
    "vllm-kv-connectors-rocm": Case(
        cwd=VLLM_REQ,
        inputs=["kv_connectors_rocm.txt"],
        bases=["test/rocm.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        note="tblib + lm_eval[api]: extras of a package the base pins; "
        "the base covers everything, so both emit nothing",
    ),
    "vllm-kv-connectors-nixl-rc": Case(
        cwd=VLLM_REQ,
        inputs=["kv_connectors.txt"],
        bases=["test/cuda.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        owned=["nvidia-nccl-cu13"],
        expect_failure=r"nixl",
        note="pins nixl==1.5.0rc1.dev72182327, which PyPI does not have: "
        "both tools must refuse",
    ),
    "vllm-kv-cu13": Case(
        cwd=_local("vllm-kv-cu13"),
        inputs=["requirements.in"],
        bases=[str(VLLM_REQ / "test" / "cuda.txt")],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        owned=["nvidia-nccl-cu13"],
        note="kv_connectors_cu13.txt with kv_connectors.txt inlined, minus the "
        "nixl RC pin: lmcache, nixl, mooncake, cupy-cuda13x <14.1.0",
    ),
    "prerelease-explicit": Case(
        cwd=_local("prerelease-explicit"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        note="default pre-release mode: a pre-release only where a specifier names one",
    ),
    "prerelease-allow": Case(
        cwd=_local("prerelease-allow"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        prerelease="allow",
        note="--prerelease allow; the base's typing-extensions holds pydantic back",
    ),
    "base-markers": Case(
        cwd=_local("base-markers"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        note="base pins behind markers: the ones false on Linux are not in the image",
    ),
    "jupyterlab-manylinux2014": Case(
        cwd=_local("jupyterlab-manylinux2014"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_17",
        note="old glibc baseline: newest versions with only manylinux_2_28 wheels",
    ),
    "http-extras": Case(
        cwd=_local("http-extras"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        note="requests[socks], httpx[http2,brotli] with requests/httpx in the base",
    ),
    "fastapi-standard": Case(
        cwd=_local("fastapi-standard"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        note="fastapi[standard] (nested extras) with pydantic pinned by the base",
    ),
    "scipy-windows-py311": Case(
        cwd=_local("scipy-windows-py311"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.11",
        platform="x86_64-pc-windows-msvc",
        note="markers on python_version and sys_platform; Windows-only deps (pywin32, colorama, pywin32-ctypes), dask[complete]",
    ),
    "jupyterlab-aarch64": Case(
        cwd=_local("jupyterlab-aarch64"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="aarch64-manylinux_2_28",
        note="a large tree on aarch64 Linux",
    ),
    "macos-cli": Case(
        cwd=_local("macos-cli"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.13",
        platform="aarch64-apple-darwin",
        note="macOS markers (appnope, platform_system), black[d], sqlalchemy[asyncio], torch",
    ),
}

# Deliberate, understood differences: {case: {package: reason}}. A package
# listed here is left out of the comparison for that case. Only for
# differences that are by design; bugs are fixed in layerlock, not listed.
WHEELS_ONLY = (
    "layerlock never builds sdists: the newest version has only manylinux_2_28 "
    "wheels and an sdist, which uv takes (it would build it on the target); "
    "layerlock takes the newest version with a manylinux_2_17 wheel"
)
DIVERGENCES: dict[str, dict[str, str]] = {
    "jupyterlab-manylinux2014": {
        "pyzmq": WHEELS_ONLY,
        "argon2-cffi-bindings": WHEELS_ONLY,
    },
}


# --------------------------------------------------------------------------
# Parsing


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


PIN_RE = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*==\s*(?P<version>[^\s;\\#]+)"
)
HASH_RE = re.compile(r"--hash=sha256:([0-9a-fA-F]{64})")


@dataclasses.dataclass
class Pin:
    version: str
    hashes: set[str]


def parse_lock(text: str) -> dict[str, Pin]:
    """Read a hash-pinned requirements file (as uv or layerlock writes it)."""
    pins: dict[str, Pin] = {}
    current: str | None = None
    # Join backslash continuations so hashes stay with their requirement.
    logical: list[str] = []
    buf = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        logical.append(buf + line)
        buf = ""
    if buf:
        logical.append(buf)
    for line in logical:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = PIN_RE.match(stripped)
        if match and not line[:1].isspace():
            current = normalize(match.group("name"))
            if current in pins:
                raise ValueError(f"{current} is pinned twice")
            pins[current] = Pin(match.group("version"), set())
        elif stripped.startswith("-") and not stripped.startswith("--hash"):
            current = None  # an option line
            continue
        elif not stripped.startswith("--hash"):
            raise ValueError(f"unrecognised line: {stripped[:120]}")
        if current is not None:
            pins[current].hashes.update(h.lower() for h in HASH_RE.findall(stripped))
    return pins


def base_pins(path: Path) -> list[tuple[str, str, bool]]:
    """(normalised name, requirement line without local label, has a marker)."""
    out = []
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        match = PIN_RE.match(line)
        if not match:
            continue
        version = match.group("version").split("+", 1)[0]
        rest = line[match.end():].strip().rstrip("\\").strip()
        marker = ""
        if rest.startswith(";"):
            marker = " " + rest.split("--hash", 1)[0].strip()
        name = match.group("name")
        out.append((normalize(name), f"{name}=={version}{marker}", bool(marker)))
    return out


def owned_names(case: Case) -> set[str]:
    return {normalize(re.split(r"[=<>!~ ]", o, 1)[0]) for o in case.owned}


# --------------------------------------------------------------------------
# Running


NETWORK_ERROR_RE = re.compile(
    r"dns error|failed to lookup address|Connection refused|Connect\)|"
    r"error sending request|timed out|Network is unreachable|"
    r"Could not connect|connection error",
    re.IGNORECASE,
)


class Skipped(Exception):
    """A case that cannot run here (its inputs are not beside the checkout)."""


class Unreachable(Exception):
    pass


@dataclasses.dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float
    output: str | None


def run(cmd: list[str], cwd: Path, out_path: Path, env: dict[str, str]) -> Run:
    start = time.monotonic()
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        return Run(124, "", f"timed out after {exc.timeout}s", COMMAND_TIMEOUT, None)
    seconds = time.monotonic() - start
    output = out_path.read_text() if proc.returncode == 0 and out_path.exists() else None
    return Run(proc.returncode, proc.stdout, proc.stderr, seconds, output)


def tool_env() -> dict[str, str]:
    env = dict(os.environ)
    # uv would try to download a managed CPython for --python-version; only
    # PyPI is reachable, and no interpreter is needed to resolve wheels.
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env.pop("UV_INDEX_URL", None)
    env.pop("UV_EXTRA_INDEX_URL", None)
    env.pop("LAYERLOCK_INDEX_URL", None)
    return env


def last_lines(text: str, n: int = 4) -> str:
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])


def applying_pins(
    lines: list[str], case: Case, args: argparse.Namespace, cdir: Path, env: dict[str, str]
) -> set[str] | str:
    """The names among marker-bearing pins whose marker holds on the target."""
    src = cdir / "base-markers.in"
    src.write_text("\n".join(lines) + "\n")
    cmd = [args.uv, "pip", "compile", str(src), "--no-deps", "--no-header", "--no-annotate"]
    cmd += ["--python-platform", case.platform, "--python-version", case.python]
    cmd += ["--exclude-newer", EXCLUDE_NEWER, "--index-url", "https://pypi.org/simple"]
    cmd += ["--cache-dir", str(args.cache_root / "uv"), "--quiet"]
    proc = subprocess.run(
        cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=COMMAND_TIMEOUT,
    )
    if proc.returncode != 0:
        if NETWORK_ERROR_RE.search(proc.stderr):
            raise Unreachable(f"uv could not reach PyPI: {last_lines(proc.stderr, 3)}")
        return f"uv could not evaluate the base's markers: {last_lines(proc.stderr)}"
    return set(parse_lock(proc.stdout))


def run_case(name: str, case: Case, args: argparse.Namespace, work: Path) -> tuple[bool, str]:
    cdir = work / name
    cdir.mkdir(parents=True, exist_ok=True)
    env = tool_env()

    for rel in case.inputs + case.bases:
        if not (case.cwd / rel).is_file():
            # A fresh clone elsewhere has no vLLM corpus beside it: its
            # cases are skipped, said so, never failed or passed.
            if not VLLM_REQ.is_dir() and VLLM_REQ in (case.cwd / rel).parents:
                raise Skipped("vLLM's corpus is not beside this checkout (../shared/corpus/vllm)")
            return False, f"missing input file {case.cwd / rel}"

    # uv's view of the base: the same pins without local labels.
    base_names: set[str] = set()
    marked: list[str] = []
    constraint_lines: list[str] = []
    for rel in case.bases:
        for norm, line, has_marker in base_pins(case.cwd / rel):
            if has_marker:
                marked.append(line)
            else:
                base_names.add(norm)
            constraint_lines.append(line)
    for spec in case.owned:
        if "==" in spec:
            constraint_lines.append(spec)
    constraints = cdir / "uv-constraints.txt"
    constraints.write_text("\n".join(constraint_lines) + "\n")
    if marked:
        # A base pin whose marker is false on the target is not in the image,
        # so the layer may have to provide it: ask uv which markers hold.
        applying = applying_pins(marked, case, args, cdir, env)
        if isinstance(applying, str):
            return False, applying
        base_names |= applying
    skip = base_names | owned_names(case)

    ll_out = cdir / "layerlock.txt"
    ll_cmd = [args.layerlock, "compile", *case.inputs]
    for rel in case.bases:
        ll_cmd += ["--base", rel]
    ll_cmd += ["--python-version", case.python, "--platform", case.platform]
    for spec in case.owned:
        ll_cmd += ["--owned", spec]
    if case.prerelease:
        ll_cmd += ["--prerelease", case.prerelease]
    ll_cmd += ["--exclude-newer", EXCLUDE_NEWER, "--quiet", "-o", str(ll_out)]
    ll_cmd += ["--cache-dir", str(args.cache_root / "layerlock")]

    uv_out = cdir / "uv.txt"
    uv_cmd = [args.uv, "pip", "compile", *case.inputs, "-c", str(constraints)]
    uv_cmd += ["--python-platform", case.platform, "--python-version", case.python]
    uv_cmd += ["--exclude-newer", EXCLUDE_NEWER, "--generate-hashes", "--no-header"]
    uv_cmd += ["--index-url", "https://pypi.org/simple"]
    if case.prerelease:
        uv_cmd += ["--prerelease", case.prerelease]
    uv_cmd += ["--cache-dir", str(args.cache_root / "uv"), "-o", str(uv_out)]

    # uv pip compile takes an existing output file as preferences: start
    # from nothing so an earlier run (--keep) cannot steer either tool.
    for stale in (ll_out, uv_out):
        stale.unlink(missing_ok=True)

    ll = run(ll_cmd, case.cwd, ll_out, env)
    uv = run(uv_cmd, case.cwd, uv_out, env)
    (cdir / "layerlock.stderr").write_text(ll.stderr)
    (cdir / "uv.stderr").write_text(uv.stderr)

    if uv.code != 0 and NETWORK_ERROR_RE.search(uv.stderr):
        raise Unreachable(f"uv could not reach PyPI in case {name}: {last_lines(uv.stderr, 3)}")

    timing = f"layerlock {ll.seconds:.1f}s, uv {uv.seconds:.1f}s"

    if case.expect_failure is not None:
        problems = []
        if ll.code != 2:
            problems.append(f"layerlock exited {ll.code}, expected 2")
        elif not re.search(case.expect_failure, ll.stderr):
            problems.append(
                f"layerlock stderr does not match /{case.expect_failure}/: {last_lines(ll.stderr)}"
            )
        if uv.code == 0:
            problems.append("uv succeeded, expected it to fail too")
        if problems:
            return False, "; ".join(problems)
        return True, f"both fail as expected ({timing})"

    if ll.code != 0 or ll.output is None:
        return False, f"layerlock exited {ll.code}: {last_lines(ll.stderr)}"
    if uv.code != 0 or uv.output is None:
        return False, f"uv exited {uv.code}: {last_lines(uv.stderr)}"

    try:
        mine = parse_lock(ll.output)
    except ValueError as exc:
        return False, f"cannot parse layerlock output: {exc}"
    try:
        theirs = {k: v for k, v in parse_lock(uv.output).items() if k not in skip}
    except ValueError as exc:
        return False, f"cannot parse uv output: {exc}"

    known = {normalize(k): v for k, v in DIVERGENCES.get(name, {}).items()}
    diffs: list[str] = []
    seen_known: set[str] = set()

    def differ(pkg: str, text: str) -> None:
        if pkg in known:
            seen_known.add(pkg)
        else:
            diffs.append(text)

    leaked = sorted(set(mine) & skip)
    for pkg in leaked:
        differ(pkg, f"{pkg}: emitted by layerlock but pinned by the base/owned")
    for pkg in sorted(set(mine) - set(theirs) - skip):
        differ(pkg, f"{pkg}=={mine[pkg].version} only in layerlock")
    for pkg in sorted(set(theirs) - set(mine)):
        differ(pkg, f"{pkg}=={theirs[pkg].version} only in uv")
    for pkg in sorted(set(mine) & set(theirs)):
        a, b = mine[pkg], theirs[pkg]
        if a.version != b.version:
            differ(pkg, f"{pkg}: layerlock {a.version}, uv {b.version}")
        elif a.hashes != b.hashes:
            differ(
                pkg,
                f"{pkg}=={a.version}: hashes differ "
                f"(layerlock-only {len(a.hashes - b.hashes)}, uv-only {len(b.hashes - a.hashes)})",
            )
        elif not a.hashes:
            differ(pkg, f"{pkg}=={a.version}: no hashes")

    if diffs:
        return False, f"{len(diffs)} difference(s): " + "; ".join(diffs)
    extra = ""
    if seen_known:
        extra = f", {len(seen_known)} known divergence(s): {', '.join(sorted(seen_known))}"
    stale = sorted(set(known) - seen_known)
    if stale:
        extra += f", listed divergence(s) no longer seen: {', '.join(stale)}"
    return True, f"{len(mine)} packages agree ({timing}{extra})"


def probe_pypi() -> str | None:
    req = urllib.request.Request(
        PYPI_PROBE, headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    last = None
    for _ in range(3):
        try:
            with urllib.request.urlopen(req, timeout=20) as resp:
                resp.read(1024)
                return None
        except (urllib.error.URLError, OSError) as exc:
            last = exc
            time.sleep(2)
    return f"{PYPI_PROBE}: {last}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layerlock", help="the layerlock binary to test (required)")
    parser.add_argument("--uv", default="uv", help="the uv binary (default: uv on PATH)")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="cache root for both tools (layerlock/ and uv/ under it); "
        "default: a fresh temporary directory, i.e. a cold run",
    )
    parser.add_argument(
        "-k", dest="only", action="append", default=[],
        help="run only cases whose name contains this (repeatable)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--keep", type=Path, help="keep both outputs of every case here")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args()

    if args.list:
        for name, case in CASES.items():
            print(f"{name}: {case.note}")
        return 0
    if not args.layerlock:
        parser.error("--layerlock is required")

    selected = {n: c for n, c in CASES.items() if not args.only or any(k in n for k in args.only)}
    if not selected:
        print(f"no case matches {args.only}", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1

    layerlock = shutil.which(args.layerlock) or args.layerlock
    uv = shutil.which(args.uv)
    problems = []
    if not Path(layerlock).is_file():
        problems.append(f"layerlock binary not found: {args.layerlock}")
    if uv is None:
        problems.append(f"uv not found ({args.uv}); install it with `python3 -m pip install uv`")
    if problems:
        for p in problems:
            print(f"error: {p}")
        print(f"0 passed, {len(selected)} failed")
        return 1
    args.layerlock = str(Path(layerlock).resolve())
    args.uv = uv
    version = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"differential: {len(selected)} case(s), {version}, exclude-newer {EXCLUDE_NEWER}")

    unreachable = probe_pypi()
    if unreachable:
        print(f"error: PyPI is unreachable, so the differential suite cannot run: {unreachable}")
        print(f"0 passed, {len(selected)} failed")
        return 1

    tmp = tempfile.TemporaryDirectory(prefix="layerlock-differential-")
    work = args.keep.resolve() if args.keep else Path(tmp.name) / "work"
    work.mkdir(parents=True, exist_ok=True)
    args.cache_root = args.cache_dir.resolve() if args.cache_dir else Path(tmp.name) / "cache"

    passed = failed = skipped = 0
    net_error = None
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {
                pool.submit(run_case, name, case, args, work): name
                for name, case in selected.items()
            }
            results: dict[str, tuple[bool, str]] = {}
            for future in concurrent.futures.as_completed(futures):
                name = futures[future]
                try:
                    ok, detail = future.result()
                except Skipped as exc:
                    skipped += 1
                    print(f"SKIP {name}: {exc}", flush=True)
                    continue
                except Unreachable as exc:
                    net_error = str(exc)
                    ok, detail = False, f"PyPI unreachable: {exc}"
                except Exception as exc:  # a bug in this script: report, don't hide
                    ok, detail = False, f"harness error: {type(exc).__name__}: {exc}"
                results[name] = (ok, detail)
                if ok:
                    passed += 1
                    print(f"PASS {name} ({detail})", flush=True)
                else:
                    failed += 1
                    print(f"FAIL {name}: {detail}", flush=True)
    finally:
        tmp.cleanup()
    if net_error:
        print(f"error: PyPI became unreachable during the run: {net_error}")
    if args.keep:
        print(f"outputs kept in {work}")
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
