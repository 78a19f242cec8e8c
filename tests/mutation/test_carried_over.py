"""A mutant's earlier verdict is carried over when only its tests changed: the tests
added or changed since run, and the verdicts equal a cold run's."""

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import one_module_project, run_audit

CODE = """\
def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x
"""

SLOW = 0.6
"""Seconds the weak test sleeps: a mutant that runs it takes at least as long."""

WEAK = f"""\
import time

from calc import clamp


def test_low():
    assert clamp(-1, 0, 10) == 0


def test_runs_without_checking():
    time.sleep({SLOW})
    clamp(5, 0, 10)
"""

HIGH = "from calc import clamp\n\n\ndef test_high():\n    assert clamp(11, 0, 10) == 10\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return one_module_project(tmp_path / "calc", "calc", CODE, {"test_weak.py": WEAK})


def _mutation(root: Path) -> dict:
    out = root.parent / f"{root.name}.json"
    done = run_audit("tests", "--no-probes", "--json", str(out), cwd=root)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())["mutation"]


def _cold(root: Path) -> dict:
    """The same tree audited with no `.audit/` of its own."""
    copy = root.parent / "cold"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".audit"))
    return _mutation(copy)


def _tests(mutation: dict, mutant: dict) -> list[str]:
    """The mutant's tests, as the JSON stores them (each set of tests once)."""
    if mutant["coverage"] < 0:
        return []
    return [mutation["covering_tests"][i] for i in mutation["coverage_sets"][mutant["coverage"]]]


def _verdicts(mutation: dict) -> dict[str, tuple[str, list[str]]]:
    return {m["id"]: (m["status"], m["killed_by"]) for m in mutation["mutants"]}


@pytest.mark.slow
def test_an_added_test_file_runs_alone_on_the_mutants_it_covers(project):
    earlier = _verdicts(_mutation(project))
    (project / "tests" / "test_high.py").write_text(HIGH)

    mutation = _mutation(project)

    covered = [
        m for m in mutation["mutants"] if "tests/test_high.py::test_high" in _tests(mutation, m)
    ]
    judged_before = [m for m in covered if earlier[m["id"]][0] in ("Killed", "Survived")]
    survived_before = [m for m in covered if earlier[m["id"]][0] == "Survived"]
    assert survived_before
    assert mutation["carried_over"] == len(judged_before)
    assert all(m["duration"] < SLOW for m in survived_before)
    assert _verdicts(mutation) == _verdicts(_cold(project))


@pytest.mark.slow
def test_a_test_that_kills_a_survivor_now_is_its_killer(project):
    _mutation(project)
    (project / "tests" / "test_high.py").write_text(HIGH)

    mutation = _mutation(project)

    killers = {test for m in mutation["mutants"] for test in m["killed_by"]}
    assert "tests/test_high.py::test_high" in killers
    assert _verdicts(mutation) == _verdicts(_cold(project))


@pytest.mark.slow
def test_a_changed_test_file_runs_every_test_again(project):
    _mutation(project)
    stronger = WEAK.replace("    clamp(5, 0, 10)\n", "    assert clamp(5, 0, 10) == 5\n")
    (project / "tests" / "test_weak.py").write_text(stronger)

    mutation = _mutation(project)

    assert mutation["carried_over"] == 0
    assert _verdicts(mutation) == _verdicts(_cold(project))
