"""Return values: `return x` -> `return None`, opposite bool, empty collection."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite, code

_EMPTY = {
    cst.List: "[]",
    cst.Tuple: "()",
    cst.Dict: "{}",
    cst.Set: "set()",
    cst.ListComp: "[]",
    cst.DictComp: "{}",
    cst.SetComp: "set()",
}


def mutate_return(node: cst.Return) -> Iterable[Rewrite]:
    value = node.value
    if value is None or (isinstance(value, cst.Name) and value.value == "None"):
        return
    shown = code(value).strip()
    yield value, cst.Name("None"), f"return {shown} -> return None"
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return  # the boolean family flips literals already
    if isinstance(value, (cst.Comparison, cst.BooleanOperation)) or (
        isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not)
    ):
        negated = f"not ({shown})"
        yield value, negated, f"return {shown} -> return {negated}"
    empty = _EMPTY.get(type(value))
    if empty and shown != empty:
        yield value, empty, f"return {shown} -> return {empty}"


OPERATORS = [Operator("returns.value", "returns", cst.Return, mutate_return)]
