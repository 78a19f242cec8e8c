"""Augmented assignment: `+=` -> `-=` (and friends), `x += y` -> `x = y`."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite, code, swap_by_type

_SWAPS = {
    cst.AddAssign: cst.SubtractAssign,
    cst.SubtractAssign: cst.AddAssign,
    cst.MultiplyAssign: cst.DivideAssign,
    cst.DivideAssign: cst.MultiplyAssign,
    cst.FloorDivideAssign: cst.DivideAssign,
    cst.ModuloAssign: cst.DivideAssign,
    cst.PowerAssign: cst.MultiplyAssign,
    cst.LeftShiftAssign: cst.RightShiftAssign,
    cst.RightShiftAssign: cst.LeftShiftAssign,
    cst.BitAndAssign: cst.BitOrAssign,
    cst.BitOrAssign: cst.BitAndAssign,
    cst.BitXorAssign: cst.BitAndAssign,
}


def swap_augmented(node: cst.AugAssign) -> Iterable[Rewrite]:
    yield from swap_by_type(node, "operator", _SWAPS)


def to_plain_assignment(node: cst.AugAssign) -> Iterable[Rewrite]:
    plain = f"{code(node.target).strip()} = {code(node.value).strip()}"
    yield node, plain, f"`{code(node).strip()}` -> `{plain}`"


OPERATORS = [
    Operator("augmented.swap", "augmented", cst.AugAssign, swap_augmented, "operator_swap_op"),
    Operator(
        "augmented.plain",
        "augmented",
        cst.AugAssign,
        to_plain_assignment,
        "operator_augmented_assignment",
    ),
]
