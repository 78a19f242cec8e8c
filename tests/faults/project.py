"""The small project every fault is injected into, and how its audits are read."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import cached_results, mutants_of, one_module_project

SOURCE = """\
def add(a, b):
    return a + b


def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x
"""

TESTS = """\
import time

from calc import add, clamp


def test_add():
    assert add(2, 3) == 5


def test_clamp():
    time.sleep(0.2)  # a mutant's run lasts long enough to break something during it
    assert clamp(5, 0, 10) == 5
    assert clamp(-1, 0, 10) == 0
"""

FLAGS = ("-q", "--no-probes", "--json", "report.json")


def make_project(root: Path) -> Path:
    return one_module_project(root, "calc", SOURCE, {"test_calc.py": TESTS})


def verdicts(root: Path, report: str = "report.json") -> dict[str, str]:
    """Each mutant's status, by id."""
    loaded = json.loads((root / report).read_text(encoding="utf-8"))
    return {mutant["id"]: mutant["status"] for mutant in mutants_of(loaded)}


def details(root: Path, report: str = "report.json") -> dict[str, str]:
    """Each mutant's status with its detail (why a Timeout was stopped), by id: what an
    assertion on `verdicts` shows when they differ."""
    loaded = json.loads((root / report).read_text(encoding="utf-8"))
    return {m["id"]: f"{m['status']}: {m.get('status_reason') or ''}" for m in mutants_of(loaded)}


def start_audit(root: Path, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "auditor", "tests", *(flags or FLAGS)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(),
    )


def _environment() -> dict[str, str]:
    import os

    return {**os.environ, "COLUMNS": "200"}


def when_verdicts_are_written(root: Path, process: subprocess.Popen[str]) -> None:
    """Wait until the run has written a verdict to its cache, and is still running."""
    deadline = time.monotonic() + 120
    while cached_results(root) == 0 and time.monotonic() < deadline:
        assert process.poll() is None, "the audit ended before it wrote a verdict"
        time.sleep(0.02)
    assert process.poll() is None, "the audit ended before anything could be done to it"


def line_of(output: str, prefix: str) -> str:
    """The line of the output that starts with `prefix` (what the user saw)."""
    lines = [line.strip() for line in output.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, output
    return lines[0]


def sound(cache: Path) -> bool:
    with sqlite3.connect(cache) as connection:
        return connection.execute("pragma quick_check").fetchone()[0] == "ok"
