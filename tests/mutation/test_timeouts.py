"""How long a mutant's tests may run: the baseline's time, scaled, and the original
code's time in a child like the mutant's where a mutant runs past that."""

import dataclasses
import re

import pytest

from auditor.config import AuditConfig
from auditor.mutation.protocol import ORIGINAL_TIMING_LIMIT, Job, TestBudget, wall_allowed
from tests.conftest import one_module_mutants


def _job(timeout: float, tests: int = 1) -> Job:
    return Job(
        id="m",
        path="swap",
        file="f.py",
        module_name="f",
        tests=[f"t.py::test_{n}" for n in range(tests)],
        timeout=timeout,
        timeout_factor=3.0,
        timeout_constant=0.5,
    )


def test_each_test_gets_its_own_time_scaled_from_its_start():
    budget = TestBudget(_job(9.5, tests=2), baseline=(0.01, 3.0))
    assert budget.cpu(0) == pytest.approx(0.53)
    assert budget.cpu(1) == pytest.approx(9.5)


def test_before_its_first_test_a_child_has_the_whole_job_s_timeout():
    assert TestBudget(_job(9.5, tests=2), baseline=(0.01, 3.0)).cpu(-1) == 9.5


def test_an_original_slower_in_a_child_than_in_the_baseline_gives_the_test_longer():
    budget = TestBudget(_job(0.6), baseline=(0.03,), original=(1.0,))
    assert budget.cpu(0) == pytest.approx(3.5)


def test_an_original_faster_in_a_child_never_shortens_a_test_s_allowance():
    budget = TestBudget(_job(0.6), baseline=(0.03,), original=(0.001,))
    assert budget.cpu(0) == pytest.approx(0.59)


def test_a_job_without_a_factor_has_its_timeout_for_the_whole_child():
    job = dataclasses.replace(_job(2.0, tests=2), timeout_factor=0.0)
    assert TestBudget(job, baseline=(0.01, 0.01)).cpu(1) == 2.0


def test_a_job_lasts_at_most_its_wall_time_and_what_timing_the_original_can_add():
    job = _job(0.6)
    timings = [0.0, ORIGINAL_TIMING_LIMIT / 2, ORIGINAL_TIMING_LIMIT]
    # Whatever the original's timing took (up to its limit), the child's wall time after
    # it fits in the job's longest.
    allowed = [TestBudget(job, (0.03,), (timed,)).cpu(0) for timed in timings]
    assert all(
        timed + wall_allowed(cpu) <= job.longest()
        for timed, cpu in zip(timings, allowed, strict=True)
    )


LAZY = '''\
import time

FACTOR = 2
_loaded = []


def load():
    """What a lazy import costs: paid once per process."""
    if not _loaded:
        time.sleep(1.0)
        _loaded.append(True)


def first():
    load()
    return 1


def double(x):
    load()
    return x * FACTOR
'''

LAZY_TESTS = """\
from lazy import double, first


def test_a_first():
    assert first() == 1


def test_double():
    assert double(3) == 6
"""


@pytest.mark.slow
def test_a_cost_the_baseline_charged_to_another_test_is_no_timeout(tmp_path):
    # In the baseline test_a_first pays the second of `load`; in a mutant's child of
    # `double` test_double runs alone and pays it, far past its own baseline time.
    mutants = one_module_mutants(tmp_path, "lazy", LAZY, LAZY_TESTS, "arithmetic,constants")
    # `FACTOR = 2` runs again in the child (the module path), and so it does, unchanged,
    # where the runner times the original code.
    read_by_double = [m for m in mutants if m["function"] == "double" or m["line"] == 3]
    assert {m["path"] for m in read_by_double} == {"swap", "module"}
    assert {(m["status"], m["kill_kind"]) for m in read_by_double} == {("Killed", "assertion")}


@pytest.mark.slow
def test_a_mutant_that_loops_forever_is_stopped_by_the_cpu_time_it_burns(tmp_path):
    spin = "def spin(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    test = "from spin import spin\n\n\ndef test_spin():\n    assert spin(3) == 3\n"
    mutants = one_module_mutants(tmp_path, "spin", spin, test, "augmented")
    looping = [m for m in mutants if m["status"] == "Timeout"]
    assert looping
    # What it is allowed follows the test's own time (a factor of it plus the constant),
    # in CPU seconds, not the per-test timeout a hung test of the suite would get.
    policy = AuditConfig()
    pattern = r"^more than ([0-9.]+)s of CPU time \(running tests/test_spin.py::test_spin\)$"
    allowed = [float(re.match(pattern, m["status_reason"])[1]) for m in looping]
    assert len(allowed) == len(looping)
    assert max(allowed) < policy.test_timeout / 2
    assert min(allowed) >= policy.mutant_timeout_constant


SLOW_WHEN_TRACED = """\
import time

import coverage

from spin import spin


def test_spin():
    if coverage.Coverage.current() is not None:
        # What coverage's tracing costs a tight loop: here, in the baseline only.
        end = time.process_time() + 1.5
        while time.process_time() < end:
            pass
    assert spin(3) == 3
"""


@pytest.mark.slow
def test_a_hang_in_a_test_slowed_by_tracing_is_stopped_at_the_test_s_untraced_cost(tmp_path):
    spin = "def spin(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    mutants = one_module_mutants(tmp_path, "spin", spin, SLOW_WHEN_TRACED, "augmented")
    looping = [m for m in mutants if m["status"] == "Timeout"]
    assert looping
    # The baseline's 1.5 s would allow 3 x 1.5 s; the test alone, untraced, takes a
    # fraction of a second, and so does a hang's allowance in it.
    pattern = r"^more than ([0-9.]+)s of CPU time \(running tests/test_spin.py::test_spin\)$"
    allowed = [float(re.match(pattern, m["status_reason"])[1]) for m in looping]
    assert len(allowed) == len(looping)
    assert max(allowed) < 1.0


STALLS = "def add(a, b):\n    return a + b\n"

STALLS_ONCE = """\
import tempfile
import time
from pathlib import Path

from stalls import add


def test_add():
    result = add(2, 3)
    marker = Path(tempfile.gettempdir()) / "stalled-once"
    if result != 5 and not marker.exists():
        # A mutant's first child waits as a machine's stall would make it wait.
        marker.write_text("")
        time.sleep(60)
    assert result == 5
"""


@pytest.mark.slow
def test_a_child_stopped_once_by_the_wall_backstop_is_judged_by_a_second(tmp_path):
    mutants = one_module_mutants(tmp_path, "stalls", STALLS, STALLS_ONCE, "arithmetic")
    assert [(m["status"], m["kill_kind"]) for m in mutants] == [("Killed", "assertion")]


@pytest.mark.slow
def test_a_mutant_whose_every_child_waits_is_a_timeout_of_the_wall_backstop(tmp_path):
    waits = STALLS_ONCE.replace("and not marker.exists()", "")
    mutants = one_module_mutants(tmp_path, "stalls", STALLS, waits, "arithmetic")
    assert [m["status"] for m in mutants] == ["Timeout"]
    assert re.match(r"^no verdict within [0-9.]+s \(running ", mutants[0]["status_reason"])
