"""Give the system back memory the audit process has freed.

CPython frees objects to its own arenas and to malloc, which keep the pages; a stage that
built and dropped large trees (libcst modules, coverage data) would otherwise set the
process's size for the rest of the run, beside the runners and their children."""

from __future__ import annotations

import ctypes
import gc


def release_freed_memory() -> None:
    """Collect garbage and ask glibc to return its free pages (elsewhere: collect only)."""
    gc.collect()
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim(0)
