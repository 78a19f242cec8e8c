"""The operator families, in the order mutants are generated and run."""

from __future__ import annotations

from collections.abc import Iterable

from mutators import (
    arithmetic,
    augmented,
    boolean,
    calls,
    comparison,
    constants,
    exceptions,
    extreme,
    returns,
    statements,
    subscripts,
)
from mutators.base import Operator

FAMILIES: dict[str, list[Operator]] = {
    "extreme": extreme.OPERATORS,
    "arithmetic": arithmetic.OPERATORS,
    "comparison": comparison.OPERATORS,
    "boolean": boolean.OPERATORS,
    "constants": constants.OPERATORS,
    "returns": returns.OPERATORS,
    "statements": statements.OPERATORS,
    "calls": calls.OPERATORS,
    "subscripts": subscripts.OPERATORS,
    "augmented": augmented.OPERATORS,
    "exceptions": exceptions.OPERATORS,
}


class UnknownFamily(ValueError):
    pass


def operators(enabled: Iterable[str] | None = None, disabled: Iterable[str] = ()) -> list[Operator]:
    """Operators of the enabled families (all when None), minus the disabled ones."""
    chosen = list(FAMILIES) if enabled is None else list(enabled)
    unknown = [name for name in [*chosen, *disabled] if name not in FAMILIES]
    if unknown:
        raise UnknownFamily(f"unknown mutator family: {unknown[0]} (known: {', '.join(FAMILIES)})")
    return [op for family in chosen if family not in set(disabled) for op in FAMILIES[family]]
