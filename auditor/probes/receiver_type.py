"""Whether a mutant's change matters only for a `self` of another type.

The probes build a method's `self` from its own class, never from a subclass or another
type. A change to code that decides by `self`'s type (`isinstance(self, C)`,
`self.__class__`, `type(self)`), or to a name such code sets, makes no difference on any
input they build: `cls = self.__class__` -> skipped returns the same for a `C` and a
different type for a subclass of it (ordered-set's `intersection`). No input telling it
apart then says nothing about equivalence."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from pathlib import Path

_RECEIVER_TYPE = re.compile(r"isinstance\(\s*self\b|\bself\.__class__\b|\btype\(\s*self\s*\)")


def decides_by_receiver_type(path: str, first_line: int, last_line: int) -> bool:
    """Whether lines `first_line`..`last_line` of `path` read `self`'s type, or set a
    name that is elsewhere in their function set from it."""
    try:
        lines = _source_lines(path)
        tree = _tree(path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return False
    changed = "\n".join(lines[first_line - 1 : last_line])
    if _RECEIVER_TYPE.search(changed):
        return True
    function = _function_at(tree, first_line)
    if function is None:
        return False
    names = _assigned(function, lambda node: first_line <= node.lineno <= last_line)
    return bool(names & _assigned(function, lambda node: _reads_type(node, lines)))


def _reads_type(node: ast.stmt, lines: list[str]) -> bool:
    text = "\n".join(lines[node.lineno - 1 : node.end_lineno or node.lineno])
    return _RECEIVER_TYPE.search(text) is not None


def _assigned(function: ast.AST, where: Callable[[ast.stmt], bool]) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and where(node):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _function_at(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function whose body holds `line`."""
    holding = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return max(holding, key=lambda node: node.lineno, default=None)


@functools.cache
def _source_lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


@functools.cache
def _tree(path: str) -> ast.Module:
    return ast.parse("\n".join(_source_lines(path)))
