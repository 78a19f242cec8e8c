"""What one call of a function under test did, and whether two calls behaved the same as
far as a test could tell (`==`, or the attributes of objects that compare by identity)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from auditor.baseline.observe import stable_repr

CRASH_TYPES: tuple[type[BaseException], ...] = (
    ArithmeticError,
    LookupError,
    AttributeError,
    TypeError,
    RecursionError,
    NameError,
    AssertionError,
)
"""Exceptions that mean the code met an input it does not handle, unless raised on
purpose (a `raise` statement in the project, or the docstring's Raises)."""


DRAINED_ITEMS = 10
"""Items taken from an iterator a call returns, as a test listing them would see them:
enough to tell most changes apart, and each item is work the call does."""


@dataclass(frozen=True)
class Drained:
    """The items an iterator a call returned yields (iterators inside it drained too, one
    level down). Two generators are equal only as the same object: compared as returned,
    every mutant of a generator would differ from the original on every input."""

    kind: str
    items: tuple[Any, ...]
    more: bool
    """It yields more than `items`."""

    def __repr__(self) -> str:
        shown = ", ".join(short_repr(item, 60) for item in self.items)
        more = ", ..." if self.more else ""
        return f"<{self.kind} yielding [{shown}{more}]>"


def drained(value: Any, depth: int = 0) -> Any:
    """`value`, or, for an iterator, what it yields; run inside the call (its timeout
    and exceptions are the call's: a generator does its work as it is iterated)."""
    if depth > 1:
        return value
    if type(value) is tuple and depth:  # groupby's (key, group)
        return tuple(drained(item, depth) for item in value)
    if not isinstance(value, Iterator):
        return value
    items: list[Any] = []
    for item in value:  # an item that is an iterator itself is drained before the next
        if len(items) == DRAINED_ITEMS:
            return Drained(type(value).__name__, tuple(items), more=True)
        items.append(drained(item, depth + 1))
    return Drained(type(value).__name__, tuple(items), more=False)


@dataclass
class Outcome:
    kind: str
    """`returned`, `raised`, `hung`, or `skipped` (not called: the function hung
    `MAX_HANGS` times already)."""
    value: Any = None
    error: BaseException | None = None
    where: tuple[str, int] = ("", 0)
    """The file and line the exception came from (the last frame in the project)."""
    on_purpose: bool = False
    inside: bool = True
    """The exception came from inside the function (not from binding the arguments)."""
    after: dict[str, Any] = field(default_factory=dict)
    """Mutable arguments (and `self`) after the call."""
    lines: frozenset[int] = frozenset()

    @property
    def exhausted(self) -> bool:
        """The call ran out of time or memory, or was not made for hanging before."""
        return self.kind in ("hung", "skipped") or isinstance(self.error, MemoryError)

    @property
    def crash(self) -> bool:
        if self.kind == "hung":
            return True
        return (
            self.kind == "raised"
            and self.inside
            and not self.on_purpose
            and isinstance(self.error, CRASH_TYPES)
        )

    def describe(
        self, state: set[str] | frozenset[str] = frozenset(), attributes: bool = False
    ) -> str:
        """What happened; `state`: arguments whose state after the call to show too;
        `attributes`: the returned object's attributes too (where its repr hides them)."""
        shown = "".join(
            f"; {name} is then {short_repr(self.after.get(name), 200)}" for name in sorted(state)
        )
        if attributes and self.kind == "returned" and hasattr(self.value, "__dict__"):
            shown += f"; its attributes are {short_repr(vars(self.value), 200)}"
        return self._result() + shown

    def _result(self) -> str:
        if self.kind == "skipped":
            return "not called (the function hung too often)"
        if self.kind == "hung":
            return "did not return (timed out)"
        if self.kind == "raised":
            assert self.error is not None
            text = f"raises {type(self.error).__name__}"
            # Its arguments' reprs may hold addresses (`<function f at 0x7f..>`).
            message = stable_repr(str(self.error).splitlines()[0]) if str(self.error) else ""
            return f"{text}: {message}"[:300] if message else text
        return f"returns {short_repr(self.value)}"

    def signature(self) -> tuple[str, str, tuple[str, int]]:
        name = type(self.error).__name__ if self.error is not None else ""
        return (self.kind, name, self.where)


def short_repr(value: object, limit: int = 300) -> str:
    try:
        text = _plain_repr(value)
    except Exception:
        text = f"<{type(value).__name__} with a failing repr>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def by_identity(value: object, method: str) -> bool:
    """The value's class keeps object's `__eq__` or `__repr__`: it says nothing about state."""
    return getattr(type(value), method) is getattr(object, method) and hasattr(value, "__dict__")


def _plain_repr(value: object, depth: int = 0) -> str:
    """repr, with an object's attributes instead of its address when its class has no
    repr of its own (`<Chart _accounts={...}>`)."""
    if depth < 4 and by_identity(value, "__repr__"):
        fields = " ".join(
            f"{k}={_plain_repr(v, depth + 1)}" for k, v in sorted(vars(value).items())
        )
        return f"<{type(value).__name__} {fields}>" if fields else f"<{type(value).__name__}>"
    if (
        depth < 4
        and isinstance(value, (list, tuple))
        and any(by_identity(item, "__repr__") for item in value)
    ):
        inner = ", ".join(_plain_repr(item, depth + 1) for item in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return stable_repr(repr(value))


def same(first: Outcome, second: Outcome) -> bool:
    """Whether a test could tell the two apart by `==` (repr when `==` cannot say). A call
    not made (`skipped`, after the function hung too often) tells nothing apart."""
    if "skipped" in (first.kind, second.kind):
        return True
    if first.kind != second.kind:
        return False
    if first.kind == "raised":
        return type(first.error) is type(second.error) and str(first.error) == str(second.error)
    if first.kind == "hung":
        return True
    return equal(first.value, second.value) and all(
        equal(first.after.get(name), second.after.get(name))
        for name in set(first.after) | set(second.after)
    )


def equal(first: object, second: object, depth: int = 0) -> bool:
    """`==`, except for objects whose class compares by identity, which are equal when
    their attributes are (two fresh `Chart()`s are the same behaviour); repr when `==`
    cannot say, or when a project class's `==` says equal."""
    if type(first) is type(second) and depth < 4:
        if isinstance(first, functools.partial):  # what a decorator with options returns
            theirs: functools.partial[Any] = second  # type: ignore[assignment]
            return (
                equal(first.func, theirs.func, depth + 1)
                and equal(first.args, theirs.args, depth + 1)
                and equal(first.keywords, theirs.keywords, depth + 1)
            )
        if is_dataclass(first) and not isinstance(first, type):
            return all(
                equal(getattr(first, f.name), getattr(second, f.name), depth + 1)
                for f in fields(first)
                if f.compare
            )
        if by_identity(first, "__eq__"):
            mine, theirs = _state(first), _state(second)
            return mine.keys() == theirs.keys() and all(
                equal(mine[key], theirs[key], depth + 1) for key in mine
            )
        if isinstance(first, (list, tuple, dict)) and _equal_items(first, second):
            return True
        if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
            return len(first) == len(second) and all(
                equal(a, b, depth + 1) for a, b in zip(first, second, strict=True)
            )
        if isinstance(first, dict) and isinstance(second, dict) and first.keys() == second.keys():
            return all(equal(first[k], second[k], depth + 1) for k in first)
    if isinstance(first, Iterator) and type(first) is type(second):
        return True  # left undrained (too deep): a test cannot tell them apart either
    if type(first) is object and type(second) is object:
        return True  # sentinels: each call gets its own copy of the input that held it
    try:
        result = first == second
        if isinstance(result, bool):
            if result and depth == 0 and _eq_hides_state(first):
                return short_repr(first) == short_repr(second)
            return result or (short_repr(first) == short_repr(second) and first != first)
    except Exception:
        pass
    return short_repr(first) == short_repr(second)


def _state(value: object) -> dict[str, Any]:
    """An object's attributes; an exception's `args` too, where its message lives
    (`super().__init__(f"{sku}: wanted ...")` sets no attribute)."""
    state = dict(vars(value))
    if isinstance(value, BaseException):
        state["args"] = value.args
    return state


def _equal_items(first: object, second: object) -> bool:
    """Containers whose items `==` finds equal, compared by the interpreter at its own
    speed: each item it finds equal the walk of `equal` would find equal too (that walk
    only adds equalities, of objects by their state). jmespath's `Parser(lookahead=n)`
    holds a list of n items; compared one by one in Python, two such values of a few
    million took seconds, and every survivor searched through it took the search's
    whole budget."""
    try:
        return (first == second) is True
    except Exception:
        return False


def _eq_hides_state(value: object) -> bool:
    """A project class whose `==` may ignore what its repr shows (semver's `Version`
    compares without the build part): a returned value is equal only when the reprs
    agree too. Not deeper: reprs of large object graphs cost more than the search."""
    kind = type(value)
    return kind.__module__ != "builtins" and kind.__repr__ is not object.__repr__
