#!/usr/bin/env python3
"""Benchmark of layerlock blocks and layerlock triage on a generated git
history of 100,000 commits (git fast-import): 2,000 modules churned one per
commit, a Buildkite pipeline edited every 400 commits, two KV steps disabled
5,000 commits before the tip and restored on a branch, modules a failing test
imports changed while they were dark, and a stale strict xfail.

    python3 bench/history.py [--layerlock target/release/layerlock] [--commits 100000] [--runs 3]
    python3 bench/history.py --fix-refs-repo PATH [--refs 5000] [--runs 3]

The second form measures `triage` looking for likely fixes on a real
repository (a vLLM fork: `fetch` brings one): its history as it is, plus
--refs fetched-pull-request refs (`refs/pull/N/head`) written with git
fast-import, each one commit off a recent main-line commit that changes one
file under vllm/ or tests/, some of them what the failing test reads. One
failing test of tests/v1/core is triaged with `--fix-refs refs/pull/*/head`
beside the plain git commands the same answer needs: listing the refs, one
`git log --source --stdin` over all of them, and the dark window's log.

Each layerlock command is timed beside the plain git commands that do the
least the same answer needs (the pickaxe walk that finds the disabling
commit; the path-limited log of the dark window), so the ratio shows what
layerlock adds on top of git itself. Prints a table and writes
bench/results/history-<YYYY-MM-DD>.json. Python 3.11 standard library only;
needs git.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _results

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
START = 1_700_000_000  # 2023-11-14
STEP_SECONDS = 600
MODULES = 2_000

PIPELINE_ON = """\
group: KV
steps:
- label: NIXL tests
  key: nixl-tests
  timeout_in_minutes: 30
  commands:
  - bash /w/.buildkite/scripts/install-kv-connectors.sh
  - uv pip install --system -r /w/requirements/kv_connectors.txt
  - pytest -v tests/kv/test_nixl.py
- label: Mooncake tests
  key: mooncake-tests
  commands:
  - bash /w/.buildkite/scripts/install-kv-connectors.sh
  - pytest -v tests/kv/test_mooncake.py
"""

UNIT = """\
- label: Unit {n}
  key: unit
  commands:
  - pytest tests/unit -k 'not slow{n}'
"""

TEST_NIXL = """\
import pytest
from vllm.kv import nixl


def test_handshake():
    assert nixl.handshake()


@pytest.mark.xfail(strict=True, reason="agent metadata races")
def test_metadata():
    assert nixl.metadata()
"""

TEST_MOONCAKE = """\
from vllm.kv.mooncake import store


def test_store():
    assert store()
"""

JUNIT = """\
<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="3" skipped="0" tests="4">
<testcase classname="tests.kv.test_nixl" name="test_handshake" time="0.1"><failure message="AssertionError: handshake refused">AssertionError</failure></testcase>
<testcase classname="tests.kv.test_nixl" name="test_metadata" time="0.1"><failure message="[XPASS(strict)] agent metadata races">[XPASS(strict)] agent metadata races</failure></testcase>
<testcase classname="tests.kv.test_mooncake" name="test_store" time="0.1"><failure message="TimeoutError">TimeoutError</failure></testcase>
<testcase classname="tests.kv.test_mooncake" name="test_ok" time="0.1" />
</testsuite></testsuites>
"""


def blob(text: str) -> bytes:
    data = text.encode()
    return b"data %d\n" % len(data) + data + b"\n"


def commit(out, ref: str, n: int, subject: str, changes: list[tuple[str, str]], parent: str | None) -> None:
    when = START + n * STEP_SECONDS
    out.write(f"commit {ref}\nmark :{n + 1}\n".encode())
    out.write(f"author Dev <dev@example.com> {when} +0000\n".encode())
    out.write(f"committer Dev <dev@example.com> {when} +0000\n".encode())
    out.write(blob(subject))
    if parent:
        out.write(f"from {parent}\n".encode())
    for path, text in changes:
        out.write(f"M 100644 inline {path}\n".encode())
        out.write(blob(text))


def generate(root: Path, commits: int) -> dict:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    disable_at = commits - 5_000
    latent = {disable_at + 1_000, disable_at + 3_000}
    fix_xfail = disable_at + 4_000
    pipeline = lambda n, on: (PIPELINE_ON if on else "group: KV\nsteps:\n") + UNIT.format(n=n // 400)
    proc = subprocess.Popen(
        ["git", "-C", str(root), "fast-import", "--quiet", "--done"],
        stdin=subprocess.PIPE,
    )
    out = proc.stdin
    assert out is not None
    first = [(f"vllm/m{i:04d}.py", f"X = {i}\n") for i in range(MODULES)]
    first += [
        ("vllm/__init__.py", ""),
        ("vllm/kv/__init__.py", ""),
        ("vllm/kv/nixl.py", "from vllm.kv import base\n\ndef handshake():\n    return base.ok()\n\ndef metadata():\n    return True\n"),
        ("vllm/kv/base.py", "def ok():\n    return True\n"),
        ("vllm/kv/mooncake.py", "def store():\n    return True\n"),
        ("tests/kv/test_nixl.py", TEST_NIXL),
        ("tests/kv/test_mooncake.py", TEST_MOONCAKE),
        (".buildkite/test_areas/kv.yaml", pipeline(0, True)),
    ]
    commit(out, "refs/heads/main", 0, "Initial import", first, None)
    for n in range(1, commits):
        on = n < disable_at
        if n == disable_at:
            subject = "Disable jobs with unpinned runtime installs (#63609)"
            changes = [(".buildkite/test_areas/kv.yaml", pipeline(n, False))]
        elif n in latent:
            subject = f"Rework the KV base handshake (#{60_000 + n % 10_000})"
            changes = [("vllm/kv/base.py", f"def ok():\n    return {n} > 0\n")]
        elif n == fix_xfail:
            subject = "Fix NIXL agent metadata race (#64001)"
            changes = [("vllm/kv/nixl.py", "from vllm.kv import base\n\ndef handshake():\n    return base.ok()\n\ndef metadata():\n    return 1\n")]
        elif n % 400 == 0:
            subject = f"Tune the unit step (#{n})"
            changes = [(".buildkite/test_areas/kv.yaml", pipeline(n, on))]
        else:
            subject = f"Change module {n % MODULES} (#{n})"
            changes = [(f"vllm/m{n % MODULES:04d}.py", f"X = {n}\n")]
        commit(out, "refs/heads/main", n, subject, changes, None)
    # The branch that restores the steps and touches Mooncake.
    restored = PIPELINE_ON.replace("install-kv-connectors.sh", "check-kv-connectors.sh").replace(
        "  - uv pip install --system -r /w/requirements/kv_connectors.txt\n", ""
    ) + UNIT.format(n=(commits - 1) // 400)
    commit(out, "refs/heads/restore", commits, "Restore the KV jobs (#65000)", [(".buildkite/test_areas/kv.yaml", restored)], "refs/heads/main")
    commit(out, "refs/heads/restore", commits + 1, "Mooncake store timeout", [("vllm/kv/mooncake.py", "def store():\n    return None\n")], None)
    out.write(b"done\n")
    out.close()
    if proc.wait() != 0:
        sys.exit("git fast-import failed")
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "restore"], check=True)
    (root / "report.xml").write_text(JUNIT)
    return {"commits": commits + 2, "disabled_at": disable_at}


def timed(cmd: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB (GNU time: the largest of the process
    and the git processes it waited for), and stdout."""
    with tempfile.NamedTemporaryFile("r") as peak_file:
        start = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", peak_file.name, *cmd], cwd=cwd, capture_output=True, text=True
        )
        wall = time.perf_counter() - start
        peak_kib = int(peak_file.read().strip().splitlines()[-1] or 0)
    if proc.returncode not in ok:
        sys.exit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return wall, peak_kib / 1024, proc.stdout


# The failing test of --fix-refs-repo: the first that exists.
FIX_TESTS = ["tests/v1/core/test_scheduler.py", "tests/v1/core/test_kv_cache_utils.py",
             "tests/test_config.py"]


def git_out(root: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True,
                          text=True, check=True).stdout


def direct_imports(root: Path, test: str) -> list[str]:
    """The test file, the conftest.py files above it and the in-repository
    modules it imports directly: what `triage --depth 1` reads."""
    paths = [test]
    parts = Path(test).parts
    for i in range(1, len(parts)):
        conftest = Path(*parts[:i]) / "conftest.py"
        if (root / conftest).is_file():
            paths.append(str(conftest))
    import re
    for line in (root / test).read_text(errors="replace").splitlines():
        m = re.match(r"\s*(?:from\s+(vllm(?:\.\w+)*)\s+import|import\s+(vllm(?:\.\w+)*))", line)
        if not m:
            continue
        module = (m.group(1) or m.group(2)).replace(".", "/")
        for candidate in (f"{module}.py", f"{module}/__init__.py"):
            if (root / candidate).is_file():
                paths.append(candidate)
                break
    return sorted(set(paths))


def fix_refs_repo(args, layerlock: str) -> None:
    """--fix-refs-repo: triage with likely fixes over thousands of refs of a
    real repository, beside the plain git walks."""
    import random
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        started = time.perf_counter()
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(args.fix_refs_repo), str(root)],
                       check=True)
        main = git_out(root, "rev-parse", "main").strip()
        subprocess.run(["git", "-C", str(root), "checkout", "-q", "-B", "main", main], check=True)
        test = next(t for t in FIX_TESTS if (root / t).is_file())
        relevant = direct_imports(root, test)
        recent = git_out(root, "rev-list", "--first-parent", "--max-count=2000", "main").split()
        tip_time = int(git_out(root, "log", "-1", "--format=%ct", "main"))
        files = [f for f in git_out(root, "ls-tree", "-r", "--name-only", "main", "--", "vllm", "tests").split()
                 if f.endswith(".py")]
        rng = random.Random(28)
        stream = []
        for n in range(1, args.refs + 1):
            # One in twenty touches what the test reads.
            path = rng.choice(relevant) if n % 20 == 0 else rng.choice(files)
            when = tip_time - rng.randrange(0, 60 * 86_400)
            data = f"# synthetic change {n}\n".encode()
            stream.append(
                f"commit refs/pull/{n}/head\n"
                f"committer Dev <dev@example.com> {when} +0000\n"
                f"data {len(f'Change {n} (#{n})')}\nChange {n} (#{n})\n"
                f"from {rng.choice(recent)}\n"
                f"M 100644 inline {path}\ndata {len(data)}\n{data.decode()}\n"
            )
        subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input="".join(stream).encode(),
                       check=True)
        print(f"{args.refs:,} refs written in {time.perf_counter() - started:.1f} s; test {test}, "
              f"{len(relevant)} files it reads")
        module = test[:-3].replace("/", ".")
        (root / "report.xml").write_text(
            f'<testsuites><testsuite><testcase classname="{module}" name="test_case">'
            '<failure message="boom">boom</failure></testcase></testsuite></testsuites>')
        since = time.strftime("%Y-%m-%d", time.gmtime(tip_time - 90 * 86_400))
        cmd = [layerlock, "triage", "core=report.xml", "--dark-since", since, "--main", "main",
               "--depth", "1", "--fix-refs", "refs/pull/*/head", "--format", "json"]
        tips = git_out(root, "for-each-ref", "--format=%(refname)", "refs/pull/")
        walks = [
            (["git", "for-each-ref", "--format=%(refname)%00%(objectname)%00%(objecttype)%00%(symref)%00",
              "refs/pull/*/head"], None),
            (["git", "log", "--source", "--stdin", "--name-only", "--no-renames", "-z",
              "--format=%x00%H%x00%ct%x00%S%x1f%s", "--", *relevant], tips + f"^{main}\n"),
            (["git", "log", "--first-parent", "--name-only", "-z", "--format=%x00%H%x00%ct%x00%s",
              f"--since={since}T00:00:00Z", "main", "--", *relevant], None),
        ]
        walls, peaks, git_walls = [], [], []
        output = ""
        for _ in range(args.runs):
            wall, peak, output = timed(cmd, root, (0, 1))
            walls.append(wall)
            peaks.append(peak)
            total = 0.0
            for git_cmd, stdin in walks:
                t = time.perf_counter()
                subprocess.run(git_cmd, cwd=root, input=stdin, capture_output=True, text=True, check=True)
                total += time.perf_counter() - t
            git_walls.append(total)
        report = json.loads(output)
        fixes = report["failures"][0]["possible_fixes"] if report["failures"] else []
        ours, theirs = statistics.median(walls), statistics.median(git_walls)
        commits = int(git_out(root, "rev-list", "--count", "--all"))
        result = {
            "repository": (args.fix_refs_repo.resolve().parent.name
                           if args.fix_refs_repo.name == "repo" else args.fix_refs_repo.name),
            "main_commit": main,
            "commits": commits,
            "refs": args.refs,
            "test": test,
            "files_read": len(relevant),
            "layerlock_seconds": [round(w, 3) for w in walls],
            "layerlock_peak_mib": round(max(peaks), 1),
            "git_alone_seconds": [round(w, 3) for w in git_walls],
            "ratio_of_medians": round(ours / theirs, 2) if theirs else None,
            "target_ratio": 1.5,
            "refs_read": report.get("fix_refs"),
            "possible_fixes_listed": len(fixes),
        }
        print(f"triage --fix-refs over {args.refs:,} refs of {commits:,} commits: layerlock {ours:.3f} s "
              f"(peak {max(peaks):.1f} MiB), git alone {theirs:.3f} s, ratio {ours / theirs:.2f} (target <= 1.5)")
        _results.write("history-fix-refs", result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layerlock", default=str(REPO / "target" / "release" / "layerlock"))
    parser.add_argument("--commits", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="generate the repository here once and reuse it on later runs")
    parser.add_argument("--fix-refs-repo", type=Path, help="a real repository (git dir or clone) to triage "
                        "with likely fixes over --refs synthetic pull-request refs")
    parser.add_argument("--refs", type=int, default=5000)
    args = parser.parse_args()
    layerlock = str(Path(args.layerlock).resolve())
    if args.fix_refs_repo:
        fix_refs_repo(args, layerlock)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep.resolve() if args.keep else Path(tmp) / "repo"
        started = time.perf_counter()
        if (root / ".git").is_dir():
            count = subprocess.run(["git", "-C", str(root), "rev-list", "--count", "restore"], capture_output=True, text=True, check=True)
            shape = {"commits": int(count.stdout), "disabled_at": int(count.stdout) - 2 - 5_000}
        else:
            shape = generate(root, args.commits)
        generated = time.perf_counter() - started
        print(f"{shape['commits']:,} commits ready in {generated:.1f} s")
        cases = {
            "blocks --disabled-by auto": (
                [layerlock, "blocks", "--disabled-by", "auto", "--format", "json",
                 "--rewrite", "install-kv-connectors.sh=check-kv-connectors.sh",
                 "--drop-line", "^uv pip install "],
                (0,),
                [["git", "log", "--first-parent", "--format=%H", "-G", "nixl-tests|mooncake-tests", "main", "--",
                  ".buildkite"]],
            ),
            "triage --dark-since auto": (
                [layerlock, "triage", "nixl-tests=report.xml", "--dark-since", "auto", "--format", "json"],
                (0, 1),
                [
                    # The disabling commit, the dark window's log, the xfail's blame.
                    ["git", "log", "--first-parent", "--format=%H", "-G", "nixl-tests", "main", "--", ".buildkite"],
                    ["git", "log", "--first-parent", "--name-only", "--format=%H %ct %s",
                     f"main~{5_000 - 1}^..main", "--", "tests/kv/test_nixl.py", "vllm/kv/nixl.py", "vllm/kv/base.py",
                     "vllm/kv/__init__.py", "vllm/__init__.py"],
                    ["git", "blame", "--porcelain", "-L", "9,9", "HEAD", "--", "tests/kv/test_nixl.py"],
                ],
            ),
        }
        results: dict = {"shape": shape, "generate_seconds": round(generated, 2), "cases": {}}
        print(f"{'case':<28} {'layerlock s':>12} {'peak MiB':>9} {'git alone s':>12} {'ratio':>6}")
        for name, (cmd, ok, git_cmds) in cases.items():
            walls, peaks, git_walls = [], [], []
            output = ""
            for _ in range(args.runs):
                wall, peak, output = timed(cmd, root, ok)
                walls.append(wall)
                peaks.append(peak)
                git_walls.append(sum(timed(git_cmd, root)[0] for git_cmd in git_cmds))
            ours, theirs = statistics.median(walls), statistics.median(git_walls)
            results["cases"][name] = {
                "layerlock_seconds": [round(w, 3) for w in walls],
                "layerlock_peak_mib": round(max(peaks), 1),
                "git_alone_seconds": [round(w, 3) for w in git_walls],
                "ratio_of_medians": round(ours / theirs, 2) if theirs else None,
                "output_bytes": len(output),
            }
            print(f"{name:<28} {ours:>12.3f} {max(peaks):>9.1f} {theirs:>12.3f} {ours / theirs:>6.2f}")
        _results.write("history", results)


if __name__ == "__main__":
    main()
