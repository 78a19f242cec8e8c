"""Which functions of the code under test a work item ran, so that its results are kept
until one of them changes (`probes.cache`), as a mutant's verdict is kept until a body
its tests ran changes.

Python 3.12+ on Linux: `sys.monitoring` reports a function's first start and, disabled
there, costs nothing after. Before 3.12 the only hooks are the trace and profile
functions, called for every call the process makes, Hypothesis's own included, which
more than doubles a probe's time: nothing is recorded, and a result is kept only until
any function of the code under test changes.

An item runs in a fork of its own, and a witness search in further forks below it (one
per mutant), any of which may be killed on a timeout: each writes a function the moment
it starts to a file in memory they all share (`RanLog`), which the probe process reads
once the item is over.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import sys
from collections.abc import Collection
from types import CodeType

from auditor.monitoring import free_monitoring_tool

Ran = list[tuple[str, int]]
"""Each function that started: its file's real path and its last line, which lies inside
the body (`discovery.bodies`) it belongs to, if any."""


class RanLog:
    """The functions one work item's forks started. Made in the probe process before
    the item's first fork; `record` in that fork."""

    def __init__(self) -> None:
        can = free_monitoring_tool() is not None and hasattr(os, "memfd_create")
        self._fd = os.memfd_create("audit-ran", os.MFD_CLOEXEC) if can else None

    def record(self, source_files: Collection[str]) -> None:
        """From now on, in this process and the forks it makes, write each function of
        `source_files` (real paths) the first time it starts."""
        tool = free_monitoring_tool()
        if self._fd is None or tool is None:
            return
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        monitoring.use_tool_id(tool, "audit probe reach")
        on_start = _Recorder(frozenset(source_files), self._fd)
        monitoring.register_callback(tool, monitoring.events.PY_START, on_start)
        monitoring.set_events(tool, monitoring.events.PY_START)

    def ran(self) -> Ran | None:
        """What the forks wrote, sorted; None where nothing could be recorded."""
        if self._fd is None:
            return None
        written = os.pread(self._fd, os.fstat(self._fd).st_size, 0)
        try:
            return sorted({(path, line) for path, line in map(json.loads, written.splitlines())})
        except ValueError:
            return None  # a line cut short: what it named may have run, as may anything

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class _Recorder:
    """`sys.monitoring`'s PY_START callback: a function started; its later starts cost
    no callback. Module and class bodies are left out: they are the code outside
    function bodies, which the cache keys every result by."""

    def __init__(self, sources: frozenset[str], fd: int) -> None:
        self._sources, self._fd = sources, fd
        self._wanted: dict[str, str | None] = {}

    def __call__(self, code: CodeType, offset: int) -> object:
        path = self._source(code.co_filename)
        if path is not None and code.co_flags & inspect.CO_NEWLOCALS:
            # Whatever happens here must not reach the code under test (a function
            # that closed every descriptor: its item has no result to keep either).
            with contextlib.suppress(OSError):
                os.write(self._fd, json.dumps([path, _last_line(code)]).encode() + b"\n")
        return sys.monitoring.DISABLE  # type: ignore[attr-defined]

    def _source(self, filename: str) -> str | None:
        if filename not in self._wanted:
            path = os.path.realpath(filename)
            self._wanted[filename] = path if path in self._sources else None
        return self._wanted[filename]


def _last_line(code: CodeType) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return max(lines, default=code.co_firstlineno)
