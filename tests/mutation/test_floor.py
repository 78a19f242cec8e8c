"""The physical floor: the tests' own time up to the first kill, plus one fork each,
over the workers; a child stopped inside a test counts what the original needs."""

import pytest

from auditor.mutation.estimates import physical_floor
from auditor.mutation.protocol import JobResult

TEST_SECONDS = {"t.py::test_a": 0.1, "t.py::test_b": 2.0, "t.py::test_c": 4.0}


def test_a_killed_mutant_counts_its_tests_time_until_the_kill_and_its_fork():
    result = JobResult("m", "Killed", ran=1, tests_seconds=0.05, fork_seconds=0.002)
    floor = physical_floor([(list(TEST_SECONDS), result)], TEST_SECONDS, jobs=1)
    assert floor == pytest.approx(0.052)


def test_a_timed_out_mutant_counts_the_baseline_time_of_the_tests_it_started():
    result = JobResult("m", "Timeout", ran=2, fork_seconds=0.0)
    floor = physical_floor([(list(TEST_SECONDS), result)], TEST_SECONDS, jobs=1)
    assert floor == pytest.approx(2.1)


def test_the_floor_is_shared_by_the_workers():
    results = [
        (["t.py::test_a"], JobResult(str(n), "Survived", ran=1, tests_seconds=1.0))
        for n in range(4)
    ]
    assert physical_floor(results, TEST_SECONDS, jobs=2) == pytest.approx(2.0)


def test_no_mutant_run_has_no_floor():
    assert physical_floor([], TEST_SECONDS, jobs=2) is None
