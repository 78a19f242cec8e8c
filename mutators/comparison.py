"""Comparisons: boundaries (`<` -> `<=`), negations (`==` -> `!=`, `in` -> `not in`)."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite, swap_by_type

_SWAPS = {
    cst.LessThan: (cst.LessThanEqual, cst.GreaterThanEqual),
    cst.LessThanEqual: (cst.LessThan, cst.GreaterThan),
    cst.GreaterThan: (cst.GreaterThanEqual, cst.LessThanEqual),
    cst.GreaterThanEqual: (cst.GreaterThan, cst.LessThan),
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
}


def swap_comparison(node: cst.ComparisonTarget) -> Iterable[Rewrite]:
    yield from swap_by_type(node, "operator", _SWAPS)


OPERATORS = [
    Operator(
        "comparison.swap",
        "comparison",
        cst.ComparisonTarget,
        swap_comparison,
        "operator_swap_op / operator_keywords",
    ),
]
