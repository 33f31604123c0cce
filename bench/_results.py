"""Shared by the benchmark scripts: where and how results are written."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def write(name: str, results: dict) -> Path:
    """Write bench/results/<name>-<date>.json (sorted keys) and say where."""
    out = HERE / "results" / f"{name}-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"wrote {out.relative_to(HERE.parent)}")
    return out
