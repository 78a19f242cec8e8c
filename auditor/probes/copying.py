"""A copy of a probe's input for each call, which the call may change and no other call
sees.

The copy goes through pickle: a round trip in C, where `copy.deepcopy` is Python and, in
a probe process, raises a `builtins.id` event for every object it copies, which the
guard's audit hook sees (docs/performance.md has the figures). What `deepcopy` keeps as
it is (classes, functions, enum members) the copy keeps too: pickle would look a class
up by its name and an enum member by its value, which differ where a mutant ran its
module again, and it refuses a lambda, which Hypothesis draws for every callable
parameter. An input pickle refuses all the same is copied by `deepcopy`, or not at all
when that fails too (and then a class of the code that neither took is not tried
again).
"""

from __future__ import annotations

import contextlib
import copy
import enum
import io
import pickle
import types
import weakref
from typing import Any

_KEPT_TYPES = (
    enum.Enum,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.CodeType,
    types.ModuleType,
    weakref.ref,
    property,
)
"""What the copy shares with the input, as `copy.deepcopy` does: enum members (pickle
would look each up again by its value, which a mutated module may have changed),
classes, functions, code, weak references, properties; and modules."""

_IMMUTABLE = (int, float, complex, str, bytes, bool, tuple, frozenset, type(None))


def can_change(value: object) -> bool:
    """Whether a call may change the value (a tuple is taken at its word)."""
    return not isinstance(value, _IMMUTABLE)


_REFUSED: set[type] = set()
"""Classes an instance of which neither pickle nor `deepcopy` copied, in this process: an
input holding one at the top is passed on as it is at once. A class whose `__getattr__`
makes what it is asked for (tinydb's `Query`) fails only a thousand calls deep, and
would again on every input of every call."""


def fresh(example: dict[str, Any]) -> dict[str, Any]:
    """A copy of the arguments `example`, or `example` itself when no value in it can
    change, or nothing copies it."""
    values = example.values()
    if not any(map(can_change, values)) or any(type(v) in _REFUSED for v in values):
        return example
    copied = _copied(example)
    if copied is None:
        _REFUSED.update(type(v) for v in values if _is_class_instance(v) and _copied(v) is None)
        return example
    return copied


def _copied(value: Any) -> Any | None:
    with contextlib.suppress(Exception):
        return _through_pickle(value)
    with contextlib.suppress(Exception):
        return copy.deepcopy(value)
    return None


def _is_class_instance(value: object) -> bool:
    """Of a class of the code (not a builtin container, whose next value may copy)."""
    return type(value).__module__ != "builtins"


def _through_pickle(value: Any) -> Any:
    kept: list[Any] = []
    buffer = io.BytesIO()
    _Pickler(buffer, kept).dump(value)
    buffer.seek(0)
    return _Unpickler(buffer, kept).load()


def _kept(index: int) -> Any:
    """Stands, in the pickle, for the object at `index` of the objects kept; only
    `_Unpickler` resolves it."""
    raise RuntimeError("a kept object outside its copy")


class _Pickler(pickle.Pickler):
    def __init__(self, buffer: io.BytesIO, kept: list[Any]) -> None:
        super().__init__(buffer, pickle.HIGHEST_PROTOCOL)
        self._kept = kept

    def reducer_override(self, obj: Any) -> Any:
        """Called for every object but the plain data pickle handles in C."""
        if obj is _kept or not isinstance(obj, _KEPT_TYPES):
            return NotImplemented
        self._kept.append(obj)
        return _kept, (len(self._kept) - 1,)


class _Unpickler(pickle.Unpickler):
    def __init__(self, buffer: io.BytesIO, kept: list[Any]) -> None:
        super().__init__(buffer)
        self._kept = kept

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == (__name__, _kept.__name__):
            return self._kept.__getitem__
        return super().find_class(module, name)
