#!/usr/bin/env python3
"""Online differential suite: layerlock compile against `uv pip compile`.

For every case both tools resolve the same inputs for the same target against
the same base, with a fixed --exclude-newer, and the results are compared
twice, once per lock format:

* requirements: the same package names (PEP 503 normalised), the same
  versions and the same sha256 sets. Both tools list every file of the
  version here (layerlock's default `--hashes all`, uv's --generate-hashes),
  so the sets are compared whole.

* pylock (PEP 751 `pylock.toml`): the same names and versions, and the same
  sha256 set over the files installable on the case's target. uv's
  pylock.toml lists only those (the wheels whose tags the target accepts,
  and the sdist, which uv counts as installable since it can build it),
  while layerlock's default `--hashes all` lists every file of the version;
  so layerlock's files are filtered with the target's PEP 425 tags (computed
  here the way uv and layerlock compute them, see `TargetTags`) before the
  sets are compared. layerlock's pylock.toml must also say
  `lock-version = "1.0"` and `created-by = "layerlock"`, and each file it
  locks must be one of the project's files on PyPI with that sha256, with
  the `size` and `upload-time` PyPI's JSON index (PEP 691/700) gives for it.

The pylock variant of a case runs right after its requirements variant, in
the same worker, so both tools find their caches warm. uv is run --offline
there, on the cache its requirements run has just filled from PyPI (uv
revalidates every cached page otherwise, and a mirror that sends no ETag
re-sends each one whole); if that fails it is run online. See run_tools.

The reference is

    uv pip compile IN -c BASE_WITHOUT_LOCAL_LABELS --python-platform P \
        --python-version V --exclude-newer TS --generate-hashes --no-header

(with `--format pylock.toml` instead of --generate-hashes for the pylock
variant), after which every package the base pins (and every --owned
package) is dropped from uv's output, since layerlock never emits those.
Local version labels (`+cu130`) are stripped from the base for uv: uv is
only given PyPI, where those versions carry no label.

This talks to PyPI. If PyPI cannot be reached the suite fails loudly; it never
skips. Cases whose inputs are vLLM's corpus are skipped (both variants) when
that corpus is not beside the checkout.

    python3 tests/online/differential.py --layerlock target/release/layerlock \
        [--cache-dir DIR] [-k CASE] [--uv uv] [--jobs 2] [--keep DIR]

Prints `PASS case`, `FAIL case: details` or `SKIP case: why` for the
requirements comparison of each case and `PASS case [pylock]` (etc.) for its
pylock.toml comparison, then `N passed, M failed, K skipped` counting those
lines. Exits 1 on any failure. Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime
import http.client
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CASES_DIR = HERE / "cases"
# vLLM's corpus beside the checkout, when it is there: the cases that read
# it are skipped, and say so, on a clone with nothing beside it.
VLLM_REQ = REPO.parent / "shared" / "corpus" / "vllm" / "requirements"

EXCLUDE_NEWER = "2026-11-01T00:00:00Z"
PYPI_PROBE = "https://pypi.org/simple/pip/"
# A project's files, with their sha256, size and upload time (PEP 691/700).
PYPI_HOST = "pypi.org"
PYPI_SIMPLE_PATH = "/simple/{name}/"
PYPI_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
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
    # Several targets compiled into one lock: (python, platform) each. The
    # entries of each target are compared with uv's answer for that target
    # alone (see compare_targets).
    targets: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    # --override files, given to both tools (absolute paths).
    overrides: list[str] = dataclasses.field(default_factory=list)
    # The image's packages layerlock replaces on purpose (--replace); uv
    # has no file check, so it needs none.
    replace: list[str] = dataclasses.field(default_factory=list)
    # A regex: layerlock must refuse the lock for a file clash (exit 2,
    # stderr matching) while uv, which checks no files, writes one.
    clash: str | None = None


def overrides_and_replace(case: Case) -> list[str]:
    """layerlock's flags for a case's overrides and replacements."""
    flags = []
    for path in case.overrides:
        flags += ["--override", path]
    for name in case.replace:
        flags += ["--replace", name]
    return flags


def _local(name: str) -> Path:
    return CASES_DIR / name


# A CUDA 13 layer over vLLM's CUDA image: NIXL's cu12 build kept out, and
# the image's cupy-cuda12x replaced by the cupy-cuda13x lmcache needs (their
# files overlap; layerlock refuses the lock otherwise).
CUDA13 = dict(overrides=[str(CASES_DIR / "overrides" / "cuda13.txt")], replace=["cupy-cuda12x"])

CASES: dict[str, Case] = {
    "vllm-kv-connectors": Case(
        cwd=VLLM_REQ,
        inputs=["kv_connectors.txt@4742f9e"],
        bases=["test/cuda.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        owned=["nvidia-nccl-cu13"],
        **CUDA13,
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
        **CUDA13,
        note="kv_connectors_cu13.txt with kv_connectors.txt inlined, minus the "
        "nixl RC pin: lmcache, nixl, mooncake, cupy-cuda13x <14.1.0",
    ),
    "vllm-example-two-platforms": Case(
        cwd=REPO / "examples" / "vllm-kv",
        inputs=["kv_connectors.txt"],
        bases=["cuda.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        owned=["nvidia-nccl-cu13"],
        **CUDA13,
        targets=[("3.12", "x86_64-manylinux_2_28"), ("3.12", "aarch64-manylinux_2_28")],
        note="the bundled example as one lock for the x86_64 and the aarch64 image",
    ),
    "opencv-headless-clash": Case(
        cwd=_local("opencv-headless"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        clash=r"opencv-python-headless==\S+ writes over \d+ files of the image's opencv-python==4\.10\.0\.84 \(e\.g\. cv2/",
        note="albumentations pulls opencv-python-headless over the image's opencv-python: "
        "layerlock refuses, uv writes the lock",
    ),
    "opencv-headless-replaced": Case(
        cwd=_local("opencv-headless"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        replace=["opencv-python"],
        note="the same with the image's opencv-python replaced on purpose: both tools agree",
    ),
    "two-pythons": Case(
        cwd=_local("two-pythons"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        targets=[("3.10", "x86_64-manylinux_2_28"), ("3.12", "x86_64-manylinux_2_28")],
        note="Python 3.10 and 3.12 in one lock: 3.12 is held to the versions 3.10 can take",
    ),
    "jupyterlab-two-platforms": Case(
        cwd=_local("jupyterlab-aarch64"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        targets=[
            ("3.12", "x86_64-manylinux_2_28"), ("3.12", "aarch64-manylinux_2_28"),
            ("3.13", "x86_64-manylinux_2_28"), ("3.13", "aarch64-manylinux_2_28"),
        ],
        note="a large tree for x86_64 and aarch64 x Python 3.12 and 3.13 in one lock",
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
    "sdist-leaf": Case(
        cwd=_local("sdist-leaf"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        note="packages that ship only an sdist, read statically, never built",
    ),
    "sdist-middle": Case(
        cwd=_local("sdist-middle"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        note="wheels whose dependency (docopt) ships only an sdist",
    ),
    "sdist-no-target-wheel": Case(
        cwd=_local("sdist-no-target-wheel"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.12",
        platform="x86_64-manylinux_2_28",
        note="versions with wheels for other Pythons only: the sdist serves on 3.12",
    ),
    "setup-py-shapes": Case(
        cwd=_local("setup-py-shapes"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.11",
        platform="x86_64-pc-windows-msvc",
        note="setup.py shapes found on real inputs: comments, escapes, blank entries, ** of a dict, exec into a dict, a keyed extra; a zip sdist",
    ),
    "python-minor": Case(
        cwd=_local("python-minor"),
        inputs=["requirements.in"],
        bases=["base.txt"],
        python="3.9",
        platform="x86_64-manylinux_2_28",
        note="a bare 3.9 against requires-python !=3.9.0,!=3.9.1 (uv's lower-bound rule)",
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
    # sha256 -> file name, where the lock names its files (pylock.toml), so
    # that a hash difference can say which files differ.
    files: dict[str, str] = dataclasses.field(default_factory=dict)


def parse_lock(text: str, env: dict[str, str] | None = None) -> dict[str, Pin]:
    """Read a hash-pinned requirements file (as uv or layerlock writes it).
    With `env` (marker values), only the entries whose marker holds there."""
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
        if match and not line[:1].isspace() and env is not None:
            marker = stripped[match.end():].split("--hash", 1)[0].strip()
            if marker.startswith(";") and not marker_holds(marker[1:].strip(), env):
                current = None
                continue
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


def marker_holds(marker: str, env: dict[str, str]) -> bool:
    """Whether a PEP 508 marker holds in `env`: judged by the packaging
    library pip carries (this machine's pip; no other package needed)."""
    from pip._vendor.packaging.markers import Marker

    return Marker(marker).evaluate(env)


def marker_env(python: str, platform: str) -> dict[str, str]:
    """The marker values of a Linux target as layerlock and uv set them."""
    machine = platform.split("-", 1)[0]
    if not platform.endswith(("manylinux_2_17", "manylinux_2_28")) and "linux" not in platform:
        raise ValueError(f"marker_env knows Linux targets only, not {platform}")
    return {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": machine,
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "implementation_version": f"{python}.0",
        "platform_release": "",
        "platform_version": "",
    }


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
# pylock.toml (PEP 751)


@dataclasses.dataclass
class LockedFile:
    """One file of a pylock.toml package: a wheel or the sdist."""

    name: str
    sha256: str | None
    # As the lock gives them (None when absent); checked against PyPI.
    size: object
    upload_time: object


@dataclasses.dataclass
class LockedPackage:
    version: str
    files: list[LockedFile]


def locked_file(entry: object, package: str) -> LockedFile:
    """A `wheels` item or the `sdist` table. Its file name is `name`, else
    the last segment of its `url` or `path` (PEP 751); uv writes no `name`."""
    if not isinstance(entry, dict):
        raise ValueError(f"{package}: a file entry is not a table")
    name = entry.get("name")
    if not isinstance(name, str):
        where = entry.get("url") or entry.get("path") or ""
        name = urllib.parse.unquote(urllib.parse.urlsplit(where).path.rsplit("/", 1)[-1])
    if not name:
        raise ValueError(f"{package}: a file with no name, url or path")
    hashes = entry.get("hashes")
    sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
    return LockedFile(
        name=name,
        sha256=sha256.lower() if isinstance(sha256, str) else None,
        size=entry.get("size"),
        upload_time=entry.get("upload-time"),
    )


def parse_pylock(text: str) -> tuple[dict, dict[str, LockedPackage]]:
    """Read a pylock.toml (as uv or layerlock writes it): its top-level
    table, and its packages by normalised name. tomllib reads uv's inline
    `sdist = {...}` / `wheels = [{...}]` and layerlock's `[packages.sdist]` /
    `[[packages.wheels]]` tables alike."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {exc}") from None
    packages: dict[str, LockedPackage] = {}
    for entry in doc.get("packages", []):
        if not isinstance(entry.get("name"), str) or not isinstance(entry.get("version"), str):
            raise ValueError("a package without a `name` or a `version`")
        name = normalize(entry["name"])
        if name in packages:
            raise ValueError(f"{name} is locked twice")
        for kind in ("vcs", "directory", "archive"):
            if kind in entry:
                raise ValueError(f"{name} is locked from a {kind}, not from the index")
        files = [locked_file(w, name) for w in entry.get("wheels", [])]
        if "sdist" in entry:
            files.append(locked_file(entry["sdist"], name))
        packages[name] = LockedPackage(entry["version"], files)
    return doc, packages


def pylock_pins(
    packages: dict[str, LockedPackage], keep: TargetTags | None = None
) -> dict[str, Pin]:
    """The packages as pins whose hashes are those of their files (only the
    ones `keep` says are installable on the target, when given)."""
    pins = {}
    for name, package in packages.items():
        files = [f for f in package.files if keep is None or keep.installable(f.name)]
        pins[name] = Pin(
            package.version,
            {f.sha256 for f in files if f.sha256},
            {f.sha256: f.name for f in files if f.sha256},
        )
    return pins


# The platform names the cases use, as `uv pip compile --python-platform`
# and layerlock's --platform spell them, the aliases mapped first.
PLATFORM_ALIASES = {
    "linux": "x86_64-manylinux_2_28",
    "macos": "aarch64-apple-darwin",
    "windows": "x86_64-pc-windows-msvc",
    "x86_64-unknown-linux-gnu": "x86_64-manylinux_2_28",
    "aarch64-unknown-linux-gnu": "aarch64-manylinux_2_28",
    "x86_64-unknown-linux-musl": "x86_64-musllinux_1_2",
    "aarch64-unknown-linux-musl": "aarch64-musllinux_1_2",
}
# The legacy manylinux names, as the glibc minor version they stand for.
LEGACY_MANYLINUX = {"manylinux1": 5, "manylinux2010": 12, "manylinux2014": 17}
# macOS wheel architectures a CPU runs, and uv's default deployment target
# (which layerlock uses too) per CPU.
MACOS_FORMATS = {
    "arm64": ["arm64", "universal2"],
    "x86_64": ["x86_64", "intel", "fat64", "fat32", "universal2", "universal"],
}
MACOS_DEFAULT = {"arm64": 13, "x86_64": 12}
WINDOWS = {"x86_64": "win_amd64", "aarch64": "win_arm64", "i686": "win32"}


def platform_tags(platform: str) -> frozenset[str]:
    """The PEP 425 platform tags a target platform accepts (besides `any`),
    as uv's platform-tags crate computes them (layerlock uses that crate)."""
    platform = PLATFORM_ALIASES.get(platform, platform)
    arch, _, rest = platform.partition("-")
    arch = {"amd64": "x86_64", "arm64": "aarch64", "x86": "i686"}.get(arch, arch)
    if rest in LEGACY_MANYLINUX:
        rest = f"manylinux_2_{LEGACY_MANYLINUX[rest]}"
    if match := re.fullmatch(r"manylinux_2_(\d+)", rest):
        # Every glibc from the oldest manylinux for the CPU up to the
        # target's, with the legacy names of 2.5, 2.12 and 2.17, and the
        # bare `linux_ARCH`.
        oldest = 5 if arch in ("x86_64", "i686") else 17
        tags = {f"linux_{arch}"}
        for minor in range(oldest, int(match.group(1)) + 1):
            tags.add(f"manylinux_2_{minor}_{arch}")
            for legacy, legacy_minor in LEGACY_MANYLINUX.items():
                if minor == legacy_minor:
                    tags.add(f"{legacy}_{arch}")
        return frozenset(tags)
    if match := re.fullmatch(r"musllinux_1_(\d+)", rest):
        tags = {f"musllinux_1_{minor}_{arch}" for minor in range(int(match.group(1)) + 1)}
        return frozenset(tags | {f"linux_{arch}"})
    if rest == "apple-darwin" and arch in ("aarch64", "x86_64"):
        cpu = "arm64" if arch == "aarch64" else "x86_64"
        formats = MACOS_FORMATS[cpu]
        # macOS 11 and later by major version; 10.4-10.16 only for the
        # formats that carry an x86_64 part (just universal2 on Apple silicon).
        tags = {
            f"macosx_{major}_0_{fmt}"
            for major in range(11, MACOS_DEFAULT[cpu] + 1)
            for fmt in formats
        }
        older = formats if cpu == "x86_64" else ["universal2"]
        tags |= {f"macosx_10_{minor}_{fmt}" for minor in range(4, 17) for fmt in older}
        return frozenset(tags)
    if rest == "pc-windows-msvc" and arch in WINDOWS:
        return frozenset({WINDOWS[arch]})
    raise ValueError(f"no platform tags known for `{platform}`; teach platform_tags() about it")


@dataclasses.dataclass(frozen=True)
class TargetTags:
    """Which wheels CPython `python` (3.Y) on `platform` can install: the
    PEP 425 tag triples uv (and layerlock) accept for the target."""

    major: int
    minor: int
    platforms: frozenset[str]

    @classmethod
    def of(cls, case: Case) -> TargetTags:
        major, minor = (int(p) for p in case.python.split(".")[:2])
        return cls(major, minor, platform_tags(case.platform))

    def supports(self, py: str, abi: str, plat: str) -> bool:
        """Whether one (python, abi, platform) tag triple is accepted."""
        cp = f"cp{self.major}{self.minor}"
        # py3 and py3N for every N up to the target's minor version.
        generic = {f"py{self.major}"} | {f"py{self.major}{m}" for m in range(self.minor + 1)}
        if plat == "any":
            # Pure wheels: no ABI, for any Python 3 up to this one, or this CPython.
            return abi == "none" and (py == cp or py in generic)
        if plat not in self.platforms:
            return False
        if abi == cp:
            return py == cp
        if abi == "abi3":
            # The stable ABI from CPython 3.2 up to the target.
            return py in {f"cp{self.major}{m}" for m in range(2, self.minor + 1)}
        if abi == "none":
            return py == cp or py in generic
        return False

    def installable(self, filename: str) -> bool:
        """A wheel whose tags the target accepts, or an sdist (uv's
        pylock.toml lists the sdist: uv would build it on the target)."""
        if not filename.endswith(".whl"):
            return True
        # name-version[-build]-python-abi-platform.whl; each tag may be a
        # `.`-separated set.
        parts = filename[: -len(".whl")].split("-")
        if len(parts) not in (5, 6):
            return False
        pys, abis, plats = (part.lower().split(".") for part in parts[-3:])
        return any(self.supports(py, abi, plat) for py in pys for abi in abis for plat in plats)


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


# The two comparisons of a case, in the order they run, and how they are
# reported: the requirements one under the case's name (as before the
# pylock.toml one existed), the other as `case [pylock]`.
VARIANTS = ("requirements", "pylock")


def label(name: str, variant: str) -> str:
    return name if variant == "requirements" else f"{name} [{variant}]"


@dataclasses.dataclass
class Result:
    label: str
    ok: bool
    detail: str
    # Why PyPI could not be reached, when that is why this failed.
    unreachable: str | None = None


@dataclasses.dataclass
class Setup:
    """What both comparisons of a case share."""

    cdir: Path
    env: dict[str, str]
    constraints: Path  # the base (and owned pins) as uv's -c file
    skip: set[str]  # dropped from uv's output: in the base, or owned
    # Whether uv's requirements run succeeded, so that its cache now holds
    # everything resolving this case takes.
    uv_cached: bool = False


def prepare(name: str, case: Case, args: argparse.Namespace, work: Path) -> Setup | str:
    """Check the case's inputs and work out uv's view of the base. Returns a
    failure message instead when that cannot be done."""
    cdir = work / name
    cdir.mkdir(parents=True, exist_ok=True)
    env = tool_env()

    for rel in case.inputs + case.bases:
        if not (case.cwd / rel).is_file():
            # A fresh clone elsewhere has no vLLM corpus beside it: its
            # cases are skipped, said so, never failed or passed.
            if not VLLM_REQ.is_dir() and VLLM_REQ in (case.cwd / rel).parents:
                raise Skipped("vLLM's corpus is not beside this checkout (../shared/corpus/vllm)")
            return f"missing input file {case.cwd / rel}"

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
            return applying
        base_names |= applying
    return Setup(cdir, env, constraints, base_names | owned_names(case))


def run_tools(
    name: str, case: Case, args: argparse.Namespace, setup: Setup, variant: str
) -> tuple[Run, Run, str]:
    """Run layerlock, then uv, writing the variant's format. Returns both
    runs and a note of their times.

    The pylock variant runs right after the requirements one, so layerlock
    finds its cache warm. uv would too, but it revalidates every cached page,
    and an index that sends no ETag or max-age (as some PyPI mirrors do)
    answers each revalidation with the whole page again. So uv is run
    --offline on the cache its requirements run just filled from PyPI: the
    same index data, fetched moments ago. Should that fail (something not
    cached), uv is run again online, and that run is the one compared."""
    cdir = setup.cdir
    if variant == "requirements":
        ll_out, uv_out = cdir / "layerlock.txt", cdir / "uv.txt"
        ll_err, uv_err = cdir / "layerlock.stderr", cdir / "uv.stderr"
        uv_format = ["--generate-hashes"]
    else:
        # layerlock picks PEP 751 from the output's name (pylock.NAME.toml);
        # uv is told, and lists hashes in that format without being asked.
        ll_out, uv_out = cdir / "pylock.layerlock.toml", cdir / "pylock.uv.toml"
        ll_err, uv_err = cdir / "layerlock.pylock.stderr", cdir / "uv.pylock.stderr"
        uv_format = ["--format", "pylock.toml"]

    ll_cmd = [args.layerlock, "compile", *case.inputs]
    for rel in case.bases:
        ll_cmd += ["--base", rel]
    ll_cmd += ["--python-version", case.python, "--platform", case.platform]
    for spec in case.owned:
        ll_cmd += ["--owned", spec]
    ll_cmd += overrides_and_replace(case)
    if case.prerelease:
        ll_cmd += ["--prerelease", case.prerelease]
    ll_cmd += ["--exclude-newer", EXCLUDE_NEWER, "--quiet", "-o", str(ll_out)]
    ll_cmd += ["--cache-dir", str(args.cache_root / "layerlock")]

    uv_cmd = [args.uv, "pip", "compile", *case.inputs, "-c", str(setup.constraints)]
    uv_cmd += ["--python-platform", case.platform, "--python-version", case.python]
    uv_cmd += ["--exclude-newer", EXCLUDE_NEWER, *uv_format, "--no-header"]
    uv_cmd += ["--index-url", "https://pypi.org/simple"]
    for path in case.overrides:
        uv_cmd += ["--override", path]
    if case.prerelease:
        uv_cmd += ["--prerelease", case.prerelease]
    uv_cmd += ["--cache-dir", str(args.cache_root / "uv"), "-o", str(uv_out)]

    # uv pip compile takes an existing output file as preferences: start
    # from nothing so an earlier run (--keep) cannot steer either tool.
    for stale in (ll_out, uv_out):
        stale.unlink(missing_ok=True)

    def run_uv() -> tuple[Run, str]:
        """uv's run, and a note on how it ran."""
        if variant != "pylock" or not setup.uv_cached:
            return run(uv_cmd, case.cwd, uv_out, setup.env), ""
        offline = run([*uv_cmd, "--offline"], case.cwd, uv_out, setup.env)
        if offline.code == 0:
            return offline, " offline"
        uv_out.unlink(missing_ok=True)
        online = run(uv_cmd, case.cwd, uv_out, setup.env)
        return online, f" (offline failed in {offline.seconds:.1f}s: {last_lines(offline.stderr, 1)})"

    if variant == "pylock":
        # Nothing is shared between the two runs: uv's (offline, light on
        # both CPU and network) runs beside layerlock's.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as side:
            uv_run = side.submit(run_uv)
            ll = run(ll_cmd, case.cwd, ll_out, setup.env)
            uv, uv_note = uv_run.result()
    else:
        ll = run(ll_cmd, case.cwd, ll_out, setup.env)
        uv, uv_note = run_uv()
    if variant == "requirements":
        setup.uv_cached = uv.code == 0
    ll_err.write_text(ll.stderr)
    uv_err.write_text(uv.stderr)

    if uv.code != 0 and NETWORK_ERROR_RE.search(uv.stderr):
        raise Unreachable(f"uv could not reach PyPI in case {name}: {last_lines(uv.stderr, 3)}")
    return ll, uv, f"layerlock {ll.seconds:.1f}s, uv {uv.seconds:.1f}s{uv_note}"


def expected_clash(case: Case, ll: Run, uv: Run, timing: str) -> tuple[bool, str]:
    """The verdict on a case only layerlock must refuse: a file clash."""
    assert case.clash is not None
    problems = []
    if ll.code != 2:
        problems.append(f"layerlock exited {ll.code}, expected 2")
    elif not re.search(case.clash, ll.stderr):
        problems.append(f"layerlock stderr does not match /{case.clash}/: {last_lines(ll.stderr)}")
    if uv.code != 0:
        problems.append(f"uv exited {uv.code}: {last_lines(uv.stderr)}")
    if problems:
        return False, "; ".join(problems)
    return True, f"layerlock refuses the clash, uv writes the lock ({timing})"


def expected_failure(case: Case, ll: Run, uv: Run, timing: str) -> tuple[bool, str]:
    """The verdict on a case both tools must refuse."""
    assert case.expect_failure is not None
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


def compare_pins(
    name: str, mine: dict[str, Pin], theirs: dict[str, Pin], skip: set[str]
) -> tuple[list[str], str]:
    """Compare layerlock's pins with uv's (base/owned already dropped from
    uv's): names, versions, hash sets. Returns the differences not listed in
    DIVERGENCES, and a note on the listed ones."""
    known = {normalize(k): v for k, v in DIVERGENCES.get(name, {}).items()}
    diffs: list[str] = []
    seen_known: set[str] = set()

    def differ(pkg: str, text: str) -> None:
        if pkg in known:
            seen_known.add(pkg)
        else:
            diffs.append(text)

    def some(files: dict[str, str], hashes: set[str]) -> str:
        # Name up to three of the files behind `hashes`, when the lock names them.
        names = sorted(files[h] for h in hashes if h in files)
        if not names:
            return ""
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        return ": " + ", ".join(names[:3]) + more

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
            only_a, only_b = a.hashes - b.hashes, b.hashes - a.hashes
            differ(
                pkg,
                f"{pkg}=={a.version}: hashes differ "
                f"(layerlock-only {len(only_a)}{some(a.files, only_a)}, "
                f"uv-only {len(only_b)}{some(b.files, only_b)})",
            )
        elif not a.hashes:
            differ(pkg, f"{pkg}=={a.version}: no hashes")

    extra = ""
    if seen_known:
        extra = f", {len(seen_known)} known divergence(s): {', '.join(sorted(seen_known))}"
    stale = sorted(set(known) - seen_known)
    if stale:
        extra += f", listed divergence(s) no longer seen: {', '.join(stale)}"
    return diffs, extra


def tool_failure(ll: Run, uv: Run) -> str | None:
    """Why the two tools' outputs cannot be compared, if one of them failed."""
    if ll.code != 0 or ll.output is None:
        return f"layerlock exited {ll.code}: {last_lines(ll.stderr)}"
    if uv.code != 0 or uv.output is None:
        return f"uv exited {uv.code}: {last_lines(uv.stderr)}"
    return None


def compare_requirements(
    name: str, case: Case, args: argparse.Namespace, setup: Setup
) -> tuple[bool, str]:
    """Hash-pinned requirements files: every file of each version on both sides."""
    ll, uv, timing = run_tools(name, case, args, setup, "requirements")
    if case.expect_failure is not None:
        return expected_failure(case, ll, uv, timing)
    if case.clash is not None:
        return expected_clash(case, ll, uv, timing)
    failed = tool_failure(ll, uv)
    if failed:
        return False, failed

    try:
        mine = parse_lock(ll.output)
    except ValueError as exc:
        return False, f"cannot parse layerlock output: {exc}"
    try:
        theirs = {k: v for k, v in parse_lock(uv.output).items() if k not in setup.skip}
    except ValueError as exc:
        return False, f"cannot parse uv output: {exc}"

    diffs, extra = compare_pins(name, mine, theirs, setup.skip)
    if diffs:
        return False, f"{len(diffs)} difference(s): " + "; ".join(diffs)
    return True, f"{len(mine)} packages agree ({timing}{extra})"


def compare_pylock(
    name: str, case: Case, args: argparse.Namespace, setup: Setup
) -> tuple[bool, str]:
    """PEP 751 pylock.toml: the files installable on the target on both
    sides, layerlock's header, and layerlock's file data against PyPI."""
    ll, uv, timing = run_tools(name, case, args, setup, "pylock")
    if case.expect_failure is not None:
        return expected_failure(case, ll, uv, timing)
    if case.clash is not None:
        return expected_clash(case, ll, uv, timing)
    failed = tool_failure(ll, uv)
    if failed:
        return False, failed

    try:
        doc, packages = parse_pylock(ll.output)
    except ValueError as exc:
        return False, f"cannot parse layerlock's pylock.toml: {exc}"
    try:
        _, uv_packages = parse_pylock(uv.output)
    except ValueError as exc:
        return False, f"cannot parse uv's pylock.toml: {exc}"

    # layerlock lists every file of a version (--hashes all), uv only those
    # installable on the target: compare on uv's basis.
    target = TargetTags.of(case)
    mine = pylock_pins(packages, keep=target)
    theirs = {k: v for k, v in pylock_pins(uv_packages).items() if k not in setup.skip}
    diffs, extra = compare_pins(name, mine, theirs, setup.skip)

    # What PEP 751 asks of the file as a whole.
    for key, want in (("lock-version", "1.0"), ("created-by", "layerlock")):
        if doc.get(key) != want:
            diffs.append(f"{key} is {doc.get(key)!r}, expected {want!r}")

    start = time.monotonic()
    diffs += check_against_pypi(packages)
    files = sum(len(p.files) for p in packages.values())
    timing += f", PyPI index {time.monotonic() - start:.1f}s"

    if diffs:
        return False, f"{len(diffs)} difference(s): " + "; ".join(diffs)
    return True, (
        f"{len(mine)} packages agree, {files} files match PyPI ({timing}{extra})"
    )


# "  kvconn 1.5.1 on Python 3.12 on x86_64-… (alone it would take 1.5.2; …"
HELD_RE = re.compile(
    r"^  (?P<name>\S+) (?P<version>\S+) on Python (?P<python>\S+) on (?P<platform>\S+) "
    r"\(alone it would take (?P<alone>[^;]+);"
)


def compare_targets(name: str, case: Case, args: argparse.Namespace, work: Path) -> list[Result]:
    """One lock for several targets: layerlock compiles them together; uv
    compiles each alone (its base as constraints). For each target, the
    lock's entries whose markers hold there must equal uv's pins and hashes,
    except where layerlock says it held a package to the version another
    target takes and uv's version is the one it says the target alone
    would take: those are noted, not failed."""
    setups = {}
    for python, platform in case.targets:
        one = dataclasses.replace(case, python=python, platform=platform, targets=[])
        setup = prepare(f"{name}/{python}-{platform}", one, args, work)
        if isinstance(setup, str):
            return [Result(f"{name} [{python} {platform}]", False, setup)]
        setups[(python, platform)] = (one, setup)
    cdir = work / name
    ll_out = cdir / "layerlock.txt"
    ll_out.unlink(missing_ok=True)
    ll_cmd = [args.layerlock, "compile", *case.inputs]
    for rel in case.bases:
        ll_cmd += ["--base", rel]
    for python in dict.fromkeys(p for p, _ in case.targets):
        ll_cmd += ["--python-version", python]
    for platform in dict.fromkeys(p for _, p in case.targets):
        ll_cmd += ["--platform", platform]
    for spec in case.owned:
        ll_cmd += ["--owned", spec]
    ll_cmd += overrides_and_replace(case)
    ll_cmd += ["--exclude-newer", EXCLUDE_NEWER, "-o", str(ll_out)]
    ll_cmd += ["--cache-dir", str(args.cache_root / "layerlock")]
    first_setup = next(iter(setups.values()))[1]
    ll = run(ll_cmd, case.cwd, ll_out, first_setup.env)
    (cdir / "layerlock.stderr").write_text(ll.stderr)
    held = {}
    for line in ll.stderr.splitlines():
        m = HELD_RE.match(line)
        if m:
            held[(normalize(m["name"]), m["python"], m["platform"])] = (m["version"], m["alone"])
    results = []
    for (python, platform), (one, setup) in setups.items():
        label_t = f"{name} [{python} {platform}]"
        if ll.code != 0 or ll.output is None:
            results.append(Result(label_t, False, f"layerlock exited {ll.code}: {last_lines(ll.stderr)}"))
            continue
        uv_out = setup.cdir / "uv.txt"
        uv_out.unlink(missing_ok=True)
        uv_cmd = [args.uv, "pip", "compile", *case.inputs, "-c", str(setup.constraints)]
        uv_cmd += ["--python-platform", platform, "--python-version", python]
        uv_cmd += ["--exclude-newer", EXCLUDE_NEWER, "--generate-hashes", "--no-header"]
        uv_cmd += ["--index-url", "https://pypi.org/simple"]
        for path in case.overrides:
            uv_cmd += ["--override", path]
        uv_cmd += ["--cache-dir", str(args.cache_root / "uv"), "-o", str(uv_out)]
        uv = run(uv_cmd, case.cwd, uv_out, setup.env)
        if uv.code != 0 and NETWORK_ERROR_RE.search(uv.stderr):
            raise Unreachable(f"uv could not reach PyPI in case {name}: {last_lines(uv.stderr, 3)}")
        if uv.code != 0 or uv.output is None:
            results.append(Result(label_t, False, f"uv exited {uv.code}: {last_lines(uv.stderr)}"))
            continue
        mine = parse_lock(ll.output, marker_env(python, platform))
        theirs = {k: v for k, v in parse_lock(uv.output).items() if k not in setup.skip}
        # What layerlock held to another target's version: uv alone must
        # take the version layerlock says this target would take alone;
        # then uv, given the held versions as constraints, must agree with
        # the lock whole (what the held versions pull in or leave out too).
        notes = []
        held_here = {pkg: said for (pkg, py, plat), said in held.items()
                     if (py, plat) == (python, platform)}
        for pkg, (version, alone) in sorted(held_here.items()):
            got = theirs.get(pkg)
            if got is None or got.version != alone:
                notes_bad = f"{pkg}: layerlock says alone {alone}, uv alone {got.version if got else 'none'}"
                results.append(Result(label_t, False, notes_bad))
                break
            notes.append(f"{pkg} held to {version} (uv alone: {alone})")
        else:
            if held_here:
                held_constraints = setup.cdir / "uv-constraints-held.txt"
                held_constraints.write_text(
                    setup.constraints.read_text()
                    + "".join(f"{pkg}=={version}\n" for pkg, (version, _) in sorted(held_here.items()))
                )
                uv_held_out = setup.cdir / "uv-held.txt"
                uv_held_out.unlink(missing_ok=True)
                held_cmd = [a if a != str(setup.constraints) else str(held_constraints) for a in uv_cmd]
                held_cmd[held_cmd.index(str(uv_out))] = str(uv_held_out)
                uv = run(held_cmd, case.cwd, uv_held_out, setup.env)
                if uv.code != 0 or uv.output is None:
                    results.append(Result(label_t, False, f"uv with the held versions exited {uv.code}: {last_lines(uv.stderr)}"))
                    continue
                theirs = {k: v for k, v in parse_lock(uv.output).items() if k not in setup.skip}
        if len(results) and results[-1].label == label_t:
            continue
        diffs, extra = compare_pins(name, mine, theirs, setup.skip)
        if notes:
            extra += "; " + "; ".join(notes)
        if diffs:
            results.append(Result(label_t, False, f"{len(diffs)} difference(s): " + "; ".join(diffs)))
        else:
            results.append(Result(
                label_t, True,
                f"{len(mine)} packages agree (layerlock {ll.seconds:.1f}s for all targets, uv {uv.seconds:.1f}s{extra})",
            ))
    return results


def run_case(name: str, case: Case, args: argparse.Namespace, work: Path) -> list[Result]:
    """Both comparisons of one case, one Result each, in VARIANTS order. The
    pylock.toml one runs right after the requirements one, so that both
    tools find their caches warm. Raises Skipped for a case that cannot run
    here."""
    if case.targets:
        try:
            return compare_targets(name, case, args, work)
        except Unreachable as exc:
            return [Result(name, False, f"PyPI unreachable: {exc}", str(exc))]
    try:
        setup = prepare(name, case, args, work)
    except Unreachable as exc:
        return [
            Result(label(name, v), False, f"PyPI unreachable: {exc}", str(exc)) for v in VARIANTS
        ]
    if isinstance(setup, str):
        return [Result(label(name, v), False, setup) for v in VARIANTS]
    compare = {"requirements": compare_requirements, "pylock": compare_pylock}
    results = []
    for variant in VARIANTS:
        # One variant's trouble must not hide the other's verdict.
        try:
            ok, detail = compare[variant](name, case, args, setup)
            results.append(Result(label(name, variant), ok, detail))
            if variant == "requirements":
                prefetch_projects(setup.cdir / "layerlock.txt")
        except Unreachable as exc:
            detail = f"PyPI unreachable: {exc}"
            results.append(Result(label(name, variant), False, detail, str(exc)))
        except Exception as exc:  # a bug in this script: report, don't hide
            detail = f"harness error: {type(exc).__name__}: {exc}"
            results.append(Result(label(name, variant), False, detail))
    return results


# --------------------------------------------------------------------------
# PyPI's JSON index (PEP 691/700): the sizes and upload times a pylock.toml
# should carry


@dataclasses.dataclass
class IndexFile:
    sha256: str | None
    size: int | None
    upload_time: datetime.datetime | None


# Normalised project name -> the lookup of its files on PyPI: a future of
# {file name: IndexFile}, or of None when PyPI has no such project. Shared by
# all cases of a run, so that each project is fetched once, and started early
# (see prefetch_projects) so that the lookups overlap the tools' runs.
_projects: dict[str, concurrent.futures.Future] = {}
_projects_lock = threading.Lock()
_fetcher = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="pypi-index")
# Each fetcher thread keeps one connection to PyPI open: a DNS lookup and a
# TLS handshake per request cost far more than the page (and a burst of
# lookups makes some resolvers fail).
_connection = threading.local()
_tls = ssl.create_default_context()


def pypi_project(name: str) -> concurrent.futures.Future:
    """The lookup of one project's files on PyPI, started if it was not yet."""
    with _projects_lock:
        if name not in _projects:
            _projects[name] = _fetcher.submit(fetch_project, name)
        return _projects[name]


def prefetch_projects(lock: Path) -> None:
    """Start looking up the projects layerlock's requirements output pins:
    its pylock.toml for the same case pins the same ones."""
    try:
        pins = parse_lock(lock.read_text())
    except (OSError, ValueError):
        return  # the requirements comparison has said what is wrong
    for name in pins:
        pypi_project(name)


def parse_time(text: str | None) -> datetime.datetime | None:
    # PyPI writes `2024-05-28T17:01:53.112046Z`.
    return datetime.datetime.fromisoformat(text) if text else None


def get_json(path: str) -> tuple[int, object]:
    """GET https://PYPI_HOST/path as PEP 691 JSON on this thread's kept-alive
    connection. Returns the status and, for a 200, the parsed body."""
    conn = getattr(_connection, "conn", None)
    if conn is None:
        conn = _connection.conn = http.client.HTTPSConnection(PYPI_HOST, timeout=60, context=_tls)
    try:
        conn.request("GET", path, headers={"Accept": PYPI_SIMPLE_JSON})
        resp = conn.getresponse()
        body = resp.read()
    except (OSError, http.client.HTTPException):
        # The next request starts over on a new connection.
        conn.close()
        _connection.conn = None
        raise
    return resp.status, (json.loads(body) if resp.status == 200 else None)


def fetch_project(name: str) -> dict[str, IndexFile] | None:
    """The files PyPI's JSON simple index lists for a project, by file name,
    with the sha256, `size` and `upload-time` it gives for each."""
    path = PYPI_SIMPLE_PATH.format(name=urllib.parse.quote(name))
    last: object = None
    for attempt in range(3):
        if attempt:
            time.sleep(2 * attempt)
        try:
            status, page = get_json(path)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            last = exc  # a dropped connection, a timeout, a truncated page
            continue
        if status == 404:
            return None
        if status != 200:
            last = f"HTTP {status}"
            continue
        return {
            f["filename"]: IndexFile(
                (f.get("hashes") or {}).get("sha256", "").lower() or None,
                f.get("size"),
                parse_time(f.get("upload-time")),
            )
            for f in page["files"]
        }
    raise Unreachable(f"https://{PYPI_HOST}{path}: {last}")


def check_against_pypi(packages: dict[str, LockedPackage]) -> list[str]:
    """Each file layerlock's pylock.toml locks is one of the project's files
    on PyPI, with PyPI's sha256, and carries `size` and `upload-time` equal to
    PyPI's wherever PyPI gives them. Returns the problems found."""
    lookups = {name: pypi_project(name) for name in packages}
    problems = []
    for name in sorted(packages):
        version = packages[name].version
        index_files = lookups[name].result()
        if index_files is None:
            problems.append(f"{name}=={version}: PyPI's index does not know this project")
            continue
        for f in packages[name].files:
            index = index_files.get(f.name)
            where = f"{name}=={version}: {f.name}"
            if index is None:
                problems.append(f"{where}: not one of the project's files on PyPI")
                continue
            if index.sha256 and f.sha256 != index.sha256:
                problems.append(f"{where}: sha256 {f.sha256}, PyPI {index.sha256}")
            if index.size is not None:
                if f.size is None:
                    problems.append(f"{where}: no size (PyPI: {index.size})")
                elif f.size != index.size:
                    problems.append(f"{where}: size {f.size!r}, PyPI {index.size}")
            if index.upload_time is not None:
                got = f.upload_time
                if got is None:
                    problems.append(f"{where}: no upload-time (PyPI: {index.upload_time})")
                elif not isinstance(got, datetime.datetime) or got.tzinfo is None:
                    # PEP 751: a TOML offset date-time, in UTC.
                    problems.append(f"{where}: upload-time {got!r} is not a UTC date-time")
                elif got != index.upload_time:
                    problems.append(f"{where}: upload-time {got}, PyPI {index.upload_time}")
    return problems


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
    parser.add_argument("--keep", type=Path, help="keep every output of every case here")
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
        print(f"0 passed, {len(selected) * len(VARIANTS)} failed")
        return 1
    args.layerlock = str(Path(layerlock).resolve())
    args.uv = uv
    version = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"differential: {len(selected)} case(s), {version}, exclude-newer {EXCLUDE_NEWER}")

    unreachable = probe_pypi()
    if unreachable:
        print(f"error: PyPI is unreachable, so the differential suite cannot run: {unreachable}")
        print(f"0 passed, {len(selected) * len(VARIANTS)} failed")
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
            for future in concurrent.futures.as_completed(futures):
                name = futures[future]
                try:
                    results = future.result()
                except Skipped as exc:
                    # Neither comparison can run; each says so.
                    for variant in VARIANTS:
                        skipped += 1
                        print(f"SKIP {label(name, variant)}: {exc}", flush=True)
                    continue
                except Exception as exc:  # a bug in this script: report, don't hide
                    detail = f"harness error: {type(exc).__name__}: {exc}"
                    results = [Result(label(name, v), False, detail) for v in VARIANTS]
                for result in results:
                    if result.unreachable:
                        net_error = result.unreachable
                    if result.ok:
                        passed += 1
                        print(f"PASS {result.label} ({result.detail})", flush=True)
                    else:
                        failed += 1
                        print(f"FAIL {result.label}: {result.detail}", flush=True)
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
