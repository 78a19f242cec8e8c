"""One hardened test file per module, made of its accepted candidates.

Imports are gathered at the top (once each); a name a later candidate defines again is
renamed in that candidate, so no test shadows another when they share a file.
"""

from __future__ import annotations

import ast

from auditor.report import Candidate


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node


def _defined(statement: ast.stmt) -> set[str]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Assign | ast.AnnAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return {t.id for t in targets if isinstance(t, ast.Name)}
    return set()


def hardened_header(module: str) -> str:
    return (
        f'"""Tests for {module} accepted by audit: each passed on the original code in three\n'
        "orders with the whole suite and killed a mutant the suite missed (or covered code it\n"
        'did not). Review before adding them to the suite."""\n'
    )


def compose(header: str, candidates: list[Candidate]) -> str:
    """The file's text: the header, the imports, each test under a comment naming where
    it came from and what it kills."""
    future: list[str] = []
    imports: list[str] = []
    bodies: list[str] = []
    taken: set[str] = set()
    for candidate in candidates:
        tree = ast.parse(candidate.code)
        rest = []
        for statement in tree.body:
            if isinstance(statement, ast.Import | ast.ImportFrom):
                line = ast.unparse(statement)
                target = future if line.startswith("from __future__") else imports
                if line not in target:
                    target.append(line)
            elif not (
                rest == []
                and isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            ):
                rest.append(statement)
        clashes = {name for s in rest for name in _defined(s)} & taken
        if clashes:
            renames = {
                name: f"{name}_{candidate.id.rsplit('#', 1)[1].replace('.', '_')}"
                for name in clashes
            }
            rest = [_Rename(renames).visit(s) for s in rest]
            text = "\n\n\n".join(ast.unparse(s) for s in rest)
        else:
            segments = [
                ast.get_source_segment(candidate.code, s, padded=True) or ast.unparse(s)
                for s in rest
            ]
            text = "\n\n\n".join(
                _with_decorators(candidate.code, s, seg)
                for s, seg in zip(rest, segments, strict=True)
            )
        taken |= {name for s in rest for name in _defined(s)}
        comment = f"# {candidate.name} ({candidate.origin}, {candidate.id})"
        if candidate.accepted:
            comment += f": kills {', '.join(candidate.kills) or 'none (covers new lines)'}"
        bodies.append(f"{comment}\n{text}")
    parts = [header, *future, *sorted(imports)]
    return "\n".join(parts) + "\n\n\n" + "\n\n\n".join(bodies) + "\n"


def _with_decorators(code: str, statement: ast.stmt, segment: str) -> str:
    """`get_source_segment` starts at `def`; decorators sit on the lines above it."""
    decorators = getattr(statement, "decorator_list", [])
    if not decorators:
        return segment
    lines = code.splitlines()
    first = min(d.lineno for d in decorators)
    return "\n".join(lines[first - 1 : statement.lineno - 1]) + "\n" + segment.lstrip()
