"""Which lines of a file the probe inputs ran: a survivor whose every input agreed is only
likely equivalent when those inputs reached the lines the mutant changed.

Recorded once per function on the original code, while its inputs' outcomes are computed,
not in each survivor's replay: a trace slows every call it watches."""

from __future__ import annotations

import ast
import functools
import inspect
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any

from auditor.probes.outcomes import short_repr

Tracer = Callable[[FrameType, str, Any], Any]

_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def statement_lines(path: str, first: int, last: int) -> tuple[int, int]:
    """The lines of the innermost statement holding lines `first`..`last`. Some lines
    have no code of their own, so no trace sees them run (the second half of a string
    split over two lines is one constant of the line before); their statement runs."""
    span = (first, last)
    for start, end in statements_of(path):  # outer statements first: the last is innermost
        if start <= first and last <= end:
            span = (start, end)
    return span


@functools.lru_cache(maxsize=32)
def statements_of(path: str) -> tuple[tuple[int, int], ...]:
    """The first and last line of every statement of the file, outer ones first."""
    try:
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return ()
    return tuple(
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt)
    )


@functools.lru_cache(maxsize=4096)
def real_path(filename: str) -> str:
    """`os.path.realpath`, once per file name: a trace asks for every call it sees (the
    infection check's was a third of a marshmallow search child's samples)."""
    return os.path.realpath(filename)


class FileLines:
    """A trace function recording the lines of one file that run.

    A function's header (a default value, an annotation) runs when the function is
    defined, not called; it counts as reached when the function is called: `calls` keeps,
    per call, the function's first line and the first line its body ran."""

    def __init__(self, path: str) -> None:
        self.path = os.path.realpath(path)
        self.lines: set[int] = set()
        self.calls: set[tuple[int, int]] = set()

    def ran(self, first: int, last: int) -> bool:
        """Whether the lines `first`..`last` ran (or, for a header, their function)."""
        if any(line in self.lines for line in range(first, last + 1)):
            return True
        return any(start <= last and first < body for start, body in self.calls)

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Tracer | None:
        code = frame.f_code
        if real_path(code.co_filename) != self.path:
            return None
        # A generator resuming sends another call event: its first line then is not the
        # first of the body, so a generator's header is never counted.
        resumable = code.co_flags & _RESUMABLE
        return self._local(None if resumable else code.co_firstlineno)

    def _local(self, start: int | None) -> Tracer:
        def trace(frame: FrameType, event: str, arg: Any) -> Tracer:
            nonlocal start
            if event == "line":
                self.lines.add(frame.f_lineno)
                if start is not None:
                    self.calls.add((start, frame.f_lineno))
                    start = None
            return trace

        return trace


@contextmanager
def watching(lines: FileLines) -> Iterator[FileLines]:
    """Trace the calls made inside the block, in this thread and the threads it starts."""
    previous, previous_threads = sys.gettrace(), threading.gettrace()
    sys.settrace(lines)
    threading.settrace(lines)
    try:
        yield lines
    finally:
        sys.settrace(previous)
        threading.settrace(previous_threads)


class States:
    """A trace function recording the state of the frames that run lines `first`..`last`
    of one file, each time they leave those lines: their locals, and `self`'s attributes.

    Comparing the records of the original and of a mutant on one input says whether the
    mutant changed anything where it is (it "infected" the state); a mutant that never
    does on an input cannot show there, whatever the output."""

    def __init__(self, path: str, first: int, last: int) -> None:
        self.path = os.path.realpath(path)
        self.first, self.last = first, last
        self.records: list[tuple[tuple[str, str], ...]] = []
        self._spans: dict[CodeType, tuple[int, int]] = {}

    def _spans_lines(self, code: CodeType) -> bool:
        if code not in self._spans:
            lines = [line for _, _, line in code.co_lines() if line is not None]
            in_file = real_path(code.co_filename) == self.path
            self._spans[code] = (code.co_firstlineno, max(lines)) if lines and in_file else (0, 0)
        start, end = self._spans[code]
        return start <= self.first and self.last <= end

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Tracer | None:
        if not self._spans_lines(frame.f_code):
            return None
        header = not frame.f_code.co_flags & _RESUMABLE
        inside = False

        def trace(frame: FrameType, event: str, arg: Any) -> Tracer:
            nonlocal header, inside
            if event == "line":
                line = frame.f_lineno
                if header and self.first < line:  # a default or annotation took effect
                    self._record(frame)
                header = False
                if self.first <= line <= self.last:
                    inside = True
                elif inside:  # where it goes next is state too: a branch taken
                    self._record(frame, ("<next line>", str(line)))
                    inside = False
            elif event == "return" and inside:
                self._record(frame, ("<returns>", short_repr(arg, 200)))
                inside = False
            return trace

        return trace

    def _record(self, frame: FrameType, *extra: tuple[str, str]) -> None:
        state = [(name, short_repr(value, 200)) for name, value in frame.f_locals.items()]
        owner = frame.f_locals.get("self")
        if hasattr(owner, "__dict__"):
            state.append(("<self>", short_repr(vars(owner), 400)))
        self.records.append(tuple(sorted(state)) + extra)
