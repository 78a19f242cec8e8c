"""A file's known verdicts (what a diff run scores the whole project over) count each
mutant as the report's scores count it."""

from __future__ import annotations

import pytest

from auditor.mutation.plan import PlannedMutant
from auditor.mutation.protocol import JobResult
from auditor.mutation.scoring import Verdict
from auditor.mutation.verdicts import to_report, to_verdict
from mutators.sites import Site

SITE = Site(
    operator="comparison.lt_to_le",
    family="comparison",
    function="f",
    function_line=1,
    function_first_line=1,
    function_end=30,
    function_classes=(),
    line=2,
    col=11,
    end_line=2,
    end_col=16,
    start=20,
    end=25,
    original="a < b",
    replacement="a <= b",
    description="< -> <=",
    ordinal=0,
)


def _planned(status: str | None = None) -> PlannedMutant:
    return PlannedMutant(
        id="m.py::f::comparison.lt_to_le@1:11#0",
        site=SITE,
        file="m.py",
        abs_path="/p/m.py",
        diff="",
        status=status,  # type: ignore[arg-type]
        tests=["tests/test_m.py::test_b", "tests/test_m.py::test_a"],
    )


RESULTS = {
    "killed by a failing check": JobResult(
        id="x",
        status="Killed",
        killed_by=["tests/test_m.py::test_a"],
        kill_kind="assertion",
        kills=[("tests/test_m.py::test_a", "assertion", 7)],
    ),
    "killed by an error, a later test's check failing too": JobResult(
        id="x",
        status="Killed",
        killed_by=["tests/test_m.py::test_a"],
        kill_kind="error",
        kills=[
            ("tests/test_m.py::test_a", "error", 0),
            ("tests/test_m.py::test_b", "assertion", 9),
        ],
    ),
    "killed by a crash, from an older cache entry without kills": JobResult(
        id="x", status="Killed", killed_by=["tests/test_m.py::test_a"], kill_kind="crash"
    ),
    "timed out": JobResult(
        id="x", status="Timeout", killed_by=["tests/test_m.py::test_b"], kill_kind="timeout"
    ),
    "survived": JobResult(id="x", status="Survived"),
    "no result": None,
}


@pytest.mark.parametrize("case", sorted(RESULTS))
def test_a_run_mutant_counts_as_its_report_does(case):
    planned, result = _planned(), RESULTS[case]

    assert to_verdict(planned, result) == Verdict.of(to_report(planned, result, cached=False))


@pytest.mark.parametrize("status", ["NoCoverage", "Ignored", "CompileError"])
def test_a_mutant_decided_without_a_run_counts_as_its_report_does(status):
    planned = _planned(status)

    assert to_verdict(planned, None) == Verdict.of(to_report(planned, None, cached=False))


def test_a_check_failing_after_an_error_counts_as_caught_by_a_check():
    planned = _planned()
    result = RESULTS["killed by an error, a later test's check failing too"]

    assert to_verdict(planned, result) == Verdict("Killed", "error", by_check=True)
