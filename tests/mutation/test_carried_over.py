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


CALLEE = "def g(x):\n    return x * 2\n"
SLOW_F = f"""\
import time

from calc import f


def test_f_slowly():
    time.sleep({SLOW})
    f(1)
"""
MIXED = "from calc import f\nfrom other import g\n\n\ndef test_f_and_g():\n    g(3)\n    f(1)\n"


@pytest.mark.slow
def test_an_edited_function_reruns_only_the_tests_that_run_it(tmp_path):
    """`g` rewritten: of `f`'s two tests only the one that also runs `g` runs again on
    `f`'s survivors; the slow one that never calls `g` keeps its earlier outcome."""
    files = {"test_slow.py": SLOW_F, "test_mixed.py": MIXED}
    root = one_module_project(tmp_path / "calc", "calc", "def f(x):\n    return x + 1\n", files)
    (root / "other.py").write_text(CALLEE)
    (root / "pyproject.toml").write_text(
        (root / "pyproject.toml").read_text() + '\n[tool.audit]\nsrc = ["calc.py", "other.py"]\n'
    )
    _mutation(root)
    (root / "other.py").write_text(CALLEE.replace("x * 2", "2 * x"))

    mutation = _mutation(root)

    of_f = [m for m in mutation["mutants"] if m["id"].startswith("calc.py::f::")]
    survivors = [m for m in of_f if m["status"] == "Survived"]
    assert survivors
    assert mutation["carried_over"] == len([m for m in of_f if m["status"] != "Ignored"])
    assert all(m["duration"] < SLOW for m in survivors)
    assert _verdicts(mutation) == _verdicts(_cold(root))
