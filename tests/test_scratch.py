"""Every scratch folder of a run lives in one run folder, which the next audit removes
if the run that made it was killed."""

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


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


@pytest.mark.slow
def test_a_killed_audit_leaves_only_its_run_folder_which_the_next_audit_removes(
    project_copy, tmp_path
):
    root = project_copy("shop")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    audit = subprocess.Popen(
        [sys.executable, "-m", "auditor", "tests_shallow", "-q", "--no-probes"],
        cwd=root,
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not list(scratch.glob("audit-run-*/audit-baseline-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(audit.pid, signal.SIGKILL)
    audit.wait()
    leftovers = list(scratch.iterdir())
    assert len(leftovers) == 1 and leftovers[0].name.startswith("audit-run-")
    assert list(leftovers[0].glob("audit-baseline-*"))
    assert run_cli(scratch, "schema").returncode == 0
    assert list(scratch.iterdir()) == []
