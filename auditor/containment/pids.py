"""How many tasks an OS sandbox may hold: what bounds a fork bomb.

`RLIMIT_NPROC` does that for ordinary users (inside a user namespace it counts that
namespace's processes only), but the kernel never enforces it for root, and CI machines
run tests as root. For root there is the pids cgroup: the audit makes one folder for the
run (`audit-<pid>` beside its own cgroup) and each sandbox, from inside, makes its own
folder below it with `pids.max` set and moves itself in before it starts anything.
Folders are removed when the audit exits; those of an audit that was killed are swept by
the next one."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import resource
import secrets
from pathlib import Path

MAX_TASKS = 1024
"""Processes and threads one sandbox may hold at once. Far above what test suites use
(a thread pool, a few subprocesses), far below what takes a machine down."""

_RUN_PREFIX = "audit-"

UNBOUNDED = "process count unbounded (root, and no writable pids cgroup)"
"""Said in the sandbox's reason, and so in the report and the terminal, where nothing
bounds a fork bomb."""


def bound_by() -> str:
    """What bounds the number of tasks in each sandbox on this machine, in words."""
    if run_cgroup():
        return f"at most {MAX_TASKS} tasks per sandbox (pids cgroup)"
    if os.geteuid() != 0:
        return f"at most {MAX_TASKS} processes per sandbox (RLIMIT_NPROC)"
    return UNBOUNDED


@functools.cache
def run_cgroup() -> str:
    """This run's pids cgroup folder ("" where none can be made). Made once per process."""
    base = _own_pids_cgroup()
    if base is None:
        return ""
    _sweep(base)
    folder = base / f"{_RUN_PREFIX}{os.getpid()}"
    try:
        folder.mkdir(exist_ok=True)
        subtree = folder / "cgroup.subtree_control"
        if subtree.exists():  # cgroup v2: the sandboxes below need the controller
            subtree.write_text("+pids")
    except OSError:
        _remove(folder)
        return ""
    atexit.register(_remove, folder)
    return str(folder)


def enter_own_cgroup(run_folder: str) -> None:
    """Inside a sandbox, before anything else starts: a pids cgroup of its own (where the
    run has one) and RLIMIT_NPROC (what counts for a user that is not root)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    if hard == resource.RLIM_INFINITY or hard > MAX_TASKS:
        resource.setrlimit(resource.RLIMIT_NPROC, (MAX_TASKS, MAX_TASKS))
    if not run_folder:
        return
    own = Path(run_folder) / f"sandbox-{secrets.token_hex(6)}"
    own.mkdir()
    (own / "pids.max").write_text(str(MAX_TASKS))
    (own / "cgroup.procs").write_text("0")


def _own_pids_cgroup() -> Path | None:
    """The folder of this process's pids cgroup, if it is mounted writable and we may
    make folders in it."""
    if os.geteuid() != 0:
        return None  # RLIMIT_NPROC does the job, and cgroups are not ours to make
    try:
        memberships = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in memberships:
        hierarchy, controllers, path = line.split(":", 2)
        version = "cgroup2" if hierarchy == "0" else "cgroup"
        if version == "cgroup" and "pids" not in controllers.split(","):
            continue
        mount = _mount_point(mounts, version)
        if mount is None:
            continue
        folder = mount / path.lstrip("/")
        if version == "cgroup2" and "pids" not in _words(folder / "cgroup.subtree_control"):
            continue  # v2 without the controller delegated here
        if os.access(folder, os.W_OK):
            return folder
    return None


def _mount_point(mountinfo: list[str], fstype: str) -> Path | None:
    for line in mountinfo:
        before, _, after = line.partition(" - ")
        described = after.split()  # type, source, super options
        if len(described) < 3 or described[0] != fstype:
            continue
        if fstype == "cgroup" and "pids" not in described[2].split(","):
            continue
        fields = before.split()
        if "rw" in fields[5].split(","):
            return Path(fields[4])
    return None


def _words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def _sweep(base: Path) -> None:
    """Remove the run folders of audits that are no longer running."""
    with contextlib.suppress(OSError):
        for folder in base.glob(f"{_RUN_PREFIX}*"):
            pid = folder.name.removeprefix(_RUN_PREFIX)
            if pid.isdigit() and not _alive(int(pid)):
                _remove(folder)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(folder: Path) -> None:
    """A cgroup folder and the sandbox folders in it (empty ones: a folder that still
    holds a process cannot be removed, and is swept later)."""
    with contextlib.suppress(OSError):
        for child in folder.iterdir():
            if child.is_dir():
                with contextlib.suppress(OSError):
                    child.rmdir()
        folder.rmdir()
