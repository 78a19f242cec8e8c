"""How much a mutant's child may grow before it is stopped as a runaway."""

from auditor.mutation.workers import child_growth_limit_mb
from auditor.report import BaselineSection


def baseline(memory_growth_mb: float) -> BaselineSection:
    return BaselineSection(
        tests=[],
        collection_errors=[],
        passed=0,
        excluded=0,
        restarts=0,
        import_time_lines={},
        memory_growth_mb=memory_growth_mb,
    )


def test_a_child_may_grow_twice_what_the_suite_grew_by_in_the_baseline():
    assert child_growth_limit_mb(baseline(100.4), memory_limit_mb=4096) == 201


def test_a_child_of_a_suite_that_barely_grows_may_still_grow_16_mb():
    assert child_growth_limit_mb(baseline(0.8), memory_limit_mb=4096) == 16


def test_a_child_never_may_grow_beyond_the_memory_limit():
    assert child_growth_limit_mb(baseline(3000.0), memory_limit_mb=4096) == 4096
