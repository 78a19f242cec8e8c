"""The hardened test files of a module, made of its accepted candidates.

Each candidate was proven as a file of its own, so written together with others it
must mean what it meant alone. Candidates share a file only when none of them binds at
top level a name another one reads or binds otherwise (another `Section`, a helper of
the same name as an imported one, a fixture that would hide the conftest one another
test requests); a candidate that clashes goes to the next file. Nothing is renamed.
Imports are gathered at the top, once each.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from auditor.report import Candidate


@dataclass(frozen=True)
class _Names:
    bound: dict[str, str]
    """Top-level name -> the statement binding it (`ast.dump`)."""
    read: frozenset[str]
    """Names it reads without binding them: globals of the file, builtins, and the
    fixtures its functions request by parameter (conftest ones among them)."""
    alone: bool
    """Top-level code that is not an import, a definition or an assignment to names
    (`sys.path.insert(...)`, `from x import *`): it would act on the whole file."""


def _names(code: str) -> _Names:
    tree = ast.parse(code)
    bound: dict[str, str] = {}
    alone = False
    for statement in _body(tree):
        if isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                if alias.name == "*":
                    alone = True
                    continue
                name = alias.asname or alias.name.split(".")[0]
                source = getattr(statement, "module", None) or ""
                bound[name] = f"import {'.' * getattr(statement, 'level', 0)}{source} {alias.name}"
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound[statement.name] = ast.dump(statement)
        elif isinstance(statement, ast.Assign | ast.AnnAssign) and all(
            isinstance(target, ast.Name) for target in _targets(statement)
        ):
            for target in _targets(statement):
                bound[target.id] = ast.dump(statement)  # type: ignore[attr-defined]
        else:
            alone = True
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            read |= {arg.arg for arg in node.args.args + node.args.kwonlyargs}
    return _Names(bound, frozenset(read - bound.keys()), alone)


def _targets(statement: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return statement.targets if isinstance(statement, ast.Assign) else [statement.target]


def _body(tree: ast.Module) -> list[ast.stmt]:
    """The statements after the module docstring."""
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:] if isinstance(body[0].value.value, str) else body
    return body


def top_level_names(code: str) -> set[str]:
    """The names a candidate binds at top level: its tests, classes, fixtures, helpers."""
    return set(_names(code).bound)


def _clash(first: _Names, second: _Names) -> bool:
    for one, other in ((first, second), (second, first)):
        for name, binding in one.bound.items():
            if name in other.read or other.bound.get(name, binding) != binding:
                return True
    return False


def share_files(
    candidates: list[Candidate], apart: frozenset[str] = frozenset()
) -> list[list[Candidate]]:
    """The candidates in files: each in the first file where it clashes with none;
    those in `apart` (ids) in files of their own."""
    files: list[list[tuple[Candidate, _Names]]] = []
    for candidate in candidates:
        names = _names(candidate.code)
        home = None
        if not (names.alone or candidate.id in apart):
            home = next(
                (
                    file
                    for file in files
                    if not any(
                        theirs.alone or c.id in apart or _clash(names, theirs) for c, theirs in file
                    )
                ),
                None,
            )
        if home is None:
            files.append(home := [])
        home.append((candidate, names))
    return [[candidate for candidate, _ in file] for file in files]


def hardened_header(module: str) -> str:
    return (
        f'"""Tests for {module} accepted by audit: each passed on the original code in three\n'
        "orders with the whole suite and killed a mutant the suite missed (or covered code it\n"
        'did not). Review before adding them to the suite."""\n'
    )


def compose(header: str, candidates: list[Candidate]) -> str:
    """One file's text (`share_files`): the header, the imports, each test under a
    comment naming where it came from and what it kills; a definition two candidates
    both hold word for word is written once."""
    future: list[str] = []
    imports: list[str] = []
    bodies: list[str] = []
    written: set[str] = set()
    for candidate in candidates:
        rest = []
        for statement in _body(ast.parse(candidate.code)):
            if isinstance(statement, ast.Import | ast.ImportFrom):
                line = ast.unparse(statement)
                target = future if line.startswith("from __future__") else imports
                if line not in target:
                    target.append(line)
            elif ast.dump(statement) not in written:
                written.add(ast.dump(statement))
                rest.append(statement)
        text = "\n\n\n".join(_source(candidate.code, statement) for statement in rest)
        comment = f"# {candidate.name} ({candidate.origin}, {candidate.id})"
        if candidate.accepted:
            comment += f": kills {', '.join(candidate.kills) or 'none (covers new lines)'}"
        bodies.append(f"{comment}\n{text}")
    parts = [header, *future, *sorted(imports)]
    return "\n".join(parts) + "\n\n\n" + "\n\n\n".join(bodies) + "\n"


def _source(code: str, statement: ast.stmt) -> str:
    """The statement as the candidate wrote it, decorators included (`get_source_segment`
    starts at `def`; decorators sit on the lines above it)."""
    segment = ast.get_source_segment(code, statement, padded=True) or ast.unparse(statement)
    decorators = getattr(statement, "decorator_list", [])
    if not decorators:
        return segment
    lines = code.splitlines()
    first = min(d.lineno for d in decorators)
    return "\n".join(lines[first - 1 : statement.lineno - 1]) + "\n" + segment.lstrip()
