"""Which functions of the code under test a probe ran, so that its result is kept until
one of them changes (`probes.cache`), as a mutant's verdict is kept until a body its
tests ran changes.

Python 3.12+ only: `sys.monitoring` reports a function's first start and, disabled
there, costs nothing after. Before 3.12 the only hooks are the trace and profile
functions, called for every call the process makes, Hypothesis's own included, which
more than doubles a probe's time: nothing is recorded, and the result is kept only
until any function of the code under test changes.

Each probe runs in a fork of its own, so what one records starts empty and ends with it.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Collection
from types import CodeType

from auditor.monitoring import free_monitoring_tool

Ran = list[tuple[str, int]]
"""Each function that started: its file's real path and its last line, which lies inside
the body (`discovery.bodies`) it belongs to, if any."""


class RanRecorder:
    """Records the functions of `source_files` (real paths) that start while it runs."""

    def __init__(self, source_files: Collection[str]) -> None:
        self._sources = frozenset(source_files)
        self._wanted: dict[str, bool] = {}
        self._started: set[CodeType] = set()
        self._tool = free_monitoring_tool()

    def start(self) -> None:
        if self._tool is None:
            return
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        monitoring.use_tool_id(self._tool, "audit probe reach")
        monitoring.register_callback(self._tool, monitoring.events.PY_START, self._on_start)
        monitoring.set_events(self._tool, monitoring.events.PY_START)

    def ran(self) -> Ran | None:
        """What started so far, sorted; None where nothing could be recorded."""
        if self._tool is None:
            return None
        return sorted({(os.path.realpath(c.co_filename), _last_line(c)) for c in self._started})

    def _on_start(self, code: CodeType, offset: int) -> object:
        """A function started; later starts of it cost no callback. Module and class
        bodies are left out: they are the code outside function bodies, which the cache
        keys every result by."""
        if code.co_flags & inspect.CO_NEWLOCALS and self._is_source(code.co_filename):
            self._started.add(code)
        return sys.monitoring.DISABLE  # type: ignore[attr-defined]

    def _is_source(self, filename: str) -> bool:
        if filename not in self._wanted:
            self._wanted[filename] = os.path.realpath(filename) in self._sources
        return self._wanted[filename]


def _last_line(code: CodeType) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return max(lines, default=code.co_firstlineno)
