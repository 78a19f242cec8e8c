"""Apply a mutant inside a forked child: swap a function's code object, or re-execute
the mutated module in place. Runs only in children that are thrown away afterwards."""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from types import CodeType, FunctionType, ModuleType

_MISSING = object()


class SwapError(Exception):
    """The mutant could not be applied; the child reports RuntimeError."""


def live_functions(filenames: set[str]) -> dict[tuple[str, int, str], list[FunctionType]]:
    """Every function object defined in the given files, by (file, first line, name).

    Functions re-exported, decorated (`functools.wraps` keeps the original) or stored in
    registries are all the same objects, so one swap reaches every caller."""
    index: dict[tuple[str, int, str], list[FunctionType]] = {}
    resolved: dict[str, str] = {}  # thousands of functions, far fewer files
    for obj in gc.get_objects():
        if isinstance(obj, FunctionType):
            code = obj.__code__
            filename = resolved.get(code.co_filename)
            if filename is None:
                filename = resolved[code.co_filename] = os.path.realpath(code.co_filename)
            if filename in filenames:
                key = (filename, code.co_firstlineno, code.co_name)
                index.setdefault(key, []).append(obj)
    return index


def module_for(path: str, module_name: str) -> ModuleType:
    """The live module of the file at `path` (a realpath), importing it if needed."""
    named = sys.modules.get(module_name)
    file = getattr(named, "__file__", None)
    if named is not None and file and os.path.realpath(file) == path:
        return named  # the usual case: one realpath, not one per loaded module
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and os.path.realpath(file) == path:
            return module
    try:
        return importlib.import_module(module_name)
    except Exception as exc:
        raise SwapError(f"cannot import {module_name}: {type(exc).__name__}: {exc}") from None


def _function_like(old: FunctionType, code: CodeType) -> FunctionType:
    """A new function object for `code`, with `old`'s globals, defaults and the closure
    cells `code` needs, taken by name from `old` (a mutant that deletes the last use of
    a closure variable, such as `super()`, needs fewer cells)."""
    cells = dict(zip(old.__code__.co_freevars, old.__closure__ or (), strict=False))
    missing = [name for name in code.co_freevars if name not in cells]
    if missing:
        raise SwapError(f"the mutant needs closure variables the original lacks: {missing}")
    closure = tuple(cells[name] for name in code.co_freevars) or None
    new = FunctionType(code, old.__globals__, old.__name__, old.__defaults__, closure)
    new.__kwdefaults__ = old.__kwdefaults__
    new.__qualname__ = old.__qualname__
    new.__module__ = old.__module__
    new.__doc__ = old.__doc__
    new.__annotations__ = old.__annotations__
    new.__dict__.update(old.__dict__)
    return new


def rebind(old: object, new: object) -> None:
    """Point every namespace that holds `old` (modules, classes, registries) at `new`."""
    for referrer in gc.get_referrers(old):
        if not isinstance(referrer, dict):
            continue
        keys = [key for key, value in list(referrer.items()) if value is old]
        owners = [
            owner
            for owner in gc.get_referrers(referrer)
            if isinstance(owner, type) and all(vars(owner).get(key) is old for key in keys)
        ]
        for key in keys:
            if owners:
                for owner in owners:
                    setattr(owner, key, new)
            else:
                referrer[key] = new


def swap_function(functions: list[FunctionType], new_code: CodeType) -> None:
    if not functions:
        raise SwapError("the mutated function has no live function object")
    for function in functions:
        if function.__code__.co_freevars == new_code.co_freevars:
            function.__code__ = new_code
        else:
            rebind(function, _function_like(function, new_code))


def _adopt_function(old: FunctionType, new: FunctionType) -> None:
    """Give `old` the behaviour of `new`, keeping `old`'s identity where possible."""
    if old.__code__.co_freevars == new.__code__.co_freevars and (
        not new.__code__.co_freevars or new.__code__.co_freevars == ("__class__",)
    ):
        old.__code__ = new.__code__
        old.__defaults__ = new.__defaults__
        old.__kwdefaults__ = new.__kwdefaults__
    else:
        rebind(old, new)


def _adopt_class(old: type, new: type) -> None:
    """Carry a re-executed class body over to the class object everyone already holds."""
    for name, value in vars(new).items():
        if name in ("__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"):
            continue
        current = vars(old).get(name)
        if isinstance(current, FunctionType) and isinstance(value, FunctionType):
            if current.__code__.co_freevars == value.__code__.co_freevars and (
                value.__code__.co_freevars in ((), ("__class__",))
            ):
                _adopt_function(current, value)
            else:
                _set_class_attribute(old, name, value)
        elif isinstance(current, (staticmethod, classmethod)) and type(current) is type(value):
            _adopt_function(current.__func__, value.__func__)
        elif isinstance(current, property) and isinstance(value, property):
            for part in ("fget", "fset", "fdel"):
                mine, theirs = getattr(current, part), getattr(value, part)
                if isinstance(mine, FunctionType) and isinstance(theirs, FunctionType):
                    _adopt_function(mine, theirs)
        elif current is not value:
            _set_class_attribute(old, name, value)


def _set_class_attribute(owner: type, name: str, value: object) -> None:
    with contextlib.suppress(AttributeError, TypeError):
        setattr(owner, name, value)


def reexecute_module(module: ModuleType, codes: Sequence[CodeType]) -> None:
    """Run the mutated module's code in the live module's namespace, one code object
    (a statement, or the whole module) at a time.

    Functions and classes keep their identity (code, defaults and class attributes are
    carried over), so names imported elsewhere see the mutant; other changed values are
    rebound wherever another module imported them under the same name. Carried over
    after each code object, so the next one builds on the objects the module keeps."""
    namespace = module.__dict__
    for code in codes:
        before = dict(namespace)
        exec(code, namespace)
        _carry_over(namespace, before)


def _carry_over(namespace: dict[str, object], before: dict[str, object]) -> None:
    for name, new in list(namespace.items()):
        old = before.get(name, _MISSING)
        if old is _MISSING or old is new:
            continue
        if isinstance(old, FunctionType) and isinstance(new, FunctionType):
            _adopt_function(old, new)
            namespace[name] = old
        elif isinstance(old, type) and isinstance(new, type):
            _adopt_class(old, new)
            namespace[name] = old
        else:
            for other in list(sys.modules.values()):
                other_namespace = getattr(other, "__dict__", None)
                if other_namespace is not None and other_namespace.get(name) is old:
                    other_namespace[name] = new
