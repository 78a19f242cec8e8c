"""Argument values the suite passes to the code under test, recorded during the baseline.

A `sys.setprofile` hook sees every Python call; for functions defined under the source
folders it keeps a few distinct argument tuples, each value as its `repr` (cut short)
and its type's dotted name. The probes turn them into explicit examples and strategies,
and compare them with the edge-value catalogue to see which edge classes were tried.
"""

from __future__ import annotations

import os
import re
import sys
from types import CodeType, FrameType
from typing import Any

MAX_CALLS = 12
"""Distinct argument tuples kept per function."""
MAX_REPR = 300
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


def stable_repr(text: str) -> str:
    """A repr without memory addresses (`<Chart object at 0x7f..>` -> `<Chart object>`):
    they change from run to run, and the report must not."""
    return _ADDRESS.sub(">", text)


def type_name(value: object) -> str:
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def describe(value: object) -> list[str]:
    """[repr, type name]; a repr that raises or runs long is replaced by a marker."""
    try:
        text = repr(value)
    except Exception:
        text = "<unrepresentable>"
    if len(text) > MAX_REPR:
        text = "<too long>"
    return [stable_repr(text), type_name(value)]


class CallRecorder:
    """The profile hook. Cheap on the common path: one dict lookup per call event."""

    def __init__(self, source_dirs: list[str]) -> None:
        self._roots = tuple(os.path.realpath(d).rstrip(os.sep) + os.sep for d in source_dirs)
        self._wanted: dict[str, bool] = {}
        self.calls: dict[tuple[str, str], list[dict[str, list[str]]]] = {}
        self._seen: set[tuple[CodeType, str]] = set()
        self.active = False

    def _in_sources(self, filename: str) -> bool:
        wanted = self._wanted.get(filename)
        if wanted is None:
            wanted = os.path.realpath(filename).startswith(self._roots)
            self._wanted[filename] = wanted
        return wanted

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not self.active:
            return
        code = frame.f_code
        if not self._in_sources(code.co_filename) or code.co_name.startswith("<"):
            return
        qualname = getattr(code, "co_qualname", code.co_name)  # 3.10 has no co_qualname
        key = (os.path.realpath(code.co_filename), qualname)
        kept = self.calls.setdefault(key, [])
        if len(kept) >= MAX_CALLS:
            return
        self.active = False  # user __repr__ calls must not be recorded themselves
        try:
            count = code.co_argcount + code.co_kwonlyargcount
            count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
            local = frame.f_locals
            names = [name for name in code.co_varnames[:count] if name in local]
            call = {name: describe(local[name]) for name in names}
            signature = (code, repr(sorted(call.items())))
            if signature not in self._seen:
                self._seen.add(signature)
                kept.append(call)
        finally:
            self.active = True

    def install(self) -> None:
        sys.setprofile(self)

    def observations(self) -> list[dict[str, Any]]:
        return [
            {"file": file, "qualname": qualname, "calls": calls}
            for (file, qualname), calls in sorted(self.calls.items())
        ]
