"""Lambda bodies: code that runs only when its lambda is called.

Line coverage cannot tell a lambda's body from the line that makes the lambda: a table
of stubs (`abs=[lambda x: None]`) runs every line at import, yet no test may ever call
a stub. coverage.py records a call as an arc from minus the code object's first line,
so the baseline knows which lambdas ran (`Planner.called_lines`), and a mutant in the
body of one that never did is `NoCoverage`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from auditor.mutation.data_tables import Offsets


@dataclass(frozen=True)
class LambdaBody:
    start: int
    end: int
    """Character offsets of the body in the source."""
    line: int
    """The lambda's first line: its code object's `co_firstlineno`."""


def lambda_bodies(source: str) -> list[LambdaBody]:
    """Every lambda's body, innermost last where they nest."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    offsets = Offsets(source)
    found = [
        LambdaBody(offsets.start(node.body), offsets.end(node.body), node.lineno)
        for node in ast.walk(module)
        if isinstance(node, ast.Lambda)
    ]
    return sorted(found, key=lambda body: (body.start, -body.end))


def lambda_around(bodies: list[LambdaBody], start: int, end: int) -> LambdaBody | None:
    """The innermost lambda whose body holds source[start:end], if any."""
    holding = [body for body in bodies if body.start <= start and end <= body.end]
    return holding[-1] if holding else None
