"""How many runners a mutation run starts: one while the work is shorter than a runner's
start-up (a change's handful of quick mutants), more once the work left would outlast it.
Real runners over the ledger fixture, each job a real run of its tests."""

import time
from pathlib import Path

import pytest

from auditor.mutation.executor import PoolSettings, RunnerPool
from auditor.mutation.protocol import BaselineFacts, Job, JobResult

WAIT_FOR_THE_BASELINE = 4.0
"""Seconds the baseline takes in the check of a runner started beside it: several times
a runner's own start-up on the ledger fixture."""

TESTS = [
    "tests_strong/test_accounts.py::test_normal_balance_side[Kind.ASSET-True]",
    "tests_strong/test_accounts.py::test_normal_balance_side[Kind.EXPENSE-True]",
]


def _settings(facts: BaselineFacts | None) -> PoolSettings:
    return PoolSettings(
        test_paths=["tests_strong"],
        source_files=["ledger/accounts.py"],
        source_roots=["."],
        allow_write=[],
        memory_limit_mb=4096,
        facts=facts,
    )


def _facts(seconds_per_test: float) -> BaselineFacts:
    return BaselineFacts(
        test_seconds=dict.fromkeys(TESTS, seconds_per_test), child_growth_limit_mb=1024
    )


def _jobs(root: Path, count: int) -> list[Job]:
    # The subprocess path mutates nothing in the child itself: the tests run as they are.
    return [
        Job(
            id=f"m{n}",
            path="subprocess",
            file=str(root / "ledger" / "accounts.py"),
            module_name="ledger.accounts",
            tests=TESTS,
            timeout=30.0,
        )
        for n in range(count)
    ]


def _run(root: Path, workdir: Path, jobs: int, seconds_per_test: float) -> tuple[int, list[str]]:
    """Run `jobs` jobs of the two tests on a pool of two workers, the baseline saying each
    test took `seconds_per_test`: the runners started, and the verdicts."""
    pool = RunnerPool(
        root=root, settings=_settings(_facts(seconds_per_test)), workdir=workdir, jobs=2
    )
    results: list[JobResult] = []
    try:
        pool.run(_jobs(root, jobs), results.append)
    finally:
        pool.close()
    return pool.started_runners, sorted(result.status for result in results)


@pytest.mark.slow
def test_a_few_quick_mutants_are_run_by_one_runner(project_copy, tmp_path):
    started, verdicts = _run(project_copy("ledger"), tmp_path, jobs=3, seconds_per_test=0.001)
    assert started == 1
    assert verdicts == ["Survived"] * 3


@pytest.mark.slow
def test_work_that_would_outlast_a_runner_start_up_starts_the_others(project_copy, tmp_path):
    started, verdicts = _run(project_copy("ledger"), tmp_path, jobs=4, seconds_per_test=30.0)
    assert started == 2
    assert verdicts == ["Survived"] * 4


@pytest.mark.slow
def test_a_runner_started_before_the_baseline_ended_counts_only_its_own_start_up(
    project_copy, tmp_path
):
    """It collects the tests, then waits for the baseline's facts; the start-up that
    decides whether another runner pays leaves the wait out."""
    root = project_copy("ledger")
    pool = RunnerPool(root=root, settings=_settings(None), workdir=tmp_path, jobs=2)
    results: list[JobResult] = []
    try:
        pool.start(1)
        time.sleep(WAIT_FOR_THE_BASELINE)
        pool.measured(_facts(0.001))
        pool.run(_jobs(root, 1), results.append)
        startup = pool.runners[0].startup
    finally:
        pool.close()
    assert [result.status for result in results] == ["Survived"]
    assert 0 < startup < WAIT_FOR_THE_BASELINE
