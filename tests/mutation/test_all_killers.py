"""`--all-killers`: every covering test of a killed mutant runs, so each test's own
kills, unique kills and the tests that carry the suite are known."""

from __future__ import annotations

import json

import pytest

from auditor.mutation.runner import _verdict
from auditor.report import Report
from tests.conftest import copy_fixture, run_audit


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Report]:
    root = tmp_path_factory.mktemp("killers") / "shop"
    copy_fixture("shop", root)
    # The two runs are compared verdict by verdict: a loaded machine must not turn a
    # kill in 20 ms into a timeout in one of them.
    config = (root / "pyproject.toml").read_text()
    config = config.replace("[tool.audit]\n", "[tool.audit]\nmutant_timeout_constant = 20\n")
    (root / "pyproject.toml").write_text(config)
    reports = {}
    for name, flags in (("first", []), ("all", ["--all-killers"])):
        result = run_audit(
            "tests_strong", "--no-probes", "--json", f"{name}.json", *flags, cwd=root
        )
        assert result.returncode == 0, result.stderr
        reports[name] = Report.read(root / f"{name}.json")
    return reports


@pytest.mark.slow
def test_asking_for_all_killers_changes_no_verdict(runs):
    first = {m.id: m.status for m in runs["first"].mutation.mutants}
    assert {m.id: m.status for m in runs["all"].mutation.mutants} == first


@pytest.mark.slow
def test_every_test_that_fails_on_a_mutant_is_named(runs):
    several = [m for m in runs["all"].mutation.mutants if len(m.killed_by) > 1]
    assert several
    for mutant in several:
        assert [kill.test for kill in mutant.kills] == mutant.killed_by
    assert all(len(m.killed_by) <= 1 for m in runs["first"].mutation.mutants)


@pytest.mark.slow
def test_unique_kills_are_the_mutants_only_that_test_kills(runs):
    mutation = runs["all"].mutation
    for test in mutation.tests:
        alone = [m for m in mutation.mutants if m.killed_by == [test.nodeid]]
        assert test.unique_kills == len(alone)
    assert any(test.unique_kills for test in mutation.tests)


@pytest.mark.slow
def test_the_carrying_tests_kill_every_mutant_the_suite_kills(runs):
    mutation = runs["all"].mutation
    carrying = set(mutation.carrying)
    killed = [m for m in mutation.mutants if m.status == "Killed"]
    assert all(carrying & set(m.killed_by) for m in killed)
    assert len(carrying) < len(mutation.tests)


@pytest.mark.slow
def test_a_subsumed_test_kills_nothing_its_subsumer_does_not(runs):
    mutation = runs["all"].mutation
    kills: dict[str, set[str]] = {}
    for mutant in mutation.mutants:
        for test in mutant.killed_by:
            kills.setdefault(test, set()).add(mutant.id)
    subsumed = [t for t in mutation.tests if t.subsumed_by]
    assert subsumed
    for test in subsumed:
        assert kills[test.nodeid] <= kills[test.subsumed_by]


def test_a_later_test_that_hangs_after_a_kill_leaves_the_mutant_killed():
    messages = [
        {"start": "t.py::test_a"},
        {"killed_by": "t.py::test_a", "kill_kind": "assertion", "tests": 0.1, "at": 3},
        {"start": "t.py::test_b"},
    ]
    output = "".join(json.dumps(m) + "\n" for m in messages).encode()
    verdict = _verdict("m", output, past="no verdict within 5.0s", wait_status=9, duration=5.0)
    assert verdict["status"] == "Killed"
    assert verdict["kills"] == [("t.py::test_a", "assertion", 3)]
    assert verdict["detail"] == "a later test ran past its allowance: no verdict within 5.0s"


def test_a_kill_reported_just_before_the_timeout_keeps_its_own_detail():
    """On a loaded machine the child may still be exiting when the timeout comes: no
    test ran after the kill, so the timeout says nothing about the tests."""
    messages = [
        {"start": "t.py::test_a"},
        {"killed_by": "t.py::test_a", "kill_kind": "error", "detail": "KeyError", "at": 3},
    ]
    output = "".join(json.dumps(m) + "\n" for m in messages).encode()
    verdict = _verdict("m", output, past="no verdict within 2.1s", wait_status=9, duration=2.2)
    assert verdict["status"] == "Killed"
    assert verdict["detail"] == "KeyError"


def test_a_later_marked_test_that_hangs_after_a_kill_leaves_the_mutant_killed():
    kill = {"killed_by": "t.py::test_a", "kill_kind": "assertion", "tests": 0.1, "at": 3}
    output = (json.dumps(kill) + "\n").encode()
    marked = ("t.py::test_a", "t.py::test_b")
    verdict = _verdict("m", output, "no verdict within 5.0s", 9, 5.0, marked)
    assert verdict["status"] == "Killed"
    assert verdict["detail"] == "a later test ran past its allowance: no verdict within 5.0s"


@pytest.mark.slow
def test_the_dominator_score_counts_one_mutant_per_minimal_set_of_killers(runs):
    mutation = runs["all"].mutation
    sets = {frozenset(m.killed_by) for m in mutation.mutants if m.status == "Killed"}
    minimal = [s for s in sets if not any(other < s for other in sets)]
    assert mutation.dominators == len(minimal)
    survived = mutation.scores.counts.survived
    assert mutation.dominator_score == round(100 * len(minimal) / (len(minimal) + survived), 2)
    assert runs["first"].mutation.dominators is None


@pytest.mark.slow
def test_a_strong_suite_gets_no_evidence_smell(runs):
    assert not [s for s in runs["all"].smells.findings if s.code == "AT022"]
