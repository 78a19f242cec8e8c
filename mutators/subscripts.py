"""Slices and indexes: `[1:]` -> `[:]`, `[:n]` -> `[:n+1]`, `x[i]` -> `x[i + 1]`."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite, code


def mutate_slice(node: cst.Slice) -> Iterable[Rewrite]:
    for bound in ("lower", "upper"):
        value = getattr(node, bound)
        if value is None:
            continue
        shown = code(value).strip()
        yield node, node.with_changes(**{bound: None}), f"slice {bound} bound {shown} dropped"
        if bound == "upper":
            yield value, f"({shown}) + 1", f"slice end {shown} -> {shown} + 1"


def mutate_index(node: cst.SubscriptElement) -> Iterable[Rewrite]:
    index = node.slice
    if isinstance(index, cst.Index) and isinstance(
        index.value, (cst.Integer, cst.Name, cst.UnaryOperation)
    ):
        shown = code(index.value).strip()
        if not (isinstance(index.value, cst.Name) and index.value.value[:1].isupper()):
            yield index.value, f"{shown} + 1", f"index {shown} -> {shown} + 1"


OPERATORS = [
    Operator("subscripts.slice", "subscripts", cst.Slice, mutate_slice),
    Operator("subscripts.index", "subscripts", cst.SubscriptElement, mutate_index),
]
