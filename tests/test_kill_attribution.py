"""How each mutant was caught, surfaced: by a failing check, or only by the code raising."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auditor.config import GateConfig
from auditor.gate import _mutation_conditions
from auditor.mutation.scoring import scores
from auditor.report import Mutant, MutationSection, Report
from tests.conftest import copy_fixture, run_audit


def mutant(number: int, status: str, kind: str = "") -> Mutant:
    return Mutant(
        id=f"m.py::f::op@{number}:0#0",
        file="m.py",
        function="f",
        operator="op",
        family="arithmetic",
        line=number,
        col=0,
        end_line=number,
        original="a",
        replacement="b",
        description="a -> b",
        diff="",
        status=status,
        path="swap",
        killed_by=["t.py::test"] if kind else [],
        kill_kind=kind,
    )


MUTANTS = [
    mutant(1, "Killed", "assertion"),
    mutant(2, "Killed", "error"),
    mutant(3, "Killed", "crash"),
    mutant(4, "Timeout", "timeout"),
    mutant(5, "Survived"),
]


def test_the_assertion_share_is_the_detected_mutants_a_check_caught():
    found = scores(MUTANTS)
    assert found.by_assertion == 1
    assert found.assertion_share == 25.0


def test_the_gate_can_ask_for_a_minimum_assertion_share():
    section = _section(MUTANTS)
    (condition,) = _mutation_conditions(GateConfig(min_assertion_kill_share=50), section)
    assert not condition.passed
    assert condition.message.startswith("min_assertion_kill_share: 25")


@pytest.fixture(scope="module")
def shallow(tmp_path_factory) -> tuple[Report, str]:
    root = tmp_path_factory.mktemp("attribution") / "shop"
    copy_fixture("shop", root)
    result = run_audit("tests_shallow", "--no-probes", "--json", "r.json", cwd=root)
    return Report.read(root / "r.json"), result.stdout


@pytest.mark.slow
def test_a_shallow_suite_s_kills_are_mostly_by_exception_and_the_report_says_so(shallow):
    report, stdout = shallow
    share = report.mutation.scores.assertion_share
    assert share is not None and share < 50
    row = rf"kills by assertion\s*│\s*{share:.1f}%"
    assert re.search(row, stdout)


@pytest.fixture(scope="module")
def shallow_all_killers(tmp_path_factory) -> Report:
    root = tmp_path_factory.mktemp("attribution_all") / "shop"
    copy_fixture("shop", root)
    run_audit("tests_shallow", "--no-probes", "--all-killers", "--json", "r.json", cwd=root)
    return Report.read(root / "r.json")


@pytest.mark.slow
def test_the_evidence_smell_needs_every_killer_known(shallow):
    report, _ = shallow
    assert not [s for s in report.smells.findings if s.code == "AT022"]


@pytest.mark.slow
def test_a_test_whose_kills_needed_no_check_gets_the_evidence_smell(shallow_all_killers):
    report = shallow_all_killers
    by_test = {t.nodeid: t for t in report.mutation.tests}
    flagged = [s for s in report.smells.findings if s.code == "AT022"]
    assert flagged
    survivors = [m for m in report.mutation.mutants if m.status == "Survived"]
    for smell in flagged:
        (test,) = [t for n, t in by_test.items() if n.endswith(smell.test.replace(".", "::"))]
        assert test.killed == 0 and test.crash_kills > 0
        assert any(test.nodeid in m.covered_by and m.function for m in survivors)
        assert f"its {test.crash_kills} kill" in smell.message


@pytest.mark.slow
def test_without_thresholds_the_suite_is_rated_never_passed(shallow):
    report, stdout = shallow
    assert report.gate.rating.level == "shallow"
    assert "rating: SHALLOW" in stdout
    assert "gate: PASS" not in stdout


def test_a_suite_whose_kills_are_mostly_checks_with_a_high_score_rates_strong():
    from auditor.gate import rate
    from auditor.report import SmellsSection

    section = _section([mutant(n, "Killed", "assertion") for n in range(1, 10)])
    smells = SmellsSection(findings=[], counts={"high": 0, "medium": 0, "low": 0}, unparsable=[])
    assert rate(GateConfig(), section, smells, tests=10).level == "strong"


def test_common_high_severity_smells_cap_the_rating_at_weak():
    from auditor.gate import rate
    from auditor.report import SmellsSection

    section = _section([mutant(n, "Killed", "assertion") for n in range(1, 10)])
    smells = SmellsSection(findings=[], counts={"high": 3, "medium": 0, "low": 0}, unparsable=[])
    assert rate(GateConfig(), section, smells, tests=10).level == "weak"


def _section(mutants: list[Mutant]) -> MutationSection:
    from auditor.mutation.scoring import derived_fields

    return MutationSection(
        **derived_fields(mutants, ["t.py::test"]),
        cache_hits=0,
        jobs=1,
        duration=1.0,
        mutants_per_second=5.0,
    )


@pytest.mark.slow
def test_a_kill_by_a_check_names_the_line_of_that_check(shallow):
    report, _ = shallow
    root = Path(report.project.root)
    by_check = [m for m in report.mutation.mutants if m.kill_kind == "assertion"]
    assert by_check
    for found in by_check:
        file = found.killed_by[0].split("::")[0]
        line = (root / file).read_text().splitlines()[found.kills[0].line - 1]
        assert "assert" in line or "raises" in line, (found.id, line)
