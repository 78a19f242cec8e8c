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
    try:
        folder, lock = held_folder(Path(tempfile.gettempdir()), _PREFIX)
    except OSError:
        return None
    atexit.register(_remove, folder, lock)
    tempfile.tempdir = str(folder)
    return folder


def held_folder(base: Path, kind: str, name: str = "") -> tuple[Path, int]:
    """A new folder `base/{kind}{name}...` held by this process (the returned descriptor
    holds its lock) until the process closes it or ends; first removes the `kind` folders
    nobody holds. It appears under its name already locked: a sweep running at the same
    moment elsewhere (two Dask workers starting) cannot take it for a leftover."""
    sweep(base, kind)
    hidden = Path(tempfile.mkdtemp(prefix=f".{kind}{name}", dir=base))
    lock = os.open(hidden / _LOCK, os.O_WRONLY | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    folder = hidden.with_name(hidden.name[1:])
    os.rename(hidden, folder)
    return folder, lock


def sweep(base: Path, kind: str = _PREFIX) -> None:
    """Remove the `kind` folders under `base` that no live process holds."""
    for folder in base.glob(f"{kind}*"):
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
