"""Shared helpers: copies of the fixture projects, running the real `audit` command."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


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
        env={**__import__("os").environ, "COLUMNS": "200"},
    )


@pytest.fixture
def project_copy(tmp_path: Path):
    """Copy a fixture project into tmp_path and return the copy's path."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(
            FIXTURES / name, target, ignore=shutil.ignore_patterns("__pycache__", ".audit")
        )
        return target

    return copy
