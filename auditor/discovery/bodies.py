"""The function bodies of a source file: code that runs only when its function is
called. An edit inside one changes what the tests that call it see, not what importing
the module does (`baseline.known`, `mutation.ran_code`)."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Body:
    name: str
    """`f`, `C.m`; `f#2` for the second `def f` of the same scope."""
    first: int
    """Its first statement past the docstring (a decorated one's first decorator: the
    line coverage.py records for it)."""
    last: int


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(decorator.lineno for decorator in decorators)])


def function_bodies(tree: ast.Module) -> list[Body]:
    """The body of every module-level function and of every method of a module-level
    class (a nested function is part of the body around it), in source order."""
    functions = [(node.name, node) for node in tree.body if isinstance(node, _FUNCTIONS)]
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            functions += [
                (f"{node.name}.{member.name}", member)
                for member in node.body
                if isinstance(member, _FUNCTIONS)
            ]
    seen: Counter[str] = Counter()
    found = []
    for name, function in sorted(functions, key=lambda pair: pair[1].lineno):
        body = function.body
        if ast.get_docstring(function, clean=False) is not None:
            body = body[1:]
        if not body:
            continue
        seen[name] += 1
        named = name if seen[name] == 1 else f"{name}#{seen[name]}"
        found.append(Body(named, _first_line(body[0]), function.end_lineno or body[-1].lineno))
    return found
