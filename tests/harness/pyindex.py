#!/usr/bin/env python3
"""pyindex: test harness for layerlock's integration tests.

Builds tiny, deterministic wheels and sdists from TOML scenario files and
serves them from a real HTTP "simple" package index (PEP 503 HTML, PEP 691
JSON, PEP 700 extra fields, PEP 658/714 core metadata files, HTTP ranges).

Standard library only (Python >= 3.11).  See README.md next to this file.

    pyindex.py build SCENARIO.toml [SCENARIO.toml ...] OUTDIR
    pyindex.py serve [SCENARIO.toml ...] [--root DIR] [--port N] [--no-range]
                     [--auth USER:PASS] [--log FILE] [--fail-first N]
                     [--no-upload-time] [--extra-dir DIR] [--stdin-lifetime]
"""

from __future__ import annotations

import argparse
import base64
import csv
import dataclasses
import datetime as dt
import gzip
import hashlib
import hmac
import html
import io
import json
import os
import re
import shutil
import signal
import socket
import sys
import tarfile
import tempfile
import threading
import time
import tomllib
import traceback
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote

GENERATOR = "layerlock-pyindex 1.0"
ZIP_DATE_TIME = (1980, 1, 1, 0, 0, 0)  # fixed => byte-identical builds
TAR_MTIME = 315532800  # 1980-01-01T00:00:00Z
DEFAULT_UPLOAD_TIME = "2024-01-01T00:00:00Z"
API_VERSION = "1.1"
JSON_CT = "application/vnd.pypi.simple.v1+json"
HTML_CT = "text/html; charset=utf-8"
FILE_CT = "application/octet-stream"

NAME_RE = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)
TAG_PART_RE = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
TOP_KEYS = {"upload_time", "package"}
PACKAGE_KEYS = {
    "name", "version", "requires_dist", "provides_extra", "requires_python",
    "tags", "sdist", "yanked", "upload_time", "metadata_file", "wrong_hash",
    "module", "extra_files", "metadata_name", "filler", "filler_size", "metadata_first",
    "sdist_metadata"}
# Where an sdist keeps its dependencies: a static PKG-INFO (2.2), one that
# declares them Dynamic, a 2.1 PKG-INFO beside a static pyproject.toml
# [project], a declarative setup.cfg, or a setup.py that computes them.
SDIST_METADATA = ("static", "dynamic", "pyproject", "setup-cfg", "setup-py")


class ScenarioError(Exception):
    """A problem with a scenario file or the command line."""


# --------------------------------------------------------------------------
# Names, versions, times
# --------------------------------------------------------------------------

def path_matches(path: str, needle: str) -> bool:
    return needle in path


def normalize(name: str) -> str:
    """PEP 503 project name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def escape_name(name: str) -> str:
    """Distribution name as used in wheel/sdist file names and dist-info dirs."""
    return normalize(name).replace("-", "_")


def escape_version(version: str) -> str:
    return version.replace("-", "_")


def parse_time(value, where: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            raise ScenarioError(f"{where}: bad upload_time {value!r}") from None
    else:
        raise ScenarioError(f"{where}: upload_time must be a string or datetime")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc)


def format_time(moment: dt.datetime) -> str:
    """PEP 700 format: yyyy-mm-ddThh:mm:ss.ffffffZ"""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "sha256=" + digest.rstrip(b"=").decode("ascii")


def url_filename(filename: str) -> str:
    return quote(filename, safe="+!")


# --------------------------------------------------------------------------
# Scenario loading
# --------------------------------------------------------------------------

@dataclasses.dataclass
class Release:
    name: str
    version: str
    requires_dist: list[str]
    provides_extra: list[str]
    requires_python: str | None
    tags: list[str]
    sdist: bool
    yanked: bool | str
    upload_time: dt.datetime
    metadata_file: bool
    wrong_hash: bool
    source: str
    # The top-level package the wheel installs (default: the escaped name).
    module: str | None = None
    # Further files the wheel carries, path -> text (to clobber other
    # distributions' files in drift and clash tests).
    extra_files: dict | None = None
    # A lying METADATA: the name it claims, when not the package's own.
    metadata_name: str | None = None
    # This many tiny generated modules ahead of the .dist-info, so the zip
    # directory (and RECORD) outgrow a client's first ranged read.
    filler: int = 0
    # Bytes of each such module beyond its first line (hex digits, which
    # deflate only to about half), to put distance between members.
    filler_size: int = 0
    # The .dist-info's METADATA as the wheel's first member, not among its
    # last (some build tools write it so).
    metadata_first: bool = False
    # How the sdist says what it needs (one of SDIST_METADATA).
    sdist_metadata: str = "static"

    @property
    def normalized(self) -> str:
        return normalize(self.name)

    @property
    def escaped(self) -> str:
        return escape_name(self.name)


def _str_list(value, key: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScenarioError(f"{where}: {key} must be a list of strings")
    for v in value:
        if "\n" in v or "\r" in v:
            raise ScenarioError(f"{where}: {key} entries must be single-line")
    return list(value)


def _check_tag(tag: str, where: str) -> None:
    parts = tag.split("-")
    if len(parts) != 3 or not all(TAG_PART_RE.match(p) for p in parts):
        raise ScenarioError(
            f"{where}: bad wheel tag {tag!r} (want python-abi-platform, "
            "each part optionally dot-compressed)")


def load_scenario(path: str) -> list[Release]:
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: invalid TOML: {e}") from None
    unknown = set(doc) - TOP_KEYS
    if unknown:
        raise ScenarioError(f"{path}: unknown top-level keys: {sorted(unknown)}")
    default_time = parse_time(doc.get("upload_time", DEFAULT_UPLOAD_TIME), path)
    packages = doc.get("package", [])
    if not isinstance(packages, list):
        raise ScenarioError(f"{path}: 'package' must be an array of tables ([[package]])")
    releases = []
    for i, pkg in enumerate(packages):
        where = f"{path}: package #{i + 1}"
        if not isinstance(pkg, dict):
            raise ScenarioError(f"{where}: must be a table")
        unknown = set(pkg) - PACKAGE_KEYS
        if unknown:
            raise ScenarioError(f"{where}: unknown keys: {sorted(unknown)}")
        name, version = pkg.get("name"), pkg.get("version")
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise ScenarioError(f"{where}: missing or invalid name {name!r}")
        if not isinstance(version, str) or not re.fullmatch(r"[A-Za-z0-9.+!_-]+", version):
            raise ScenarioError(f"{where}: missing or invalid version {version!r}")
        where = f"{path}: {name} {version}"
        requires_python = pkg.get("requires_python")
        if requires_python is not None and (
                not isinstance(requires_python, str) or "\n" in requires_python):
            raise ScenarioError(f"{where}: requires_python must be a string")
        tags = _str_list(pkg.get("tags", ["py3-none-any"]), "tags", where)
        for tag in tags:
            _check_tag(tag, where)
        if len(set(tags)) != len(tags):
            raise ScenarioError(f"{where}: duplicate tags")
        yanked = pkg.get("yanked", False)
        if not isinstance(yanked, (bool, str)):
            raise ScenarioError(f"{where}: yanked must be a boolean or a reason string")
        if yanked == "":
            yanked = True
        flags = {}
        for key, default in (("sdist", False), ("metadata_file", True), ("wrong_hash", False),
                             ("metadata_first", False)):
            flags[key] = pkg.get(key, default)
            if not isinstance(flags[key], bool):
                raise ScenarioError(f"{where}: {key} must be a boolean")
        releases.append(Release(
            name=name,
            version=version,
            requires_dist=_str_list(pkg.get("requires_dist", []), "requires_dist", where),
            provides_extra=_str_list(pkg.get("provides_extra", []), "provides_extra", where),
            requires_python=requires_python,
            tags=tags,
            sdist=flags["sdist"],
            yanked=yanked,
            upload_time=(parse_time(pkg["upload_time"], where)
                         if "upload_time" in pkg else default_time),
            metadata_file=flags["metadata_file"],
            wrong_hash=flags["wrong_hash"],
            source=path,
            module=pkg.get("module"),
            extra_files=pkg.get("extra_files"),
            metadata_name=pkg.get("metadata_name"),
            filler=_filler(pkg.get("filler", 0), where),
            filler_size=_filler(pkg.get("filler_size", 0), where),
            metadata_first=flags["metadata_first"],
            sdist_metadata=_sdist_metadata(pkg.get("sdist_metadata", "static"), where),
        ))
    return releases


def _sdist_metadata(value, where: str) -> str:
    if value not in SDIST_METADATA:
        raise ScenarioError(f"{where}: sdist_metadata must be one of {', '.join(SDIST_METADATA)}")
    return value


def _filler(value, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100_000:
        raise SystemExit(f"{where}: filler and filler_size must be counts from 0 to 100000")
    return value


def load_scenarios(paths: list[str]) -> list[Release]:
    releases: list[Release] = []
    seen: dict[tuple[str, str], str] = {}
    for path in paths:
        for rel in load_scenario(path):
            key = (rel.normalized, rel.version)
            if key in seen:
                raise ScenarioError(
                    f"{path}: {rel.name} {rel.version} already defined in {seen[key]}")
            seen[key] = path
            releases.append(rel)
    return releases


# --------------------------------------------------------------------------
# Building wheels and sdists
# --------------------------------------------------------------------------

@dataclasses.dataclass
class Artifact:
    filename: str
    data: bytes
    release: Release
    metadata: bytes | None  # METADATA to offer as FILE.metadata (wheels only)


def metadata_bytes(rel: Release, metadata_version: str = "2.1") -> bytes:
    lines = [
        f"Metadata-Version: {metadata_version}",
        f"Name: {rel.metadata_name or rel.name}",
        f"Version: {rel.version}",
    ]
    if rel.requires_python is not None:
        lines.append(f"Requires-Python: {rel.requires_python}")
    lines += [f"Provides-Extra: {extra}" for extra in rel.provides_extra]
    lines += [f"Requires-Dist: {req}" for req in rel.requires_dist]
    return ("\n".join(lines) + "\n").encode("utf-8")


def expand_tag(tag: str) -> list[str]:
    py, abi, plat = tag.split("-")
    return [f"{p}-{a}-{x}" for p in py.split(".") for a in abi.split(".")
            for x in plat.split(".")]


def zip_bytes(entries: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=ZIP_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o100644 << 16
            zf.writestr(info, data)
    return buf.getvalue()


def module_source(rel: Release) -> bytes:
    return (f'"""{rel.name} {rel.version}: generated by layerlock pyindex."""\n'
            f"__version__ = {rel.version!r}\n").encode("utf-8")


def filler_source(i: int, size: int) -> bytes:
    text = f"N = {i}\n"
    if size:
        digits = "".join(hashlib.sha256(f"{i}-{j}".encode()).hexdigest()
                         for j in range(size // 64 + 1))
        text += "# " + digits[:size] + "\n"
    return text.encode("utf-8")


def build_wheel(rel: Release, tag: str) -> Artifact:
    dist = rel.escaped
    version = escape_version(rel.version)
    distinfo = f"{dist}-{version}.dist-info"
    metadata = metadata_bytes(rel)
    wheel_lines = ["Wheel-Version: 1.0", f"Generator: {GENERATOR}", "Root-Is-Purelib: true"]
    wheel_lines += [f"Tag: {t}" for t in expand_tag(tag)]
    module = rel.module or dist
    entries = [
        *([(f"{distinfo}/METADATA", metadata)] if rel.metadata_first else []),
        (f"{module}/__init__.py", module_source(rel)),
        *[(path, text.encode("utf-8")) for path, text in sorted((rel.extra_files or {}).items())],
        *[(f"{module}/filler/m{i:06d}.py", filler_source(i, rel.filler_size))
          for i in range(rel.filler)],
        *([] if rel.metadata_first else [(f"{distinfo}/METADATA", metadata)]),
        (f"{distinfo}/WHEEL", ("\n".join(wheel_lines) + "\n").encode("utf-8")),
    ]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for arcname, data in entries:
        writer.writerow([arcname, record_hash(data), str(len(data))])
    writer.writerow([f"{distinfo}/RECORD", "", ""])
    entries.append((f"{distinfo}/RECORD", record.getvalue().encode("utf-8")))
    return Artifact(
        filename=f"{dist}-{version}-{tag}.whl",
        data=zip_bytes(entries),
        release=rel,
        metadata=metadata if rel.metadata_file else None,
    )


# In-tree PEP 517 backend shipped inside every sdist, so pip (or anything
# else) can build the sdist offline without fetching setuptools.
SDIST_BACKEND = '''\
"""Minimal in-tree PEP 517 backend generated by layerlock's pyindex harness."""
import base64
import hashlib
import os
import re
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))


def _info():
    with open(os.path.join(_HERE, "PKG-INFO"), "rb") as f:
        meta = f.read()
    fields = {}
    for line in meta.decode("utf-8").splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            fields.setdefault(key, value)
    name = re.sub(r"[-_.]+", "_", fields["Name"]).lower()
    return meta, name, fields["Version"].replace("-", "_")


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    meta, name, version = _info()
    distinfo = name + "-" + version + ".dist-info"
    os.makedirs(os.path.join(metadata_directory, distinfo), exist_ok=True)
    with open(os.path.join(metadata_directory, distinfo, "METADATA"), "wb") as f:
        f.write(meta)
    return distinfo


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    meta, name, version = _info()
    distinfo = name + "-" + version + ".dist-info"
    files = []
    pkgdir = os.path.join(_HERE, name)
    for fn in sorted(os.listdir(pkgdir)):
        with open(os.path.join(pkgdir, fn), "rb") as f:
            files.append((name + "/" + fn, f.read()))
    files.append((distinfo + "/METADATA", meta))
    files.append((distinfo + "/WHEEL", b"Wheel-Version: 1.0\\nGenerator: pyindex-sdist-backend\\n"
                  b"Root-Is-Purelib: true\\nTag: py3-none-any\\n"))
    record = ""
    for arcname, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        record += "%s,sha256=%s,%d\\n" % (arcname, digest.decode(), len(data))
    record += distinfo + "/RECORD,,\\n"
    files.append((distinfo + "/RECORD", record.encode()))
    filename = name + "-" + version + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as zf:
        for arcname, data in files:
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            zf.writestr(info, data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    raise NotImplementedError("pyindex test sdists cannot be rebuilt")
'''

SDIST_PYPROJECT = b'''\
[build-system]
requires = []
build-backend = "_pyindex_backend"
backend-path = ["."]
'''


def build_sdist(rel: Release) -> Artifact:
    dist = rel.escaped
    version = escape_version(rel.version)
    base = f"{dist}-{version}"
    kind = rel.sdist_metadata
    bare = dataclasses.replace(rel, requires_dist=[], provides_extra=[])
    quoted = ", ".join(json.dumps(r) for r in rel.requires_dist)
    pyproject = SDIST_PYPROJECT
    members = []
    if kind == "static":
        pkg_info = metadata_bytes(rel, "2.2")
    elif kind == "dynamic":
        pkg_info = metadata_bytes(bare, "2.2") + b"Dynamic: Requires-Dist\n"
    else:
        pkg_info = metadata_bytes(bare, "2.1")
    if kind == "pyproject":
        pyproject += (f'\n[project]\nname = "{rel.name}"\ndynamic = ["version"]\n'
                      f"dependencies = [{quoted}]\n").encode("utf-8")
    if kind in ("setup-cfg", "setup-py"):
        # setup.cfg and setup.py say what setuptools builds, and only then.
        pyproject = (b'[build-system]\nrequires = ["setuptools"]\n'
                     b'build-backend = "setuptools.build_meta"\n')
    if kind == "setup-cfg":
        lines = "".join(f"\n    {r}" for r in rel.requires_dist)
        members.append((f"{base}/setup.cfg",
                        f"[metadata]\nname = {rel.name}\n\n[options]\ninstall_requires ={lines}\n"
                        .encode("utf-8")))
        members.append((f"{base}/setup.py", b"from setuptools import setup\nsetup()\n"))
    elif kind == "setup-py":
        # Computed, as a setup.py may: only running it says what it needs.
        members.append((f"{base}/setup.py",
                        f"from setuptools import setup\ndeps = [{quoted}]\n"
                        f"setup(install_requires=list(deps))\n".encode("utf-8")))
    members = [
        (f"{base}/PKG-INFO", pkg_info),
        (f"{base}/pyproject.toml", pyproject),
        *members,
        (f"{base}/_pyindex_backend.py", SDIST_BACKEND.encode("utf-8")),
        (f"{base}/{dist}/__init__.py", module_source(rel)),
    ]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for dirname in (base, f"{base}/{dist}"):
            info = tarfile.TarInfo(dirname)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            info.mtime = TAR_MTIME
            tf.addfile(info)
        for arcname, data in members:
            info = tarfile.TarInfo(arcname)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = TAR_MTIME
            tf.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=TAR_MTIME) as gz:
        gz.write(raw.getvalue())
    return Artifact(filename=f"{base}.tar.gz", data=out.getvalue(), release=rel, metadata=None)


def build_artifacts(releases: list[Release]) -> list[Artifact]:
    artifacts: list[Artifact] = []
    seen: set[str] = set()
    for rel in releases:
        built = [build_wheel(rel, tag) for tag in rel.tags]
        if rel.sdist:
            built.append(build_sdist(rel))
        for art in built:
            if art.filename in seen:
                raise ScenarioError(f"{rel.source}: duplicate file name {art.filename}")
            seen.add(art.filename)
            artifacts.append(art)
    return artifacts


def write_artifacts(artifacts: list[Artifact], outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    for art in artifacts:
        with open(os.path.join(outdir, art.filename), "wb") as f:
            f.write(art.data)


# --------------------------------------------------------------------------
# The index model
# --------------------------------------------------------------------------

@dataclasses.dataclass
class FileEntry:
    filename: str
    sha256: str  # as advertised (deliberately wrong when wrong_hash = true)
    size: int
    requires_python: str | None
    yanked: bool | str
    upload_time: dt.datetime
    metadata_sha256: str | None


@dataclasses.dataclass
class Project:
    name: str  # display name (first seen)
    versions: list[str]
    files: list[FileEntry]


def parse_dist_filename(filename: str) -> tuple[str, str] | None:
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        if len(parts) in (5, 6) and all(parts):
            return parts[0], parts[1]
        return None
    for ext in (".tar.gz", ".zip", ".tar.bz2", ".tgz"):
        if filename.endswith(ext):
            name, sep, version = filename[:-len(ext)].rpartition("-")
            if sep and name and version:
                return name, version
    return None


class Index:
    def __init__(self, releases: list[Release], artifacts: list[Artifact],
                 extra_dirs: list[str]):
        self.files: dict[str, bytes] = {}
        self.projects: dict[str, Project] = {}
        for rel in releases:
            proj = self._project(rel.name)
            if rel.version not in proj.versions:
                proj.versions.append(rel.version)
        for art in artifacts:
            self.files[art.filename] = art.data
            if art.metadata is not None:
                self.files[art.filename + ".metadata"] = art.metadata
        # Extra dirs: served byte-for-byte, overriding built files of the same name.
        extra_names: list[str] = []
        for directory in extra_dirs:
            try:
                names = sorted(os.listdir(directory))
            except OSError as e:
                raise ScenarioError(f"--extra-dir {directory}: {e.strerror}") from None
            for fn in names:
                full = os.path.join(directory, fn)
                if os.path.isfile(full):
                    with open(full, "rb") as f:
                        self.files[fn] = f.read()
                    extra_names.append(fn)
        for art in artifacts:
            rel = art.release
            self._add_entry(rel.normalized, art.filename, rel.requires_python, rel.yanked,
                            rel.upload_time, rel.wrong_hash)
        built = {art.filename for art in artifacts}
        default_time = parse_time(DEFAULT_UPLOAD_TIME, "default")
        for fn in extra_names:
            parsed = parse_dist_filename(fn)
            if fn in built or parsed is None:
                continue
            name, version = parsed
            proj = self._project(name)
            if version not in proj.versions:
                proj.versions.append(version)
            self._add_entry(normalize(name), fn, None, False, default_time, False)

    def _project(self, name: str) -> Project:
        norm = normalize(name)
        if norm not in self.projects:
            self.projects[norm] = Project(name=name, versions=[], files=[])
        return self.projects[norm]

    def _add_entry(self, norm, filename, requires_python, yanked, upload_time, wrong_hash):
        data = self.files[filename]
        sha = sha256_hex(data)
        if wrong_hash:
            sha = sha256_hex(data + b"\0pyindex-wrong-hash")
        metadata = self.files.get(filename + ".metadata") if filename.endswith(".whl") else None
        self.projects[norm].files.append(FileEntry(
            filename=filename,
            sha256=sha,
            size=len(data),
            requires_python=requires_python,
            yanked=yanked,
            upload_time=upload_time,
            metadata_sha256=sha256_hex(metadata) if metadata is not None else None,
        ))

    # ---- rendering ----

    def root_json(self) -> bytes:
        projects = [{"name": self.projects[k].name} for k in sorted(self.projects)]
        return _json({"meta": {"api-version": API_VERSION}, "projects": projects})

    def root_html(self) -> bytes:
        body = [f'<a href="{html.escape(quote(k))}/">{html.escape(self.projects[k].name)}</a><br/>'
                for k in sorted(self.projects)]
        return _html_page("Simple index", body)

    def project_json(self, norm: str, upload_time: bool, local_url: str | None = None) -> bytes:
        proj = self.projects[norm]
        files = []
        for e in proj.files:
            item: dict = {
                "filename": e.filename,
                "url": local_url or "/files/" + url_filename(e.filename),
                "hashes": {"sha256": e.sha256},
            }
            if e.requires_python is not None:
                item["requires-python"] = e.requires_python
            item["yanked"] = e.yanked
            if upload_time:
                item["upload-time"] = format_time(e.upload_time)
            item["size"] = e.size
            meta = {"sha256": e.metadata_sha256} if e.metadata_sha256 else False
            item["core-metadata"] = meta
            item["dist-info-metadata"] = meta
            files.append(item)
        return _json({"meta": {"api-version": API_VERSION}, "name": norm,
                      "versions": list(proj.versions), "files": files})

    def project_html(self, norm: str, depth: int, local_url: str | None = None) -> bytes:
        up = "../" * depth
        body = []
        for e in self.projects[norm].files:
            where = local_url or f"{up}files/{url_filename(e.filename)}"
            href = f"{where}#sha256={e.sha256}"
            attrs = [f'href="{html.escape(href)}"']
            if e.requires_python is not None:
                attrs.append(f'data-requires-python="{html.escape(e.requires_python)}"')
            if e.yanked is not False:
                reason = "" if e.yanked is True else e.yanked
                attrs.append(f'data-yanked="{html.escape(reason)}"')
            if e.metadata_sha256:
                attrs.append(f'data-dist-info-metadata="sha256={e.metadata_sha256}"')
                attrs.append(f'data-core-metadata="sha256={e.metadata_sha256}"')
            body.append(f'<a {" ".join(attrs)}>{html.escape(e.filename)}</a><br/>')
        return _html_page(f"Links for {norm}", body)


def _json(obj) -> bytes:
    return (json.dumps(obj, indent=2) + "\n").encode("utf-8")


def _html_page(title: str, body: list[str]) -> bytes:
    lines = [
        "<!DOCTYPE html>",
        "<html>",
        "<head>",
        f'<meta name="pypi:repository-version" content="{API_VERSION}">',
        f"<title>{html.escape(title)}</title>",
        "</head>",
        "<body>",
        f"<h1>{html.escape(title)}</h1>",
        *body,
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(lines).encode("utf-8")


# --------------------------------------------------------------------------
# HTTP
# --------------------------------------------------------------------------

JSON_TYPES = {"application/vnd.pypi.simple.v1+json", "application/vnd.pypi.simple.latest+json"}
HTML_TYPES = {"application/vnd.pypi.simple.v1+html", "application/vnd.pypi.simple.latest+html",
              "text/html", "text/*", "*/*"}


def choose_format(accept: str | None) -> str:
    """Pick "json" or "html" from an Accept header (highest q wins, JSON on ties)."""
    if not accept:
        return "html"
    best = None
    for part in accept.split(","):
        pieces = part.split(";")
        media = pieces[0].strip().lower()
        q = 1.0
        for param in pieces[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
        fmt = "json" if media in JSON_TYPES else "html" if media in HTML_TYPES else None
        if fmt is None or q <= 0:
            continue
        key = (q, fmt == "json")
        if best is None or key > best[0]:
            best = (key, fmt)
    return best[1] if best else "html"


def parse_range(header: str, size: int):
    """Returns (start, end) inclusive, "unsatisfiable", or None (ignore header)."""
    m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", header)
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None
    first, last = m.groups()
    if first == "":
        suffix = int(last)
        if suffix == 0 or size == 0:
            return "unsatisfiable"
        return max(0, size - suffix), size - 1
    start = int(first)
    end = int(last) if last else None
    if end is not None and end < start:
        return None
    if start >= size:
        return "unsatisfiable"
    if end is None:
        end = size - 1
    return start, min(end, size - 1)


class IndexServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, index: Index, opts):
        super().__init__(address, Handler)
        self.index = index
        self.no_range = opts.no_range
        self.auth = opts.auth
        self.fail_first = opts.fail_first
        self.upload_time = not opts.no_upload_time
        self.local_url = opts.local_file_urls
        self.fault_path = opts.fault_path
        self.fault = opts.fault
        self.fault_seen: dict[str, int] = {}
        self.json_api = not opts.no_json_api
        self.fail_counts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.log_file = open(opts.log, "a", encoding="utf-8") if opts.log else None

    def write_log(self, line: str) -> None:
        if self.log_file is not None:
            with self.lock:
                self.log_file.write(line + "\n")
                self.log_file.flush()

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        traceback.print_exc(file=sys.stderr)

    def server_close(self):
        super().server_close()
        if self.log_file is not None:
            self.log_file.close()
            self.log_file = None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "pyindex/1.0"
    timeout = 60
    server: IndexServer

    def version_string(self):
        return self.server_version

    # ---- logging: exactly one line per response, only to --log ----

    def log_message(self, format, *args):  # noqa: A002 - base class signature
        pass

    def log_request(self, code="-", size="-"):
        method = self.command or "-"
        path = getattr(self, "path", None) or "-"
        headers = getattr(self, "headers", None)
        rng = headers.get("Range") if headers is not None else None
        rng = re.sub(r"\s+", "", rng) if rng else "--"
        self.server.write_log(f"{method} {path} {rng} {int(code) if code != '-' else code}")

    # ---- entry points ----

    def do_GET(self):
        self._handle()

    def do_HEAD(self):
        self._handle()

    def _handle(self):
        self._started = False
        try:
            self._dispatch()
        except ConnectionError:
            self.close_connection = True
        except Exception:
            traceback.print_exc(file=sys.stderr)
            self.close_connection = True
            if not self._started:
                try:
                    self._send(500, b"internal error\n")
                except OSError:
                    pass

    def _send(self, status: int, body: bytes = b"", ctype: str = "text/plain; charset=utf-8",
              headers: list[tuple[str, str]] = ()):
        self._started = True
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers:
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def _redirect(self, location: str, query: str):
        if query:
            location += "?" + query
        self._send(301, b"", headers=[("Location", location)])

    def _authorized(self) -> bool:
        scheme, _, cred = self.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(cred.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return False
        return hmac.compare_digest(decoded.encode("utf-8"), self.server.auth.encode("utf-8"))

    def _dispatch(self):
        srv = self.server
        raw_path, _, query = self.path.partition("?")
        if srv.auth is not None and not self._authorized():
            self._send(401, b"unauthorized\n",
                       headers=[("WWW-Authenticate", 'Basic realm="pyindex"')])
            return
        if srv.fault_path is not None and path_matches(raw_path, srv.fault_path):
            if self._fault(raw_path):
                return
        if srv.fail_first > 0:
            with srv.lock:
                seen = srv.fail_counts.get(raw_path, 0)
                srv.fail_counts[raw_path] = seen + 1
            if seen < srv.fail_first:
                self._send(503, b"service unavailable (--fail-first)\n")
                return
        path = unquote(raw_path)
        if path.startswith("/files/"):
            self._serve_file(path[len("/files/"):])
            return
        api = re.fullmatch(r"(?:/json|/html)?/pypi/([^/]+)/([^/]+)/json", path)
        if api and srv.json_api:
            self._serve_json_api(api.group(1), api.group(2))
            return
        m = re.fullmatch(r"(/json|/html)?/simple(/.*)?", path)
        if m:
            self._serve_simple(m.group(1) or "", m.group(2) or "", query)
            return
        self._send(404, b"not found\n")

    def _fault(self, path: str) -> bool:
        """A misbehaving server, for requests whose path holds --fault-path.
        Returns False when the request is to be served normally after all.

        hang: accept, never answer.  drip: headers, then a byte a second.
        429: Too Many Requests with Retry-After: 1 the first time, then normal.
        reset: headers and half a body, then the connection is dropped.
        truncate: a Content-Length longer than the body sent.
        wrong-type: a JSON body labelled text/plain.
        redirect-loop: a redirect to itself, forever.
        giant: a page of 200 MiB."""
        srv = self.server
        mode = srv.fault
        with srv.lock:
            seen = srv.fault_seen.get(path, 0)
            srv.fault_seen[path] = seen + 1
        if mode == "hang":
            time.sleep(3600)
        elif mode == "drip":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            try:
                for _ in range(3600):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
        elif mode == "429":
            if seen > 0:
                return False
            self._send(429, b"slow down\n", headers=[("Retry-After", "1")])
        elif mode in ("reset", "truncate"):
            body = b'{"meta": {"api-version": "1.1"}, "name": "x", "files": [' + b" " * 4096
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(body) * 2))
            self.end_headers()
            self.wfile.write(body if mode == "truncate" else body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        elif mode == "wrong-type":
            self._send(200, b'{"files": [{"filename": "x-1.0-py3-none-any.whl"}]}',
                       ctype="text/plain")
        elif mode == "redirect-loop":
            self.send_response(302)
            self.send_header("Location", self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode == "giant":
            chunk = b" " * (1024 * 1024)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(chunk) * 200))
            self.end_headers()
            try:
                for _ in range(200):
                    self.wfile.write(chunk)
            except OSError:
                pass
        return True

    def _serve_json_api(self, name: str, version: str):
        """A PyPI-style release JSON: the files of one version with their
        sha256 digests and upload times (what clients fall back on when a
        simple page has no PEP 700 times)."""
        project = self.server.index.projects.get(normalize(name))
        if project is None:
            self._send(404, b"not found\n")
            return
        stem = normalize(name).replace("-", "_") + "-" + version
        urls = []
        for e in project.files:
            base = e.filename.lower()
            if base.startswith(stem.lower() + "-") or base.startswith(stem.lower() + ".tar") \
                    or base.startswith(stem.lower() + ".zip"):
                urls.append({
                    "filename": e.filename,
                    "digests": {"sha256": e.sha256},
                    "upload_time_iso_8601": format_time(e.upload_time),
                })
        if not urls:
            self._send(404, b"not found\n")
            return
        self._send(200, _json({"info": {"name": project.name, "version": version}, "urls": urls}),
                   ctype="application/json")

    def _serve_simple(self, prefix: str, rest: str, query: str):
        index = self.server.index
        if rest == "":
            self._redirect(prefix + "/simple/", query)
            return
        if prefix:
            fmt = prefix[1:]
        else:
            fmt = choose_format(self.headers.get("Accept"))
            wanted = parse_qs(query).get("format")
            if wanted:
                # "+" is literal here (PEP 691 writes ?format=...v1+json unencoded)
                media = wanted[-1].strip().lower().replace(" ", "+")
                fmt = "json" if media in JSON_TYPES else "html"
        if rest == "/":
            body = index.root_json() if fmt == "json" else index.root_html()
        else:
            segments = rest[1:].split("/")
            if len(segments) > 2 or (len(segments) == 2 and segments[1] != ""):
                self._send(404, b"not found\n")
                return
            name = segments[0]
            norm = normalize(name)
            if norm not in index.projects:
                self._send(404, b"no such project\n")
                return
            if name != norm or len(segments) == 1:
                self._redirect(f"{prefix}/simple/{quote(norm)}/", query)
                return
            if fmt == "json":
                body = index.project_json(norm, self.server.upload_time, self.server.local_url)
            else:
                depth = (prefix.count("/") + 2)
                body = index.project_html(norm, depth, self.server.local_url)
        # A strong validator, so clients can revalidate cached pages.
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        if self.headers.get("If-None-Match") == etag:
            self._send(304, b"", headers=[("ETag", etag), ("Vary", "Accept")])
            return
        self._send(200, body, JSON_CT if fmt == "json" else HTML_CT,
                   headers=[("Vary", "Accept"), ("ETag", etag)])

    def _serve_file(self, filename: str):
        data = self.server.index.files.get(filename)
        if data is None or "/" in filename:
            self._send(404, b"no such file\n")
            return
        if self.server.no_range:
            self._send(200, data, FILE_CT)
            return
        headers = [("Accept-Ranges", "bytes")]
        header = self.headers.get("Range")
        result = parse_range(header, len(data)) if header is not None else None
        if result == "unsatisfiable":
            self._send(416, b"", headers=headers + [("Content-Range", f"bytes */{len(data)}")])
        elif result is not None:
            start, end = result
            headers.append(("Content-Range", f"bytes {start}-{end}/{len(data)}"))
            self._send(206, data[start:end + 1], FILE_CT, headers=headers)
        else:
            self._send(200, data, FILE_CT, headers=headers)


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------

def cmd_build(opts) -> int:
    artifacts = build_artifacts(load_scenarios(opts.scenario))
    write_artifacts(artifacts, opts.outdir)
    return 0


def _watch_stdin(stop: threading.Event) -> None:
    try:
        fd = sys.stdin.fileno()
        while os.read(fd, 65536):
            pass
    except (OSError, ValueError, AttributeError):
        pass
    stop.set()


def cmd_serve(opts) -> int:
    if opts.auth is not None and ":" not in opts.auth:
        raise ScenarioError("--auth must be USER:PASS")
    if opts.fail_first < 0:
        raise ScenarioError("--fail-first must be >= 0")
    releases = load_scenarios(opts.scenario)
    artifacts = build_artifacts(releases)
    temp_root = None
    root = opts.root
    if root is None:
        root = temp_root = tempfile.mkdtemp(prefix="pyindex-")
    try:
        write_artifacts(artifacts, root)
        index = Index(releases, artifacts, opts.extra_dir or [])
        try:
            server = IndexServer(("127.0.0.1", opts.port), index, opts)
        except OSError as e:
            raise ScenarioError(f"cannot listen on 127.0.0.1:{opts.port}: {e.strerror}") from None
        stop = threading.Event()

        def on_signal(signum, frame):
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        if opts.stdin_lifetime:
            threading.Thread(target=_watch_stdin, args=(stop,), daemon=True).start()
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                                  daemon=True)
        thread.start()
        port = server.server_address[1]
        sys.stdout.write(f"READY http://127.0.0.1:{port}\n")
        sys.stdout.flush()
        while not stop.wait(0.5):
            pass
        server.shutdown()
        server.server_close()
    finally:
        if temp_root is not None:
            shutil.rmtree(temp_root, ignore_errors=True)
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pyindex.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build wheels/sdists into a flat directory")
    build.add_argument("scenario", nargs="+", help="scenario TOML file(s)")
    build.add_argument("outdir", help="output directory (created if missing)")
    serve = sub.add_parser("serve", help="build and serve a simple index on 127.0.0.1")
    serve.add_argument("scenario", nargs="*", help="scenario TOML file(s); packages are merged")
    serve.add_argument("--root", help="directory to build files into (default: temp dir)")
    serve.add_argument("--port", type=int, default=0, help="port (0 = OS-chosen)")
    serve.add_argument("--no-range", action="store_true", help="ignore Range headers")
    serve.add_argument("--auth", metavar="USER:PASS", help="require HTTP Basic auth")
    serve.add_argument("--log", metavar="FILE", help="append one line per request")
    serve.add_argument("--fail-first", type=int, default=0, metavar="N",
                       help="answer 503 to the first N requests of each path")
    serve.add_argument("--no-upload-time", action="store_true",
                       help="omit upload-time from JSON pages")
    serve.add_argument("--local-file-urls", metavar="URL",
                       help="a hostile index: list every file at this (file://) URL")
    serve.add_argument("--fault-path", metavar="SUBSTRING",
                       help="requests whose path holds this get --fault")
    serve.add_argument("--fault", default="hang",
                       choices=["hang", "drip", "429", "reset", "truncate", "wrong-type",
                                "redirect-loop", "giant"],
                       help="how those requests are answered (see Handler._fault)")
    serve.add_argument("--no-json-api", action="store_true",
                       help="do not serve the PyPI-style /pypi/NAME/VERSION/json API")
    serve.add_argument("--extra-dir", action="append", metavar="DIR",
                       help="also serve these files as-is (repeatable)")
    serve.add_argument("--stdin-lifetime", action="store_true",
                       help="exit when stdin reaches EOF")
    return parser


def main(argv: list[str] | None = None) -> int:
    opts = make_parser().parse_args(argv)
    try:
        return cmd_build(opts) if opts.command == "build" else cmd_serve(opts)
    except ScenarioError as e:
        print(f"pyindex: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
