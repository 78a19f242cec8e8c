"""Every scratch folder of a run lives in one run folder, which the next audit removes
if the run that made it was killed."""

import fcntl
import os
import subprocess
import sys
from pathlib import Path


def run_cli(tmp: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    command = [sys.executable, "-m", "auditor", *args]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def killed_run_folder(tmp: Path) -> Path:
    folder = tmp / "audit-run-killed"
    (folder / "audit-baseline-x").mkdir(parents=True)
    (folder / ".lock").touch()
    return folder


def test_the_folder_of_a_killed_run_is_removed_by_the_next_audit(tmp_path):
    leftover = killed_run_folder(tmp_path)
    assert run_cli(tmp_path, "schema").returncode == 0
    assert not leftover.exists()


def test_the_folder_of_a_running_audit_is_kept(tmp_path):
    running = killed_run_folder(tmp_path)
    lock = os.open(running / ".lock", os.O_WRONLY)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        assert run_cli(tmp_path, "schema").returncode == 0
    finally:
        os.close(lock)
    assert (running / "audit-baseline-x").is_dir()


def test_an_audit_leaves_no_folder_of_its_own(project_copy, tmp_path):
    root = project_copy("shop")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    result = run_cli(scratch, "tests_shallow", "-q", "--no-probes", cwd=root)
    assert result.returncode == 0, result.stderr
    assert list(scratch.iterdir()) == []
