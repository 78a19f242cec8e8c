"""Exception handlers: `except X:` -> a handler that never matches; drop `match` cases."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite, code


def never_matching_handler(node: cst.ExceptHandler) -> Iterable[Rewrite]:
    """`except ()` is a handler for an empty tuple of types: it catches nothing."""
    if node.type is None:
        return  # a bare `except:` has no type to replace
    yield node.type, "()", f"except {code(node.type).strip()} -> except ()"


def drop_case(node: cst.Match) -> Iterable[Rewrite]:
    """One mutant per case: a `False` guard, so the case never matches."""
    if len(node.cases) < 2:
        return
    for case in node.cases:
        shown = code(case.pattern).strip()
        if case.guard is None:
            yield case.pattern, f"{shown} if False", f"case {shown} never matches"
        else:
            yield case.guard, cst.Name("False"), f"case {shown} never matches"


OPERATORS = [
    Operator("exceptions.handler", "exceptions", cst.ExceptHandler, never_matching_handler),
    Operator("exceptions.match_case", "exceptions", cst.Match, drop_case, "operator_match"),
]
