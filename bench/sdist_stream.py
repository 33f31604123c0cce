#!/usr/bin/env python3
"""How much of a large sdist compile downloads to learn its metadata.

    python3 bench/sdist_stream.py                         # target/debug/layerlock
    python3 bench/sdist_stream.py --before OLD/layerlock  # and an older binary

Generates two sdists of --mib MiB (default 200) of incompressible data,
each with its PKG-INFO first and setup.py last (setuptools' order for a
project whose package tree sorts before setup.py): `bigdyn`, whose
PKG-INFO is Metadata-Version 2.1 (so setup.py would be needed), and
`bigstatic`, whose PKG-INFO 2.2 is static. The harness index serves them
(tests/harness/pyindex.py, --extra-dir) and each binary compiles each with
a cold cache. Reported: wall time, the sdist bytes received (`--stats`),
the exit code. Python 3.11 standard library only; no network.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import _results  # noqa: E402

PKG_INFO = {
    "bigdyn": "Metadata-Version: 2.1\nName: bigdyn\nVersion: 1.0\n",
    "bigstatic": "Metadata-Version: 2.2\nName: bigstatic\nVersion: 1.0\n",
}


def make_sdist(folder: Path, name: str, mib: int) -> Path:
    """NAME-1.0.tar.gz: PKG-INFO, then MIB MiB of random bytes, then setup.py."""
    path = folder / f"{name}-1.0.tar.gz"
    top = f"{name}-1.0"

    def add(tar: tarfile.TarFile, member: str, data: bytes) -> None:
        info = tarfile.TarInfo(f"{top}/{member}")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))

    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        add(tar, "PKG-INFO", PKG_INFO[name].encode())
        info = tarfile.TarInfo(f"{top}/{name}/data.bin")
        info.size = mib << 20

        class Random(io.RawIOBase):
            left = info.size

            def readinto(self, buf):
                n = min(len(buf), self.left)
                buf[:n] = os.urandom(n)
                self.left -= n
                return n

        tar.addfile(info, Random())
        add(tar, "setup.py", b"from setuptools import setup\nsetup(name='x')\n")
    return path


def serve(files: Path, log: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests/harness/pyindex.py"), "serve",
         "--extra-dir", str(files), "--root", str(files.parent / "built"), "--log", str(log),
         "--stdin-lifetime"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith("READY "):
        sys.exit(f"the index did not start: {line!r}")
    return proc, line.removeprefix("READY ") + "/json/simple/"


def compile_once(binary: str, index: str, name: str, work: Path) -> dict:
    work.mkdir(parents=True)
    (work / "in.txt").write_text(f"{name}\n")
    cmd = [binary, "compile", "in.txt", "-o", "out.txt", "-q", "--python-version", "3.12",
           "--platform", "x86_64-manylinux_2_28", "--index-url", index,
           "--cache-dir", str(work / "cache"), "--stats", "stats.json"]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - start
    stats = json.loads((work / "stats.json").read_text()) if (work / "stats.json").exists() else {}
    sdist = stats.get("requests", {}).get("sdist", {})
    why = proc.stderr.strip().splitlines()
    return {"exit": proc.returncode, "wall_s": round(wall, 3),
            "sdist_bytes": sdist.get("bytes"), "sdist_requests": sdist.get("count"),
            "said": next((line.strip() for line in why if "MiB" in line or "hint" in line), "")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layerlock", default=str(REPO / "target/debug/layerlock"))
    ap.add_argument("--before", help="an older layerlock binary to compare")
    ap.add_argument("--mib", type=int, default=200)
    args = ap.parse_args()
    binaries = {"after": args.layerlock} | ({"before": args.before} if args.before else {})
    with tempfile.TemporaryDirectory(prefix="sdist-stream-") as tmp:
        scratch = Path(tmp)
        files = scratch / "files"
        files.mkdir()
        for name in PKG_INFO:
            size = make_sdist(files, name, args.mib).stat().st_size
            print(f"{name}: {size / (1 << 20):.1f} MiB sdist", flush=True)
        proc, index = serve(files, scratch / "requests.log")
        results = {"mib": args.mib, "binaries": {}}
        try:
            for label, binary in binaries.items():
                for name in PKG_INFO:
                    got = compile_once(binary, index, name, scratch / label / name)
                    results["binaries"].setdefault(label, {})[name] = got
                    print(f"{label:6} {name:9} exit {got['exit']}  {got['wall_s']:7.2f} s  "
                          f"{(got['sdist_bytes'] or 0) / (1 << 20):8.2f} MiB received  "
                          f"{got['said'][:110]}", flush=True)
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)
    _results.write("sdist_stream", results)


if __name__ == "__main__":
    main()
