"""Compile mutated sources and compare code objects (trivial compiler equivalence)."""

from __future__ import annotations

from types import CodeType
from typing import Any


def compile_module(source: str, filename: str) -> CodeType:
    """Raises SyntaxError (and ValueError for null bytes) like the import system would."""
    return compile(source, filename, "exec", dont_inherit=True)


def find_function(module_code: CodeType, qualname: str, def_line: int) -> CodeType | None:
    """The code object of `qualname` in a compiled module.

    Names may repeat (a property's getter and setter): among same-named code objects,
    the one starting at or just before the `def` line (decorators come first) wins."""
    scope = module_code
    parts = qualname.split(".")
    for depth, part in enumerate(parts):
        candidates = [
            const
            for const in scope.co_consts
            if isinstance(const, CodeType) and const.co_name == part
        ]
        if depth == len(parts) - 1:
            candidates = [c for c in candidates if c.co_firstlineno <= def_line]
            candidates.sort(key=lambda c: c.co_firstlineno)
        if not candidates:
            return None
        scope = candidates[-1] if depth == len(parts) - 1 else candidates[0]
    return scope


def _stable_repr(const: object) -> str:
    """repr, with sets in a fixed order: a frozenset constant (`x in {"a", "b"}`) prints
    in hash order, which changes with every process and would change cache keys."""
    if isinstance(const, frozenset):
        return "frozenset({" + ", ".join(sorted(_stable_repr(item) for item in const)) + "})"
    if isinstance(const, tuple):
        return "(" + ", ".join(_stable_repr(item) for item in const) + ",)"
    return repr(const)


def fingerprint(code: CodeType) -> tuple[Any, ...]:
    """What the interpreter executes, without line and column tables."""
    consts = tuple(
        fingerprint(const)
        if isinstance(const, CodeType)
        else (type(const).__name__, _stable_repr(const))
        for const in code.co_consts
    )
    return (
        code.co_code,
        consts,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_flags,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
    )
