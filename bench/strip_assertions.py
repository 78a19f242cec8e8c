"""Strip a test suite's assertions, in place: the suite a fast model writes at its worst.

    python bench/strip_assertions.py PROJECT/tests

Removes every `assert` statement and every `self.assert*(...)` call statement from the
test files (`test_*.py`, `*_test.py`, `conftest.py`) under the given folders, with libcst
so the rest of each file keeps its exact text. A block left empty gets `pass`. Almost
every mutant then survives, which is what the benchmark's second row of each project
measures: the engine's cost when nothing stops a mutant's tests early."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import libcst as cst


def _is_assertion(statement: cst.BaseSmallStatement) -> bool:
    if isinstance(statement, cst.Assert):
        return True
    if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
        function = statement.value.func
        return (
            isinstance(function, cst.Attribute)
            and isinstance(function.value, cst.Name)
            and function.value.value == "self"
            and function.attr.value.startswith("assert")
        )
    return False


class _StripAssertions(cst.CSTTransformer):
    def __init__(self) -> None:
        self.removed = 0

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        kept = [s for s in updated.body if not _is_assertion(s)]
        self.removed += len(updated.body) - len(kept)
        if len(kept) == len(updated.body):
            return updated
        if not kept:
            return cst.RemovalSentinel.REMOVE
        return updated.with_changes(body=kept)

    def leave_IndentedBlock(
        self, original: cst.IndentedBlock, updated: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        if updated.body:
            return updated
        return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])

    def leave_SimpleStatementSuite(
        self, original: cst.SimpleStatementSuite, updated: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        kept = [s for s in updated.body if not _is_assertion(s)]
        self.removed += len(updated.body) - len(kept)
        return updated.with_changes(body=kept or [cst.Pass()])


def strip_source(source: str) -> tuple[str, int]:
    """The source without its assertions, and how many it had."""
    transformer = _StripAssertions()
    stripped = cst.parse_module(source).visit(transformer)
    return stripped.code, transformer.removed


def is_test_file(path: Path) -> bool:
    name = path.name
    return name == "conftest.py" or (
        name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
    )


def strip_tree(folder: Path) -> int:
    removed = 0
    for path in sorted(folder.rglob("*.py")):
        if is_test_file(path):
            source, count = strip_source(path.read_text(encoding="utf-8"))
            path.write_text(source, encoding="utf-8")
            removed += count
    return removed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    total = sum(strip_tree(folder) for folder in args.folders)
    print(f"removed {total} assertions", file=sys.stderr)


if __name__ == "__main__":
    main()
