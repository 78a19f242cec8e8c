"""How many runners a mutation run starts: one while the work is shorter than a runner's
start-up (a change's handful of quick mutants), more once the work left would outlast it.
Real runners over the ledger fixture, each job a real run of its tests."""

from pathlib import Path

import pytest

from auditor.mutation.executor import PoolSettings, RunnerPool
from auditor.mutation.protocol import Job, JobResult

TESTS = [
    "tests_strong/test_accounts.py::test_normal_balance_side[Kind.ASSET-True]",
    "tests_strong/test_accounts.py::test_normal_balance_side[Kind.EXPENSE-True]",
]


def _run(root: Path, workdir: Path, jobs: int, seconds_per_test: float) -> tuple[int, list[str]]:
    """Run `jobs` jobs of the two tests on a pool of two workers, the baseline saying each
    test took `seconds_per_test`: the runners started, and the verdicts."""
    settings = PoolSettings(
        test_paths=["tests_strong"],
        deselect=[],
        source_files=["ledger/accounts.py"],
        source_roots=["."],
        allow_write=[],
        memory_limit_mb=4096,
        child_growth_limit_mb=1024,
        test_seconds=dict.fromkeys(TESTS, seconds_per_test),
    )
    pool = RunnerPool(root=root, settings=settings, workdir=workdir, jobs=2)
    # The subprocess path mutates nothing in the child itself: the tests run as they are.
    work = [
        Job(
            id=f"m{n}",
            path="subprocess",
            file=str(root / "ledger" / "accounts.py"),
            module_name="ledger.accounts",
            tests=TESTS,
            timeout=30.0,
        )
        for n in range(jobs)
    ]
    results: list[JobResult] = []
    try:
        pool.run(work, results.append)
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
