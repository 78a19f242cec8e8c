"""Extreme mutation: a function's whole body becomes `return None`, a type default or
`pass`. If every extreme mutant of a covered function survives, the function is
pseudo-tested: the suite runs it and checks none of its effects."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite

_TYPE_DEFAULTS = {
    "int": "0",
    "float": "0.0",
    "str": '""',
    "bool": "False",
    "bytes": 'b""',
    "list": "[]",
    "dict": "{}",
    "set": "set()",
    "tuple": "()",
}


def _walk_own(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    for child in node.children:
        yield child
        if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            yield from _walk_own(child)


def _annotation_name(function: cst.FunctionDef) -> str:
    if function.returns is None:
        return ""
    annotation = function.returns.annotation
    if isinstance(annotation, cst.Subscript):
        annotation = annotation.value
    if isinstance(annotation, cst.Attribute):
        return annotation.attr.value
    if isinstance(annotation, cst.Name):
        return annotation.value
    if isinstance(annotation, cst.SimpleString):
        return annotation.evaluated_value.split("[")[0] if annotation.evaluated_value else ""
    return ""


def replace_body(node: cst.FunctionDef) -> Iterable[Rewrite]:
    body = node.body
    if not isinstance(body, cst.IndentedBlock):
        return
    own = list(_walk_own(body))
    if any(isinstance(child, (cst.Yield,)) for child in own):
        yield body, "yield from ()", "body -> empty generator"
        return
    returns_value = any(isinstance(child, cst.Return) and child.value is not None for child in own)
    if not returns_value:
        yield body, "pass", "body -> pass"
        return
    yield body, "return None", "body -> return None"
    default = _TYPE_DEFAULTS.get(_annotation_name(node))
    if default is not None:
        yield body, f"return {default}", f"body -> return {default}"


OPERATORS = [Operator("extreme.body", "extreme", cst.FunctionDef, replace_body)]
