"""Literals: numbers (+1, 0, -x), strings ("" and "XX" wrap, case), None for values."""

from __future__ import annotations

import math
from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite, code


def mutate_number(node: cst.BaseNumber) -> Iterable[Rewrite]:
    if not isinstance(node, (cst.Integer, cst.Float)):
        return
    value = node.evaluated_value
    candidates: list[int | float] = [value + 1]
    if value != 0:
        candidates += [0, -value]
    seen = {value}
    for candidate in candidates:
        if candidate in seen or (isinstance(candidate, float) and math.isinf(candidate)):
            continue
        seen.add(candidate)
        text = repr(candidate)
        replacement: cst.BaseExpression = (
            cst.UnaryOperation(
                cst.Minus(),
                cst.Integer(text[1:]) if isinstance(candidate, int) else cst.Float(text[1:]),
            )
            if text.startswith("-")
            else (cst.Integer(text) if isinstance(candidate, int) else cst.Float(text))
        )
        yield node, replacement, f"{node.value} -> {text}"


def _string_parts(node: cst.SimpleString) -> tuple[str, str, str] | None:
    value = node.value
    prefix_end = min(i for i in (value.find('"'), value.find("'")) if i != -1)
    prefix, quoted = value[:prefix_end], value[prefix_end:]
    if quoted.startswith(('"""', "'''")) or "b" in prefix.lower():
        return None
    return prefix, quoted[0], quoted[1:-1]


def mutate_string(node: cst.SimpleString) -> Iterable[Rewrite]:
    parts = _string_parts(node)
    if parts is None:
        return
    prefix, quote, body = parts
    variants = [("XX" + body + "XX", "wrapped in XX")]
    if body:
        variants.append(("", "emptied"))
    if "\\" not in body:
        variants += [(body.lower(), "lowercased"), (body.upper(), "uppercased")]
    seen = {body}
    for new_body, what in variants:
        if new_body in seen:
            continue
        seen.add(new_body)
        new = node.with_changes(value=f"{prefix}{quote}{new_body}{quote}")
        yield node, new, f"{code(node)} {what}"


OPERATORS = [
    Operator(
        "constants.number", "constants", (cst.Integer, cst.Float), mutate_number, "operator_number"
    ),
    Operator("constants.string", "constants", cst.SimpleString, mutate_string, "operator_string"),
]
