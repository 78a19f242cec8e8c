"""The bound on tasks per sandbox: RLIMIT_NPROC always, a pids cgroup of its own where the
run has one (root with a writable cgroup file system), and folders cleaned up."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.containment import pids

needs_cgroup = pytest.mark.needs("cgroup")


def enter_in_a_child(run_folder: str) -> dict:
    code = (
        "import json, resource\n"
        "from auditor.containment import pids\n"
        f"pids.enter_own_cgroup({run_folder!r})\n"
        "print(json.dumps({'nproc': resource.getrlimit(resource.RLIMIT_NPROC)[0],"
        " 'cgroup': open('/proc/self/cgroup').read()}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_a_sandbox_gets_an_nproc_limit_even_without_a_cgroup():
    assert enter_in_a_child("")["nproc"] == pids.MAX_TASKS


@needs_cgroup
def test_a_sandbox_moves_into_a_cgroup_of_its_own_below_the_runs():
    run_folder = Path(pids.run_cgroup())
    assert run_folder.name == f"audit-{os.getpid()}"
    before = {folder.name for folder in run_folder.iterdir() if folder.is_dir()}
    inside = enter_in_a_child(str(run_folder))["cgroup"]
    (new,) = {folder for folder in run_folder.iterdir() if folder.is_dir()} - {
        run_folder / name for name in before
    }
    assert (new / "pids.max").read_text().strip() == str(pids.MAX_TASKS)
    assert f"/{run_folder.name}/{new.name}\n" in inside
    new.rmdir()  # the child has exited: its folder is empty


@needs_cgroup
def test_folders_of_audits_no_longer_running_are_swept():
    base = Path(pids.run_cgroup()).parent
    stale = base / "audit-99999999"  # above any pid_max: no such process
    stale.mkdir()
    (stale / "sandbox-0").mkdir()
    live = Path(pids.run_cgroup())
    pids._sweep(base)
    assert not stale.exists()
    assert live.exists()
