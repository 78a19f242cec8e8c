"""One temporary folder per audit process, holding every scratch folder of the run.

A run killed with SIGKILL (a CI job's timeout) cannot clean up after itself: its
baseline folders, runner homes and project copies would pile up in the temporary
folder. So the run's folders live in one folder that the run holds a lock on; the next
audit removes every such folder whose lock nobody holds. A lock, not a process id:
it is released by the kernel whatever ends the process, and it means the same in
containers that share a temporary folder but not their process ids."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import tempfile
from pathlib import Path

_PREFIX = "audit-run-"
_LOCK = ".lock"


def use_run_folder() -> Path | None:
    """Make this process's run folder and point `tempfile` at it; first sweep the folders
    of runs that ended without cleaning up. For the CLI, which owns its process. None
    where the temporary folder cannot be written (the stages say so when they need it)."""
    base = Path(tempfile.gettempdir())
    sweep(base)
    try:
        folder = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=base))
        lock = os.open(folder / _LOCK, os.O_WRONLY | os.O_CREAT, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX)
    except OSError:
        return None
    atexit.register(_remove, folder, lock)
    tempfile.tempdir = str(folder)
    return folder


def sweep(base: Path) -> None:
    """Remove the run folders under `base` that no live audit holds."""
    for folder in base.glob(f"{_PREFIX}*"):
        with contextlib.suppress(OSError):
            lock = os.open(folder / _LOCK, os.O_WRONLY)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a running audit's
            finally:
                os.close(lock)
            shutil.rmtree(folder, ignore_errors=True)


def _remove(folder: Path, lock: int) -> None:
    tempfile.tempdir = None
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.close(lock)
