"""The OS sandbox around every child that runs untrusted code (baseline, mutant runners,
copy runs): Linux user, mount, PID and network namespaces, entered with util-linux
`unshare`.

Inside, every mount is read-only except the run's own scratch folders and the
copy-on-write overlays on `/tmp`, `/var/tmp` and `--allow-write` folders, `/dev` holds
only the harmless devices, the only processes in sight are the sandbox's own, the only
network is a loopback that is down, the number of tasks is bounded (`auditor.containment.pids`),
and the command starts with no capabilities, so it cannot undo any of that. The
audit-hook guard still runs inside: the sandbox stops what the hook cannot see (C
extensions, subprocesses, deliberate escapes); the hook names what a test tried.

`python -m auditor.containment.isolation SETUP_JSON -- COMMAND...` is the entry point `wrap` builds:
it runs inside the new namespaces, sets them up, then execs COMMAND."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from auditor.containment import pids
from auditor.containment.guard import SHARED_TEMP
from auditor.containment.launch import own_module
from auditor.errors import ConfigError

Level = Literal["os", "guard", "none"]

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_NOATIME, _MS_NODIRATIME, _MS_BIND = 32, 1024, 2048, 4096
_MS_REC, _MS_PRIVATE, _MS_RELATIME = 16384, 1 << 18, 1 << 21
_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 24, 38
_KEPT_FLAGS = {
    "nosuid": _MS_NOSUID,
    "nodev": _MS_NODEV,
    "noexec": _MS_NOEXEC,
    "noatime": _MS_NOATIME,
    "nodiratime": _MS_NODIRATIME,
    "relatime": _MS_RELATIME,
}
_LEFT_WRITABLE = ("/dev/shm", "/dev/pts")
"""Shared memory and terminals of the sandbox's own (fresh file systems, nothing of the
machine's): ordinary tests need them. `/proc` and `/sys` are read-only like the rest."""
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""The device nodes a sandbox sees; consoles, disks and the kernel log are not among them."""
_DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}


@dataclass(frozen=True)
class Isolation:
    level: Level
    reason: str
    processes_bounded: bool = False
    """Whether a sandbox's process count is bounded (`pids.bound_by`)."""

    def wrap(self, command: list[str], home: str, overlaid: Sequence[str] = ()) -> list[str]:
        """The command to start instead of `command` at this level. `home` is the
        sandbox's own folder (writable, and where the overlays keep their changes);
        `overlaid` folders (`allow_write`) get a copy-on-write overlay: writable inside,
        never changed outside."""
        if self.level != "os":
            return command
        overlaid = [*overlaid, *SHARED_TEMP]
        unshare = shutil.which("unshare") or "unshare"
        setup = {"home": home, "overlaid": sorted(set(overlaid)), "pids_cgroup": pids.run_cgroup()}
        return [
            unshare,
            "--user",
            "--map-root-user",
            "--net",
            "--mount",
            "--pid",
            "--mount-proc",
            "--fork",
            "--kill-child",
            *own_module("auditor.containment.isolation", json.dumps(setup), "--", *command),
        ]

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        """Kill a process started from `wrap`'s command in a session of its own, and
        everything it started; gone when this returns. In the OS sandbox the process is
        `unshare`, whose own child is its PID namespace's init: killed first, the init
        takes every process of the namespace with it (a fork bomb's thousand) before
        `unshare` reaps it and exits; killing `unshare` first would leave that to the
        kernel, after the audit has moved on."""
        if self.level == "os":
            _kill_namespace(process)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def _kill_namespace(process: subprocess.Popen[bytes]) -> None:
    """Kill the init of `unshare`'s namespace until `unshare` exits. Killed just after it
    started, `unshare` may not have forked the init yet: it is looked for again."""
    deadline = time.monotonic() + _NAMESPACE_TEARDOWN_SECONDS
    while time.monotonic() < deadline:
        for inner in _children_of(process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(inner, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0.05)
            return


_NAMESPACE_TEARDOWN_SECONDS = 10.0


def _children_of(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            return [int(child) for child in children.read().split()]
    except (OSError, ValueError):
        return []


NO_ISOLATION = Isolation("guard", "the audit-hook guard only")
"""The default for callers that do not choose (the guard, as before the OS sandbox)."""


@functools.cache
def _probe() -> tuple[bool, str]:
    """Can this machine enter the namespaces and make its mounts read-only?"""
    if not sys.platform.startswith("linux"):
        return False, "not Linux"
    if shutil.which("unshare") is None:
        return False, "util-linux `unshare` not found"
    with tempfile.TemporaryDirectory(prefix="audit-sandbox-probe-") as home:
        probe = Isolation("os", "").wrap([sys.executable, "-c", "pass"], home)
        try:
            done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"unshare failed: {exc}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return False, f"user namespaces unavailable ({last})"
    return True, f"user, mount, PID and network namespaces; {pids.bound_by()}"


def choose(requested: str) -> Isolation:
    """`auto` takes the OS sandbox where it works and falls back to the guard, saying why;
    `os` insists on it; `guard` and `none` are taken as asked."""
    if requested in ("guard", "none"):
        return Isolation(requested, "asked for")  # type: ignore[arg-type]
    available, why = _probe()
    if available:
        return Isolation("os", why, processes_bounded=pids.bound_by() != pids.UNBOUNDED)
    if requested == "os":
        raise ConfigError(f"--sandbox os is not available here: {why}")
    return Isolation("guard", f"OS sandbox unavailable: {why}; the audit-hook guard only")


# inside the namespaces ------------------------------------------------------------------


def _mount(libc: ctypes.CDLL, source: str, target: str, flags: int) -> None:
    if libc.mount(source.encode(), target.encode(), None, flags, None) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def _mounts() -> list[tuple[str, int]]:
    """(mount point, flags to keep on remount) from /proc/self/mountinfo."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as info:
        for line in info:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")
            kept = 0
            for option in fields[5].split(","):
                kept |= _KEPT_FLAGS.get(option, 0)
            found.append((point, kept))
    return found


def _under(path: str, folders: tuple[str, ...] | list[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _mount_new(libc: ctypes.CDLL, fstype: str, target: str, flags: int, data: str) -> bool:
    return libc.mount(fstype.encode(), target.encode(), fstype.encode(), flags, data.encode()) == 0


def _private_dev(libc: ctypes.CDLL) -> None:
    """A fresh /dev: the harmless devices bound from the machine's, shared memory and
    terminals of the sandbox's own. (The machine's are reached through descriptors opened
    before the new /dev covers them.)"""
    kept = {name: os.open(f"/dev/{name}", os.O_PATH) for name in _DEVICES}
    noexec = _MS_NOSUID | _MS_NOEXEC
    for fstype, target, flags, data in (
        ("tmpfs", "/dev", noexec, "mode=755"),
        ("tmpfs", "/dev/shm", noexec | _MS_NODEV, "mode=1777"),
    ):
        os.makedirs(target, exist_ok=True)
        if not _mount_new(libc, fstype, target, flags, data):
            error = ctypes.get_errno()
            raise OSError(error, f"mount {target}: {os.strerror(error)}")
    for name, descriptor in kept.items():
        open(f"/dev/{name}", "w").close()
        _mount(libc, f"/proc/self/fd/{descriptor}", f"/dev/{name}", _MS_BIND)
        os.close(descriptor)
    os.mkdir("/dev/pts")
    if _mount_new(libc, "devpts", "/dev/pts", noexec, "newinstance,ptmxmode=0666,mode=620"):
        os.symlink("pts/ptmx", "/dev/ptmx")
    for name, target in _DEV_LINKS.items():
        os.symlink(target, f"/dev/{name}")


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    """The command starts with no capabilities, even as root of the namespace: it cannot
    remount what was made read-only, nor gain privileges through a setuid program."""
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as last:
        capabilities = range(int(last.read()) + 1)
    for option, argument in [
        *((_PR_CAPBSET_DROP, cap) for cap in capabilities),
        (_PR_SET_NO_NEW_PRIVS, 1),
    ]:
        if libc.prctl(option, argument, 0, 0, 0) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"prctl({option}, {argument}): {os.strerror(error)}")


def _overlay(libc: ctypes.CDLL, folder: str, layers: str) -> None:
    """Mount a copy-on-write overlay on `folder`: reads see its files, writes land in
    `layers` (the sandbox's home) and never reach the folder itself."""
    if any(char in folder + layers for char in ",:"):
        raise OSError(errno.EINVAL, f"cannot overlay {folder}: ',' or ':' in the path")
    upper, work = os.path.join(layers, "upper"), os.path.join(layers, "work")
    os.makedirs(upper)
    os.makedirs(work)
    options = f"lowerdir={folder},upperdir={upper},workdir={work}"
    for extra in ("", ",userxattr"):  # an unprivileged user's namespace needs userxattr
        if _mount_new(libc, "overlay", folder, 0, options + extra):
            return
    error = ctypes.get_errno()
    raise OSError(error, f"overlay on {folder}: {os.strerror(error)}")


def enter(home: str, overlaid: list[str], pids_cgroup: str = "") -> None:
    """Bound the tasks, give the sandbox its own /dev, lay the copy-on-write overlays,
    make every mount read-only but the home and the overlays, and drop every capability.

    The home is bound onto itself last, from a descriptor opened first: an overlay laid
    over a folder that holds it would otherwise hide the real one."""
    libc = ctypes.CDLL(None, use_errno=True)
    pids.enter_own_cgroup(pids_cgroup)
    _mount(libc, "none", "/", _MS_REC | _MS_PRIVATE)
    _private_dev(libc)
    home = os.path.realpath(home)
    real_home = os.open(home, os.O_PATH | os.O_DIRECTORY)
    folders = sorted({os.path.realpath(folder) for folder in overlaid if os.path.isdir(folder)})
    for number, folder in enumerate(folders):
        # Through the descriptor: once an overlay covers the folder that holds the home
        # (`/tmp`), the home's path leads into that overlay, which cannot hold another's
        # layers.
        _overlay(libc, folder, f"/proc/self/fd/{real_home}/overlay-{number}")
    _mount(libc, f"/proc/self/fd/{real_home}", home, _MS_BIND | _MS_REC)
    os.close(real_home)
    for point, kept in _mounts():
        if _under(point, _LEFT_WRITABLE) or _under(point, [home, *folders]):
            continue
        if not os.path.exists(point):
            continue  # covered by the new /dev: out of reach already
        try:
            _mount(libc, "none", point, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept)
        except OSError:
            if point == "/":
                raise
            # A mount we may not touch (locked by the outer namespace): leave it, but
            # say so; it is listed in the run's log.
            print(f"audit sandbox: could not make {point} read-only", file=sys.stderr)
    _drop_capabilities(libc)


def main(argv: list[str]) -> None:
    setup = json.loads(argv[0])
    command = argv[argv.index("--") + 1 :]
    enter(setup["home"], setup["overlaid"], setup["pids_cgroup"])
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
