"""What an operator is: a node type and a function from a node to its replacements."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

Rewrite = tuple[cst.CSTNode, cst.CSTNode | str, str]
"""(node to replace, its replacement as a node or as source text, short description).

A description may say `{original}`: the replaced source text, shortened, goes there
(cheaper than generating code for a large node). An argument replaced by "" is dropped
together with its comma.

The node to replace is the operator's node or one of its descendants; replacements are
spliced into the original text at that node's position, so they stay on its lines."""


@dataclass(frozen=True)
class Operator:
    name: str
    """Stable name, part of every mutant id: `arithmetic.swap`."""
    family: str
    node_type: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...]
    rewrite: Callable[[cst.CSTNode], Iterable[Rewrite]]
    mutmut: str = ""
    """The mutmut 3 operator this corresponds to, '' when mutmut has none."""


_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def swap_by_type(
    node: cst.CSTNode, attribute: str, mapping: dict[type, Callable[[], cst.CSTNode]]
) -> Iterable[Rewrite]:
    """Replace `node.<attribute>` (an operator token) by each mapped operator."""
    current = getattr(node, attribute)
    for replacement in _as_list(mapping.get(type(current))):
        new = replacement()
        for field in ("whitespace_before", "whitespace_after"):
            if hasattr(current, field) and hasattr(new, field):
                new = new.with_changes(**{field: getattr(current, field)})
        description = f"{code(current).strip()} -> {code(new).strip()}"
        yield node, node.with_changes(**{attribute: new}), description


def _as_list(value: object) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
