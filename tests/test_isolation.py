"""The OS sandbox: escapes the audit-hook guard cannot see are stopped by read-only mounts
and an empty network namespace. Skipped (with the reason) where the machine has no user
namespaces: the escape suite must never run under the guard alone."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.isolation import choose
from tests.conftest import run_audit, tree_digest

ISOLATION = choose("auto")
needs_os_sandbox = pytest.mark.skipif(
    ISOLATION.level != "os", reason=f"no OS sandbox here: {ISOLATION.reason}"
)


@needs_os_sandbox
def test_escapes_past_the_guard_are_blocked_by_the_sandbox(project_copy, tmp_path):
    root = project_copy("hostile")
    before = tree_digest(root)
    out = tmp_path / "r.json"
    result = run_audit(
        "escapes", "-q", "--sandbox", "os", "--timeout", "5", "--json", str(out), cwd=root
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["sandbox"]["level"] == "os"
    tests = {t["nodeid"].split("::")[-1]: t for t in report["baseline"]["tests"]}
    libc = tests["test_writes_through_libc_directly"]
    assert libc["outcome"] == "blocked"
    assert libc["message"].startswith("blocked by sandbox: ")
    assert "Read-only file system" in libc["message"]
    assert tests["test_writes_through_a_shell"]["outcome"] in ("failed", "blocked")
    assert tests["test_still_audited"]["outcome"] == "passed"
    assert not Path("/etc/audit-escape-ctypes").exists()
    assert not Path("/etc/audit-escape-shell").exists()
    assert tree_digest(root) == before


@needs_os_sandbox
def test_inside_the_sandbox_only_the_writable_folders_are_writable(tmp_path):
    writable = tmp_path / "scratch"
    writable.mkdir()
    probe = (
        "import socket\n"
        "def attempt(action):\n"
        "    try:\n"
        "        action(); return 'done'\n"
        "    except OSError as exc:\n"
        "        return exc.strerror\n"
        f"print(attempt(lambda: open({str(writable / 'f')!r}, 'w').close()))\n"
        f"print(attempt(lambda: open({str(tmp_path / 'f')!r}, 'w').close()))\n"
        "print(attempt(lambda: socket.create_connection(('127.0.0.1', 9), timeout=2)))\n"
    )
    command = ISOLATION.wrap([sys.executable, "-c", probe], [str(writable)])
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == [
        "done",
        "Read-only file system",
        "Network is unreachable",
    ], done.stderr
    assert not (tmp_path / "f").exists()


def test_guard_and_none_are_taken_as_asked():
    assert choose("guard").level == "guard"
    assert choose("none").level == "none"
    assert choose("guard").wrap(["x"], []) == ["x"]
