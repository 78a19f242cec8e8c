"""Boolean logic: `and` <-> `or`, drop `not`, `True` <-> `False`, force a ternary's arm."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite, code, swap_by_type


def swap_and_or(node: cst.BooleanOperation) -> Iterable[Rewrite]:
    yield from swap_by_type(node, "operator", {cst.And: cst.Or, cst.Or: cst.And})


def drop_not(node: cst.UnaryOperation) -> Iterable[Rewrite]:
    if isinstance(node.operator, cst.Not):
        yield node, node.expression, f"{code(node).strip()} -> {code(node.expression).strip()}"


def flip_literal(node: cst.Name) -> Iterable[Rewrite]:
    flipped = {"True": "False", "False": "True"}.get(node.value)
    if flipped:
        yield node, node.with_changes(value=flipped), f"{node.value} -> {flipped}"


def force_ternary(node: cst.IfExp) -> Iterable[Rewrite]:
    """`a if c else b` -> always `a`, and always `b`."""
    yield node, node.body, "ternary -> its `if` arm"
    yield node, node.orelse, "ternary -> its `else` arm"


def force_condition(node: cst.If) -> Iterable[Rewrite]:
    """`if c:` -> `if True:` / `if False:` (the branch always or never taken)."""
    for literal in ("True", "False"):
        yield node.test, cst.Name(literal), f"if condition -> {literal}"


OPERATORS = [
    Operator("boolean.and_or", "boolean", cst.BooleanOperation, swap_and_or, "operator_swap_op"),
    Operator("boolean.not", "boolean", cst.UnaryOperation, drop_not, "operator_remove_unary_ops"),
    Operator("boolean.literal", "boolean", cst.Name, flip_literal, "operator_name"),
    Operator("boolean.ternary", "boolean", cst.IfExp, force_ternary, "operator_if_exp"),
    Operator("boolean.condition", "boolean", cst.If, force_condition),
]
