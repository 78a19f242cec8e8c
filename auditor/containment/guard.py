"""A write and network guard for untrusted code, installed with `sys.addaudithook`.

It refuses, inside the process that installs it: network connections, and file writes,
chmods, chowns, renames, links and deletions outside the allowed folders (the run's own,
the machine's shared temp folders, and an allow-list), or inside the project itself
unless an allowed folder within it holds the path. A refused action raises
`GuardViolation`, so the test that tried it fails with "blocked by audit guard", and is
recorded even when the test swallows the exception.

An audit hook cannot be removed, so the guard lives only in child processes. It stops
honest accidents in Python code; it does not stop C extensions or subprocesses.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {
    "os.chmod": 0,
    "os.chown": 0,
    "os.remove": 0,
    "os.rmdir": 0,
    "os.mkdir": 0,
    "os.rename": (0, 1),
    "os.replace": (0, 1),
    "os.link": (0, 1),
    "os.symlink": 1,
    "os.truncate": 0,
    "os.utime": 0,
    "shutil.rmtree": 0,
    "shutil.chown": 0,
}
_SOCKET_EVENTS = ("socket.connect", "socket.sendto", "socket.sendmsg")
_WATCHED = frozenset(
    {"open", *_PATH_EVENTS, *_SOCKET_EVENTS, "socket.getaddrinfo", "os.kill", "os.killpg"}
)
"""The events the guard checks. Every other one returns at once: `builtins.id`, raised on
each call of `id()`, comes by the thousand from one `copy.deepcopy`."""
_ALWAYS_WRITABLE = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
SHARED_TEMP = ("/tmp", "/var/tmp")
"""Writing `/tmp/<name>` is ordinary test behaviour. Inside the OS sandbox these folders
are copy-on-write overlays (`isolation`), so the machine's stay untouched."""


class GuardViolation(PermissionError):
    """Raised at the call site of a refused action."""


@dataclass(frozen=True)
class Blocked:
    event: str
    target: str


def _as_text(path: object) -> str | None:
    if isinstance(path, bytes):
        return os.fsdecode(path)
    if isinstance(path, str):
        return path
    if hasattr(path, "__fspath__"):
        return _as_text(os.fspath(path))
    return None


def _is_write(mode: object, flags: object) -> bool:
    if isinstance(flags, int) and flags & _WRITE_FLAGS:
        return True
    return isinstance(mode, str) and any(char in mode for char in "wax+")


def _hits_the_auditor(event: str, target: int) -> bool:
    """A signal to the process that runs this one (the auditor or its sandbox), to every
    process (-1), to init, or to the parent's process group."""
    parent = os.getppid()
    if event == "os.kill":
        return target in (parent, -1, 1)
    try:
        return target == os.getpgid(parent)
    except OSError:
        return False


class Guard:
    def __init__(
        self,
        allowed_roots: Iterable[str],
        on_block: Callable[[Blocked], None],
        protected_roots: Iterable[str] = (),
    ) -> None:
        allowed = {os.path.realpath(root): True for root in (*allowed_roots, *SHARED_TEMP)}
        protected = {os.path.realpath(root): False for root in protected_roots}
        self._roots = {**protected, **allowed}
        """Folder -> whether writes below it are allowed; the deepest folder decides."""
        self._on_block = on_block
        self._inside = False

    def allows(self, path: str) -> bool:
        real = os.path.realpath(path)
        if real in _ALWAYS_WRITABLE or real.startswith("/proc/self/fd/"):
            return True
        holders = [root for root in self._roots if real == root or real.startswith(root + os.sep)]
        return bool(holders) and self._roots[max(holders, key=len)]

    def _refuse(self, event: str, target: str) -> None:
        blocked = Blocked(event, target)
        self._on_block(blocked)
        raise GuardViolation(f"blocked by audit guard: {event} {target}")

    def __call__(self, event: str, args: tuple) -> None:
        if event not in _WATCHED or self._inside:
            return
        self._inside = True
        try:
            self._check(event, args)
        finally:
            self._inside = False

    def _check(self, event: str, args: tuple) -> None:
        if event == "open":
            path = _as_text(args[0])
            if path is not None and _is_write(args[1], args[2]) and not self.allows(path):
                self._refuse("open-for-write", path)
        elif event in _PATH_EVENTS:
            positions = _PATH_EVENTS[event]
            for position in positions if isinstance(positions, tuple) else (positions,):
                path = _as_text(args[position]) if len(args) > position else None
                if path is not None and not self.allows(path):
                    self._refuse(event, path)
        elif event in _SOCKET_EVENTS:
            address = args[1] if len(args) > 1 else None
            if not (isinstance(address, (str, bytes))):  # AF_UNIX addresses are paths
                self._refuse("network", repr(address))
        elif event == "socket.getaddrinfo":
            self._refuse("network", f"resolve {args[0]!r}")
        elif event in ("os.kill", "os.killpg") and _hits_the_auditor(event, args[0]):
            self._refuse("signal", f"{event.split('.')[1]}({args[0]}, {args[1]})")


def install(
    allowed_roots: Iterable[str],
    on_block: Callable[[Blocked], None],
    protected_roots: Iterable[str] = (),
) -> Guard:
    guard = Guard(allowed_roots, on_block, protected_roots)
    sys.addaudithook(guard)
    return guard
