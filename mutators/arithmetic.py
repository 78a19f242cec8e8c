"""Arithmetic and bitwise operators: `+` -> `-`, `*` -> `/`, `**` -> `*`, `&` -> `|`, ..."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite, code, swap_by_type

_BINARY = {
    cst.Add: cst.Subtract,
    cst.Subtract: cst.Add,
    cst.Multiply: cst.Divide,
    cst.Divide: cst.Multiply,
    cst.FloorDivide: cst.Divide,
    cst.Modulo: cst.Divide,
    cst.Power: cst.Multiply,
    cst.LeftShift: cst.RightShift,
    cst.RightShift: cst.LeftShift,
    cst.BitAnd: cst.BitOr,
    cst.BitOr: cst.BitAnd,
    cst.BitXor: cst.BitAnd,
    cst.MatrixMultiply: cst.Multiply,
}


def swap_binary(node: cst.BinaryOperation) -> Iterable[Rewrite]:
    yield from swap_by_type(node, "operator", _BINARY)


def negation_removal(node: cst.UnaryOperation) -> Iterable[Rewrite]:
    """`-x` -> `x`, `~x` -> `x` (`not` belongs to the boolean family)."""
    if isinstance(node.operator, (cst.Minus, cst.BitInvert, cst.Plus)):
        yield node, node.expression, f"{code(node).strip()} -> {code(node.expression).strip()}"


OPERATORS = [
    Operator("arithmetic.swap", "arithmetic", cst.BinaryOperation, swap_binary, "operator_swap_op"),
    Operator(
        "arithmetic.unary",
        "arithmetic",
        cst.UnaryOperation,
        negation_removal,
        "operator_remove_unary_ops",
    ),
]
