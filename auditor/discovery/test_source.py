"""What audit reads from a test file's source, in one parse: what it imports, where each
test function starts and checks, and which exceptions it expects.

The planner, the assertion evidence, the smells and the probes each need one of these:
one parse of each file serves them all.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

TestFunction = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Import:
    """One imported name: `from {module} import {name}` (`level` dots before the module
    for a relative import), or `import {module}` when `name` is None."""

    module: str | None
    level: int
    name: str | None


@dataclass(frozen=True)
class TestSource:
    """A test file's facts; an unparsable file has none."""

    __test__ = False  # not a pytest test class, despite the name
    imports: tuple[Import, ...] = ()
    functions: Mapping[str, int] = field(default_factory=dict)
    """Each function's first line, by qualname (`test_x`, `TestA.test_x`): module-level
    functions and the methods of module-level classes."""
    checks: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    """The lines of each function's checks: `assert`, `assert*`, `raises`, `fail`,
    `warns` calls."""
    expected: frozenset[str] = frozenset()
    """Exception names the file expects: `pytest.raises(X)`, `assertRaises(X)`,
    `except X` (last dotted part); broad ones (Exception) do not count."""


def read_test_source(path: Path) -> TestSource:
    try:
        return test_source(path.read_bytes())
    except OSError:
        return test_source(b"")


@functools.lru_cache(maxsize=2048)
def test_source(source: bytes) -> TestSource:
    """Kept by content: the warm agent session audits again with one file changed."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return TestSource()
    functions = _functions_in(tree)
    imports: list[Import] = []
    expected: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports += [Import(alias.name, 0, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports += [
                Import(node.module, node.level, None if a.name == "*" else a.name)
                for a in node.names
            ]
        else:
            expected |= _expected_at(node)
    return TestSource(
        imports=tuple(imports),
        functions={name: function.lineno for name, function in functions.items()},
        checks={name: _check_lines(function) for name, function in functions.items()},
        expected=frozenset(expected),
    )


def _functions_in(tree: ast.Module) -> dict[str, TestFunction]:
    found: dict[str, TestFunction] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[f"{node.name}.{item.name}"] = item
    return found


def _check_lines(function: TestFunction) -> tuple[int, ...]:
    lines = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assert):
            lines.add(node.lineno)
        elif isinstance(node, ast.Call):
            callee = node.func
            name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
            if name.startswith("assert") or name in ("raises", "fail", "warns"):
                lines.add(node.lineno)
    return tuple(sorted(lines))


_RAISES = ("raises", "assertRaises", "assertRaisesRegex")


def _expected_at(node: ast.AST) -> set[str]:
    candidates: list[ast.expr] = []
    if isinstance(node, ast.Call) and dotted(node.func).rsplit(".", 1)[-1] in _RAISES:
        candidates = node.args[:1]
    elif isinstance(node, ast.ExceptHandler) and node.type is not None:
        candidates = [node.type]
    names = set()
    for candidate in candidates:
        parts = candidate.elts if isinstance(candidate, ast.Tuple) else [candidate]
        for part in parts:
            name = dotted(part).rsplit(".", 1)[-1]
            if name and name not in ("Exception", "BaseException"):
                names.add(name)
    return names


def dotted(node: ast.AST) -> str:
    """`a.b.c` for a name, an attribute chain or a call of one; empty otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return ""
