"""Argument values the suite passes to the code under test, recorded during the baseline.

A `sys.setprofile` hook sees every Python call; for functions defined under the source
folders it keeps a few distinct argument tuples, each value as its `repr` (cut short)
and its type's dotted name. The probes turn them into explicit examples and strategies,
and compare them with the edge-value catalogue to see which edge classes were tried.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from types import CodeType, FrameType
from typing import Any

from coverage.files import GlobMatcher

from auditor.baseline.protocol import Observed
from auditor.monitoring import free_monitoring_tool

MAX_CALLS = 12
"""Distinct argument tuples kept per function."""
MAX_DESCRIBED = 2 * MAX_CALLS
"""Calls of one function described per test phase: describing a call builds each
argument's recipe (a user `__repr__` included), and a test that calls a method of a large
object thousands of times with the same arguments would pay it on every call."""
MAX_RECIPE = 3000
MAX_PROFILED_CALLS = 200_000
"""Python calls per test phase after which the `sys.setprofile` hook stops recording: a
test of a few hundred thousand calls runs about twice as slowly under it (every C call
is a Python call of the hook too)."""
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")
SCRATCH = "/nonexistent/audit-scratch"
"""How observed values write the test process's own folder (`ChildSpec.scratch`): a
path under it, a test's `tmp_path` say, names another folder each run, and a probe's
inputs, hence its results and where it is kept, would change with it. The folder is
gone by the time a probe runs, as this one never exists."""


def stable_repr(text: str) -> str:
    """A repr without memory addresses (`<Chart object at 0x7f..>` -> `<Chart object>`):
    they change from run to run, and the report must not."""
    return _ADDRESS.sub(">", text)


def type_name(value: object) -> str:
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def _path(kind: type) -> str:
    return f"{kind.__module__}:{kind.__qualname__}"


class _TooLong(ValueError):
    """A value whose recipe would be longer than `MAX_RECIPE`."""


def _never(kind: type) -> bool:
    return False


def recipe(value: object, depth: int = 0, own_repr: Callable[[type], bool] = _never) -> str:
    """Python source that rebuilds the value in the probe process: its repr where that
    rebuilds it, else calls of three helpers the probes define (`__audit_call__` for
    dataclasses and Decimal, `__audit_member__` for enum members, `__audit_new__` for
    objects with no repr of their own, or one of the code under test (`own_repr`): the
    class and its attributes). The code under test's `__repr__` is never run here: it
    may change what it describes (a cache whose repr expires entries, a clock that
    ticks), and the test would then check another program than the one it tests."""
    if depth > 8:
        raise ValueError("nested too deeply")
    if isinstance(value, type(os.environ)):  # its API keys and tokens must not reach a report
        raise ValueError("the process environment")

    def inner(item: object) -> str:
        return recipe(item, depth + 1, own_repr)

    kind = type(value)
    if value is None or kind in (bool, int, float, str, bytes, complex):
        return repr(value)
    if kind in (list, tuple):
        items = _bounded(inner(item) for item in value)  # type: ignore[attr-defined]
        if kind is tuple:
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        return f"[{', '.join(items)}]"
    if kind in (set, frozenset):
        items = sorted(_bounded(inner(item) for item in value))  # type: ignore[attr-defined]
        listed = f"{{{', '.join(items)}}}" if items else ""
        return f"{kind.__name__}({listed})"
    if kind is dict:
        pairs = _bounded(f"{inner(k)}: {inner(v)}" for k, v in value.items())  # type: ignore[attr-defined]
        return f"{{{', '.join(pairs)}}}"
    if isinstance(value, enum.Enum):
        return f"__audit_member__({_path(kind)!r}, {value.name!r})"
    if kind.__module__ == "datetime":  # repr "datetime.date(2024, 1, 1)"
        return f"__audit_call__({_path(kind)!r}, {repr(value).split('(', 1)[1]}"
    if kind.__module__ == "decimal":
        return f"__audit_call__({_path(kind)!r}, {str(value)!r})"
    if dataclasses.is_dataclass(value) and all(f.init for f in dataclasses.fields(value)):
        arguments = ", ".join(
            f"{f.name}={inner(getattr(value, f.name))}" for f in dataclasses.fields(value)
        )
        return f"__audit_call__({_path(kind)!r}, {arguments})"
    own = own_repr(kind)
    if own or kind.__repr__ is object.__repr__:
        attributes = _attributes(value)
        if attributes is not None:
            return f"__audit_new__({_path(kind)!r}, {inner(attributes)})"
        if own:
            raise ValueError("no attributes to rebuild it from")
    return repr(value)


def _bounded(parts: Iterator[str]) -> list[str]:
    """The parts of a container's recipe, given up once they are too long to keep: a
    large object's attributes are not all described only to be dropped."""
    kept: list[str] = []
    length = 0
    for part in parts:
        length += len(part) + 2
        if length > MAX_RECIPE:
            raise _TooLong("too long")
        kept.append(part)
    return kept


def _attributes(value: object) -> dict[str, Any] | None:
    """The instance's own attributes, read without running any of its code (no
    `__getattribute__` or `__getattr__` of its class); None if it keeps none."""
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    return attributes if type(attributes) is dict else None


def describe(value: object, own_repr: Callable[[type], bool] = _never) -> list[str]:
    """[recipe, type name]; a value that cannot be described, or only at length, gets a
    marker instead (it is then no example)."""
    try:
        text = recipe(value, own_repr=own_repr)
    except _TooLong:
        text = "<too long>"
    except Exception:
        text = "<unrepresentable>"
    if len(text) > MAX_RECIPE:
        text = "<too long>"
    return [stable_repr(text), type_name(value)]


class CallRecorder:
    """Records calls into the sources while a test phase runs (`start`/`stop`).

    On Python 3.12+ through `sys.monitoring`: a function's start is reported only for
    code under the sources (any other code is disabled the first time it starts), so
    the suite runs at nearly full speed. Before 3.12 through a `sys.setprofile` hook,
    a Python call for every call the process makes, C calls included: a phase stops
    recording after `MAX_PROFILED_CALLS` calls, so a Hypothesis test that makes
    millions of them is not slowed past its timeout."""

    def __init__(self, source_dirs: list[str], omit: Sequence[str] = (), scratch: str = "") -> None:
        """`scratch`: the test process's own folder (`SCRATCH`), as given and resolved,
        the longer first."""
        folders = {scratch, os.path.realpath(scratch)} if scratch else set()
        self._scratch = sorted(folders, key=len, reverse=True)
        paths = {*source_dirs, *(os.path.realpath(d) for d in source_dirs)}
        # A source is a folder (a package, a src/ tree) or one module file (`calc.py`).
        self._modules = frozenset(path for path in paths if os.path.isfile(path))
        self._roots = tuple(sorted(path.rstrip(os.sep) + os.sep for path in paths - self._modules))
        self._cwd = os.getcwd().rstrip(os.sep) + os.sep
        self._omit = GlobMatcher(omit, "omit")  # coverage's rule, so both skip the same files
        self._wanted: dict[str, str | None] = {}
        self.calls: dict[tuple[str, str], list[dict[str, list[str]]]] = {}
        self._seen: set[tuple[CodeType, str]] = set()
        self._described: dict[CodeType, int] = {}
        self.active = False
        self._calls_left = 0
        self._tool = free_monitoring_tool()
        if self._tool is not None:
            monitoring = sys.monitoring  # type: ignore[attr-defined]
            monitoring.use_tool_id(self._tool, "audit call recorder")
            monitoring.register_callback(self._tool, monitoring.events.PY_START, self._on_start)

    def _source_file(self, filename: str) -> str | None:
        """The absolute path of a source module or of a file under the source folders,
        else None; by the text of the path alone: the hook runs inside tests, and a test
        that patches `os.path.join` or `os.path.isabs` must see only its own calls (paths
        are resolved once the tests are over, in `observations`)."""
        if filename not in self._wanted:
            absolute = filename if filename.startswith(os.sep) else self._cwd + filename
            inside = absolute in self._modules or absolute.startswith(self._roots)
            wanted = inside and not self._omit.match(absolute)
            self._wanted[filename] = absolute if wanted else None
        return self._wanted[filename]

    def _own_repr(self, kind: type) -> bool:
        """Whether the class's `__repr__` is code under test (see `recipe`)."""
        code = getattr(kind.__repr__, "__code__", None)
        return isinstance(code, CodeType) and self._source_file(code.co_filename) is not None

    def _wanted_file(self, code: CodeType) -> str | None:
        if code.co_name.startswith("<"):
            return None
        return self._source_file(code.co_filename)

    def _on_start(self, code: CodeType, offset: int) -> object:
        """`sys.monitoring`'s PY_START callback; the started frame is the caller's."""
        filename = self._wanted_file(code)
        if filename is None:
            return sys.monitoring.DISABLE  # type: ignore[attr-defined]
        if self.active and self._record(sys._getframe(1), filename):
            # Nothing more to keep: this function's later calls cost no callback.
            return sys.monitoring.DISABLE  # type: ignore[attr-defined]
        return None

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        """The `sys.setprofile` hook (before Python 3.12)."""
        if event != "call" or not self.active:
            return
        self._calls_left -= 1
        if self._calls_left < 0:
            sys.setprofile(None)
            return
        filename = self._wanted_file(frame.f_code)
        if filename is not None:
            self._record(frame, filename)

    def _record(self, frame: FrameType, filename: str) -> bool:
        """Keep the call if it is new; whether its function has all the calls it keeps."""
        code = frame.f_code
        qualname = getattr(code, "co_qualname", code.co_name)  # 3.10 has no co_qualname
        kept = self.calls.setdefault((filename, qualname), [])
        described = self._described.get(code, 0)
        if len(kept) >= MAX_CALLS or described >= MAX_DESCRIBED:
            return len(kept) >= MAX_CALLS
        self._described[code] = described + 1
        self.active = False  # what describing runs must not be recorded itself
        try:
            count = code.co_argcount + code.co_kwonlyargcount
            count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
            local = frame.f_locals
            names = [name for name in code.co_varnames[:count] if name in local]
            call = {name: self._description(local[name]) for name in names}
            signature = (code, repr(sorted(call.items())))
            if signature not in self._seen:
                self._seen.add(signature)
                kept.append(call)
        finally:
            self.active = True
        return len(kept) >= MAX_CALLS

    def _description(self, value: object) -> list[str]:
        text, kind = describe(value, self._own_repr)
        for folder in self._scratch:
            text = text.replace(folder, SCRATCH)
        return [text, kind]

    def start(self) -> None:
        """Record from now on (a test phase); off while pytest collects, reports and
        moves between tests."""
        self._described.clear()
        self.active = True
        if self._tool is not None:
            sys.monitoring.set_events(self._tool, sys.monitoring.events.PY_START)  # type: ignore[attr-defined]
        else:
            self._calls_left = MAX_PROFILED_CALLS
            sys.setprofile(self)

    def stop(self) -> None:
        if self._tool is not None:
            sys.monitoring.set_events(self._tool, 0)  # type: ignore[attr-defined]
        else:
            sys.setprofile(None)
        self.active = False

    def close(self) -> None:
        """Give the `sys.monitoring` tool id back."""
        self.stop()
        if self._tool is not None:
            sys.monitoring.free_tool_id(self._tool)  # type: ignore[attr-defined]
            self._tool = None

    def observations(self) -> list[Observed]:
        merged: dict[tuple[str, str], list[dict[str, list[str]]]] = {}
        for (filename, qualname), calls in self.calls.items():
            kept = merged.setdefault((os.path.realpath(filename), qualname), [])
            kept.extend(call for call in calls if call not in kept)
        return [
            Observed(file=file, qualname=qualname, calls=calls[:MAX_CALLS])
            for (file, qualname), calls in sorted(merged.items())
        ]
