"""How long a mutant's tests may run: the baseline's time, scaled, and the original
code's time in a child like the mutant's where a mutant runs past that."""

import re

import pytest

from auditor.config import AuditConfig
from auditor.mutation.protocol import ORIGINAL_TIMING_LIMIT, Job
from tests.conftest import one_module_mutants


def _job(timeout: float) -> Job:
    return Job(
        id="m",
        path="swap",
        file="f.py",
        module_name="f",
        tests=["t.py::test_a"],
        timeout=timeout,
        timeout_factor=3.0,
        timeout_constant=0.5,
    )


def test_a_job_gets_its_timeout_until_the_original_code_is_timed():
    assert _job(0.6).allowed(None) == 0.6


def test_an_original_slower_in_a_child_than_in_the_baseline_gives_the_mutant_longer():
    assert _job(0.6).allowed(1.0) == pytest.approx(3.5)


def test_an_original_faster_in_a_child_never_shortens_the_timeout():
    assert _job(0.6).allowed(0.01) == 0.6


def test_a_job_lasts_at_most_its_timeout_and_what_timing_the_original_can_add():
    job = _job(0.6)
    timings = [0.0, ORIGINAL_TIMING_LIMIT / 2, ORIGINAL_TIMING_LIMIT]
    # Whatever the original's timing took (up to its limit), the child's allowance after
    # it fits in the job's longest; and the longest is no more than the three together.
    assert all(timed + job.allowed(timed) <= job.longest() for timed in timings)
    assert job.longest() <= job.timeout + ORIGINAL_TIMING_LIMIT + job.allowed(ORIGINAL_TIMING_LIMIT)


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
def test_a_mutant_that_loops_forever_is_stopped_soon_after_the_original_code_would_end(
    tmp_path,
):
    spin = "def spin(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    test = "from spin import spin\n\n\ndef test_spin():\n    assert spin(3) == 3\n"
    mutants = one_module_mutants(tmp_path, "spin", spin, test, "augmented")
    looping = [m for m in mutants if m["status"] == "Timeout"]
    assert looping
    # What it is allowed follows the test's own time (a factor of it plus the constant),
    # not the per-test timeout a hung test of the suite would get.
    policy = AuditConfig()
    allowed = [float(re.search(r"within ([0-9.]+)s", m["status_reason"])[1]) for m in looping]
    assert len(allowed) == len(looping)
    assert max(allowed) < policy.test_timeout / 2
    assert min(allowed) >= policy.mutant_timeout_constant
