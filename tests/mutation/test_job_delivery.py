"""How jobs reach the runners: a job larger than a pipe (a module mutant's thousand
tests) waits for its runner to read it without holding the pool, so the other runners
are kept supplied meanwhile. Real runners, each job a real run of its tests."""

from pathlib import Path

import pytest

from auditor.mutation.executor import PoolSettings, RunnerPool
from auditor.mutation.protocol import BaselineFacts, Job, JobResult
from tests.conftest import one_module_project

TESTS = """\
import time

from lib import add


def test_slow():
    time.sleep(8)
    assert add(1, 2) == 3


def test_quick():
    assert add(1, 2) == 3
"""

SLOW = "tests/test_lib.py::test_slow"
QUICK = "tests/test_lib.py::test_quick"
PADDING = [f"tests/test_lib.py::test_not_collected_{n:05}" for n in range(5000)]
"""Ids the runner does not have: they make a job far larger than a pipe holds (64 KB)
without adding a test to run."""


def _job(name: str, root: Path, tests: list[str]) -> Job:
    # The subprocess path mutates nothing in the child itself: the tests run as they are.
    return Job(
        id=name,
        path="subprocess",
        file=str(root / "lib.py"),
        module_name="lib",
        tests=tests,
        timeout=30.0,
    )


@pytest.mark.slow
def test_a_job_larger_than_a_pipe_does_not_keep_the_other_runner_waiting(tmp_path):
    root = one_module_project(tmp_path, "lib", "def add(a, b):\n    return a + b\n", {})
    (root / "tests" / "test_lib.py").write_text(TESTS)
    settings = PoolSettings(
        test_paths=["tests"],
        source_files=["lib.py"],
        source_roots=["."],
        allow_write=[],
        memory_limit_mb=4096,
        facts=BaselineFacts(test_seconds={SLOW: 8.0, QUICK: 0.001}, child_growth_limit_mb=1024),
    )
    pool = RunnerPool(root=root, settings=settings, workdir=tmp_path / "work", jobs=2)
    # The first runner to be ready takes the slow job and, queued behind it, the large
    # one, which it reads only once the slow job is done.
    quick = [f"quick-{n}" for n in range(6)]
    work = [
        _job("slow", root, [SLOW]),
        _job("large", root, [QUICK, *PADDING]),
        *(_job(name, root, [QUICK]) for name in quick),
    ]
    answered: list[JobResult] = []
    try:
        pool.start()
        pool.run(work, answered.append)
    finally:
        pool.close()
    order = [result.id for result in answered]
    assert {result.status for result in answered} == {"Survived"}
    assert set(order[:6]) == set(quick)
    assert order[6:] == ["slow", "large"]
