"""The terminal's list of tests that did not pass on the original code: tests that failed
alike are one row, so a suite that cannot run here shows its one cause."""

from __future__ import annotations

from rich.console import Console

from auditor.report import Report, TestResult
from reports import terminal

NO_EXTENSION = "AssertionError: C extension not loaded in extension mode"


def _with_excluded(report: Report, excluded: list[TestResult]) -> Report:
    tests = [*report.baseline.tests, *excluded]
    update = {"tests": tests, "collection_errors": [], "excluded": len(excluded)}
    baseline = report.baseline.model_copy(update=update)
    return report.model_copy(update={"baseline": baseline})


def _failed(nodeid: str, outcome: str, message: str) -> TestResult:
    return TestResult(
        nodeid=nodeid, file=nodeid.split("::")[0], outcome=outcome, duration=0.0, message=message
    )


def _rendered(report: Report) -> list[str]:
    console = Console(record=True, width=250)
    terminal.render(report, console)
    return console.export_text().splitlines()


def test_tests_that_failed_alike_are_one_row_with_their_count(report):
    alike = [
        _failed(f"tests/test_width.py::test_{n:03}", "error", NO_EXTENSION) for n in range(300)
    ]
    other = _failed("tests/test_clip.py::test_clip", "failed", "assert 2 == 3")
    lines = _rendered(_with_excluded(report, [*alike, other]))
    rows = [line for line in lines if NO_EXTENSION in line or "assert 2 == 3" in line]
    assert len(rows) == 2
    assert "tests/test_width.py::test_000 and 299 more" in rows[0]
    assert "tests/test_clip.py::test_clip " in rows[1]
    assert "not audited (did not pass on the original code): 301 tests" in map(str.rstrip, lines)


def test_a_test_that_failed_on_its_own_is_named_alone(report):
    lone = _failed("tests/test_clip.py::test_clip", "failed", "assert 2 == 3")
    (row,) = [line for line in _rendered(_with_excluded(report, [lone])) if "assert 2 == 3" in line]
    assert "more" not in row
