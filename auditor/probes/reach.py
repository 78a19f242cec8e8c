"""Whether a probe's calls ran the mutated code: a survivor whose every input agreed is
only likely equivalent when those inputs reached the lines the mutant changed."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

Tracer = Callable[[FrameType, str, Any], Any]


class Reach:
    """A trace function that watches one file for the lines `first`..`last` running.

    A line of a function's header (a default value, an annotation) counts as run when the
    function is called: its first line event comes after it. The trace stops watching
    once the lines ran, so a mutant that is reached early costs little."""

    def __init__(self, path: str, first: int, last: int) -> None:
        self.path = os.path.realpath(path)
        self.first, self.last = first, last
        self.reached = False
        self._paths: dict[str, str] = {}
        self._resumed: set[int] = set()

    def _in_file(self, filename: str) -> bool:
        if filename not in self._paths:
            self._paths[filename] = os.path.realpath(filename)
        return self._paths[filename] == self.path

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Tracer | None:
        code = frame.f_code
        if self.reached or code.co_firstlineno > self.last or not self._in_file(code.co_filename):
            return None
        # A generator resuming sends another call event for the same frame: its first
        # line then is not the first of the body.
        fresh = id(frame) not in self._resumed
        self._resumed.add(id(frame))
        return self._local(code.co_firstlineno if fresh else None)

    def _local(self, start: int | None) -> Tracer:
        header = start

        def trace(frame: FrameType, event: str, arg: Any) -> Tracer | None:
            nonlocal header
            if event != "line" or self.reached:
                return None if self.reached else trace
            line = frame.f_lineno
            in_header = header is not None and header <= self.last and self.first < line
            self.reached = in_header or self.first <= line <= self.last
            header = None
            return trace

        return trace


@contextmanager
def watching(reach: Reach) -> Iterator[Reach]:
    """Trace the calls made inside the block, in this thread."""
    previous = sys.gettrace()
    sys.settrace(reach)
    try:
        yield reach
    finally:
        sys.settrace(previous)
