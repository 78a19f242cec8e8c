"""Calls: an argument to None or dropped, keyword to None, mirrored string methods,
`dict(a=...)` keys, `deepcopy` -> `copy`, lambda bodies."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from mutators.base import Operator, Rewrite, code

_MIRRORED = {
    "lower": "upper",
    "upper": "lower",
    "lstrip": "rstrip",
    "rstrip": "lstrip",
    "find": "rfind",
    "rfind": "find",
    "ljust": "rjust",
    "rjust": "ljust",
    "index": "rindex",
    "rindex": "index",
    "removeprefix": "removesuffix",
    "removesuffix": "removeprefix",
    "partition": "rpartition",
    "rpartition": "partition",
}


def mutate_arguments(node: cst.Call) -> Iterable[Rewrite]:
    for index, arg in enumerate(node.args):
        if arg.star:
            continue
        if not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
            where = f"{arg.keyword.value}=" if arg.keyword else f"argument {index + 1} "
            yield arg.value, cst.Name("None"), f"{where}{{original}} -> None"
        if len(node.args) > 1:
            yield arg, "", "argument `{original}` dropped"


def mirror_method(node: cst.Call) -> Iterable[Rewrite]:
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in _MIRRORED:
        new = _MIRRORED[func.attr.value]
        yield func.attr, cst.Name(new), f".{func.attr.value}() -> .{new}()"
    if isinstance(func, cst.Attribute) and func.attr.value in ("split", "rsplit"):
        keywords = {arg.keyword.value for arg in node.args if arg.keyword}
        if len(node.args) == 2 or "maxsplit" in keywords:
            new = "rsplit" if func.attr.value == "split" else "split"
            yield func.attr, cst.Name(new), f".{func.attr.value}() -> .{new}()"
    if isinstance(func, cst.Name) and func.value == "deepcopy":
        yield func, cst.Name("copy"), "deepcopy -> copy"


def dict_keywords(node: cst.Call) -> Iterable[Rewrite]:
    if not (isinstance(node.func, cst.Name) and node.func.value == "dict"):
        return
    for arg in node.args:
        if arg.keyword is not None:
            new = arg.keyword.value + "XX"
            yield arg.keyword, cst.Name(new), f"dict key {arg.keyword.value} -> {new}"


def lambda_body(node: cst.Lambda) -> Iterable[Rewrite]:
    if isinstance(node.body, cst.Name) and node.body.value == "None":
        yield node.body, cst.Integer("0"), "lambda body None -> 0"
    else:
        yield node.body, cst.Name("None"), f"lambda body {code(node.body).strip()} -> None"


OPERATORS = [
    Operator("calls.argument", "calls", cst.Call, mutate_arguments, "operator_arg_removal"),
    Operator(
        "calls.mirror",
        "calls",
        cst.Call,
        mirror_method,
        "operator_symmetric_string_methods_swap / operator_name (deepcopy)",
    ),
    Operator("calls.dict_keyword", "calls", cst.Call, dict_keywords, "operator_dict_arguments"),
    Operator("calls.lambda", "calls", cst.Lambda, lambda_body, "operator_lambda"),
]
