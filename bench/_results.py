"""Shared by the benchmark scripts: where and how results are written, and
the versions of the tools that made them."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent


def write(name: str, results: dict) -> Path:
    """Write bench/results/<name>-<date>.json (sorted keys) and say where."""
    out = HERE / "results" / f"{name}-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"wrote {out.relative_to(HERE.parent)}")
    return out


def version_of(cmd: list[str]) -> str:
    """The first line a tool prints for its version, or why there is none."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return (proc.stdout or proc.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return f"unknown ({exc})"
