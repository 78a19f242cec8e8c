"""The code stays readable at a glance: no function in `auditor/` or `reports/` runs to 80
lines, and none takes more than six positional values (wider hand-offs are named, or
travel as one model, so that a caller cannot silently leave one out)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent
MAX_LINES = 79
MAX_POSITIONAL = 6


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []
    for package in ("auditor", "reports"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.append((f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", node))
    return found


def _positional(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    arguments = [*function.args.posonlyargs, *function.args.args]
    if arguments and arguments[0].arg in ("self", "cls"):
        arguments = arguments[1:]
    return len(arguments)


def test_the_scan_sees_the_pipeline_and_the_renderers():
    names = {where.rsplit(" ", 1)[1] for where, _ in _functions()}
    assert {"run_audit", "render", "evaluate", "merge_reports"} <= names


def test_no_function_runs_to_80_lines():
    long = [
        f"{where}: {node.end_lineno - node.lineno + 1} lines"
        for where, node in _functions()
        if node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_LINES
    ]
    assert long == []


def test_no_function_takes_more_than_six_positional_values():
    wide = [
        f"{where}: {_positional(node)}"
        for where, node in _functions()
        if _positional(node) > MAX_POSITIONAL
    ]
    assert wide == []
