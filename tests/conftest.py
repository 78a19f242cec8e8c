"""Shared helpers: copies of the fixture projects, running the real `audit` command."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Let pytest keep its assert-rewritten copy of every plugin's package, as any plain
    `pytest` run does unless PYTHONDONTWRITEBYTECODE is set, which this machine and CI
    set. audit's children never write bytecode, so without it every pytest process an
    audit starts rewrites Hypothesis's package again: ~1.2 s each, hundreds of them."""
    with tempfile.TemporaryDirectory(prefix="audit-warm-") as empty:
        (Path(empty) / "pytest.ini").write_text("[pytest]\n")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
            cwd=empty,
            env=env,
            capture_output=True,
            timeout=120,
        )


SHARED_AUDITS = ("fixture_runs", "rendered")
"""Session fixtures that run whole audits once for many tests."""


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the users of a shared audit run on one worker (which runs it
    once), and each other module on one worker (its module fixtures run once too)."""
    for item in items:
        shared = [name for name in SHARED_AUDITS if name in item.fixturenames]
        group = shared[0] if shared else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under root (and its mode) with a hash of its bytes.

    `.audit/` is left out: it is where audit writes its cache and report by design."""
    digest = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative == ".audit" or relative.startswith(".audit/"):
            continue
        if path.is_file():
            content = hashlib.sha256(path.read_bytes()).hexdigest()
            digest[relative] = f"{oct(path.stat().st_mode)} {content}"
        else:
            digest[relative] = f"{oct(path.stat().st_mode)} dir"
    return digest


def run_audit(*args: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """The real command line, in a fresh process, as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "auditor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )


def cached_results(root: Path) -> int:
    """Verdicts in a project's result cache (read-only: the run may still be writing)."""
    cache = root / ".audit" / "cache.sqlite"
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True) as connection:
            return connection.execute("select count(*) from results").fetchone()[0]
    except sqlite3.Error:
        return 0


def stable(report: dict) -> dict:
    """The report without what legitimately differs between runs: times, cache use,
    where the project lies, and the wording of timeouts."""
    report = json.loads(json.dumps(report))
    report.pop("timings")
    report["project"].pop("root")
    for test in report["baseline"]["tests"]:
        test.pop("duration")
    mutation = report["mutation"]
    if mutation is not None:
        varying = ("duration", "mutants_per_second", "cache_hits", "overhead_ms")
        for key in (*varying, "child_overhead_ms"):
            mutation.pop(key)
        for mutant in mutation["mutants"]:
            mutant.pop("duration")
            mutant.pop("cached")
            if mutant["status"] == "Timeout":
                mutant["status_reason"] = ""
    if report.get("probes") is not None:
        report["probes"].pop("duration")
    return report


@pytest.fixture
def project_copy(tmp_path: Path):
    """Copy a fixture project into tmp_path (under `as_name`) and return the copy's path."""

    def copy(name: str, as_name: str = "") -> Path:
        target = tmp_path / (as_name or name)
        shutil.copytree(
            FIXTURES / name, target, ignore=shutil.ignore_patterns("__pycache__", ".audit")
        )
        return target

    return copy


@pytest.fixture(scope="session")
def fixture_runs(tmp_path_factory):
    """One real audit of each fixture's shallow and strong suite, shared by the checks:
    {(fixture, suite): (completed process, report, project copy, digest before)}."""
    runs = {}
    base = tmp_path_factory.mktemp("e2e")
    for name in ("ledger", "shop", "textkit"):
        root = base / name
        shutil.copytree(FIXTURES / name, root, ignore=shutil.ignore_patterns("__pycache__"))
        before = tree_digest(root)
        for suite in ("tests_shallow", "tests_strong"):
            report = base / f"{name}-{suite}.json"
            result = run_audit(suite, "-q", "--json", str(report), cwd=root)
            runs[name, suite] = (result, json.loads(report.read_text()), root, before)
    return runs
