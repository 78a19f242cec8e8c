"""What the type check saved: its rejected mutants, had they run, each as long as the
killed mutants nearest to it (its function, else its file, else the run) took."""

import pytest

from auditor.mutation.estimates import type_check_saving
from tests.conftest import a_mutant


def _killed(mutant_id: str, seconds: float, file: str = "pkg/m.py", function: str = "f"):
    return a_mutant(mutant_id, status="Killed", duration=seconds, file=file, function=function)


def _rejected(mutant_id: str, file: str = "pkg/m.py", function: str = "f"):
    return a_mutant(mutant_id, status="CompileError", file=file, function=function)


def test_a_rejected_mutant_costs_the_mean_of_its_function_s_killed_mutants():
    mutants = [_killed("k1", 0.2), _killed("k2", 0.4), _killed("k3", 9.0, function="g")]
    saved = type_check_saving([*mutants, _rejected("r")], {"r"}, jobs=1)
    assert saved == pytest.approx(0.3)


def test_without_a_killed_mutant_in_its_function_its_file_s_count():
    mutants = [_killed("k1", 0.5, function="g"), _killed("k2", 8.0, file="pkg/other.py")]
    saved = type_check_saving([*mutants, _rejected("r")], {"r"}, jobs=1)
    assert saved == pytest.approx(0.5)


def test_without_a_killed_mutant_in_its_file_the_run_s_count():
    mutants = [_killed("k1", 1.0, file="pkg/a.py"), _killed("k2", 3.0, file="pkg/b.py")]
    saved = type_check_saving([*mutants, _rejected("r", file="pkg/c.py")], {"r"}, jobs=1)
    assert saved == pytest.approx(2.0)


def test_the_saving_is_shared_by_the_workers():
    mutants = [_killed("k", 1.0), *(_rejected(f"r{n}") for n in range(4))]
    assert type_check_saving(mutants, {f"r{n}" for n in range(4)}, jobs=2) == pytest.approx(2.0)


def test_nothing_rejected_or_nothing_killed_has_no_estimate():
    assert type_check_saving([_killed("k", 1.0)], set(), jobs=1) is None
    assert type_check_saving([_rejected("r")], {"r"}, jobs=1) is None
