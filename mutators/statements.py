"""Statements: drop a call statement, swap `break`/`continue`, drop `raise`, `x = None`."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite


def drop_call(node: cst.Expr) -> Iterable[Rewrite]:
    if isinstance(node.value, (cst.Call, cst.Await)):
        yield node, "pass", "`{original}` removed"


def swap_loop_control(node: cst.BaseSmallStatement) -> Iterable[Rewrite]:
    if isinstance(node, cst.Break):
        yield node, "continue", "break -> continue"
        yield node, "return", "break -> return"
    elif isinstance(node, cst.Continue):
        yield node, "break", "continue -> break"


def drop_raise(node: cst.Raise) -> Iterable[Rewrite]:
    yield node, "pass", "`{original}` removed"


def assign_none(node: cst.Assign | cst.AnnAssign) -> Iterable[Rewrite]:
    value = node.value
    if value is None:
        return
    if isinstance(value, cst.Name) and value.value == "None":
        yield value, '""', '= None -> = ""'
    else:
        yield value, cst.Name("None"), "= {original} -> = None"


OPERATORS = [
    Operator("statements.call", "statements", cst.Expr, drop_call),
    Operator(
        "statements.loop_control",
        "statements",
        (cst.Break, cst.Continue),
        swap_loop_control,
        "operator_keywords",
    ),
    Operator("statements.raise", "statements", cst.Raise, drop_raise),
    Operator(
        "statements.assign",
        "statements",
        (cst.Assign, cst.AnnAssign),
        assign_none,
        "operator_assignment",
    ),
]
