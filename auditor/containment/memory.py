"""Give the system back memory the audit process has freed.

CPython frees objects to its own arenas and to malloc, which keep the pages; a stage that
built and dropped large trees (libcst modules, coverage data) would otherwise set the
process's size for the rest of the run, beside the runners and their children."""

from __future__ import annotations

import os


def release_freed_memory() -> None:
    """Ask glibc to return its free pages (elsewhere: nothing). No garbage collection
    first: what the stages drop (syntax trees, coverage data) holds no cycles and is
    freed as it goes, so a pass over the whole heap would find nothing to free and cost
    a warm session time at every question."""
    import ctypes  # here: test runners import this module for `resident_bytes`

    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim(0)


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes(pid: int) -> int:
    """Resident set size from /proc (0 where there is none: the process is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


def address_space_bytes() -> int:
    """This process's virtual memory size (what RLIMIT_AS limits)."""
    with open("/proc/self/statm", "rb") as statm:
        return int(statm.read().split()[0]) * _PAGE_SIZE


MEMORY_POLL_SECONDS = 0.05
"""How often a parent reads its child's resident memory while it waits for it."""


class MemoryWatch:
    """Stops a runaway child (a mutant's, a probe's) by the memory it grows, long before
    its timeout: the limit is on growth over its parent's size at fork."""

    def __init__(self, pid: int, parent_bytes: int, growth_limit_mb: int) -> None:
        self.pid = pid
        self.parent_bytes = parent_bytes
        self.limit = parent_bytes + growth_limit_mb * 1024 * 1024
        self.growth_limit_mb = growth_limit_mb
        self.exceeded = False

    def allow(self, growth_limit_mb: int) -> None:
        """Let the child grow this much instead, if that is more."""
        if growth_limit_mb > self.growth_limit_mb:
            self.growth_limit_mb = growth_limit_mb
            self.limit = self.parent_bytes + growth_limit_mb * 1024 * 1024
            self.exceeded = False

    def check(self) -> bool:
        self.exceeded = resident_bytes(self.pid) > self.limit
        return self.exceeded

    def peaked(self, peak_bytes: int) -> bool:
        """Whether a peak resident size (the kernel's, at the child's end) was past the
        limit, whatever the polls saw."""
        return self.exceeded or peak_bytes > self.limit

    def describe(self) -> str:
        return f"grew more than {self.growth_limit_mb} MB beyond its parent (runaway memory)"
