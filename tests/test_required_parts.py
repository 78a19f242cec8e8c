"""A test that needs a part of the machine (the OS sandbox, a pids cgroup, Chromium)
skips without it, saying why, and fails instead where AUDIT_TEST_REQUIRE names the part:
CI names them all, so a broken sandbox probe cannot turn the escape suite into skips."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEEDS_THE_SANDBOX = (
    "tests/test_isolation.py::test_the_shared_temp_folder_is_writable_inside_and_untouched_outside"
)


def _run_without_unshare(tmp_path: Path, required: str) -> subprocess.CompletedProcess[str]:
    """The test, on a PATH without util-linux's `unshare`: no OS sandbox can start."""
    bare = tmp_path / "bin"
    bare.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key != "AUDIT_TEST_REQUIRE"}
    env["PATH"] = str(bare)
    if required:
        env["AUDIT_TEST_REQUIRE"] = required
    return subprocess.run(
        [sys.executable, "-m", "pytest", NEEDS_THE_SANDBOX, "-o", "addopts=", "-rsf", "-q"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_without_the_sandbox_a_sandbox_test_skips_and_says_why(tmp_path):
    done = _run_without_unshare(tmp_path, required="")
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout
    assert "no os-sandbox here: OS sandbox unavailable: util-linux `unshare` not found" in (
        done.stdout
    )


def test_where_the_sandbox_is_required_its_absence_fails_the_test(tmp_path):
    done = _run_without_unshare(tmp_path, required="cgroup,os-sandbox,chromium")
    assert done.returncode == 1, done.stdout
    assert "1 error" in done.stdout  # failed in set-up, before the test ran
    assert "needs os-sandbox, which AUDIT_TEST_REQUIRE requires" in done.stdout


def test_the_ci_script_requires_every_part():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "AUDIT_TEST_REQUIRE=os-sandbox,cgroup,chromium" in script
