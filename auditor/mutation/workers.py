"""The workers of a mutation run: local runner processes or a Dask cluster, and how far
a mutant's child may grow."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from auditor.baseline.stage import kept_whole
from auditor.context import RunContext
from auditor.errors import ConfigError
from auditor.mutation.cache import ResultCache
from auditor.mutation.distributed import DaskPool
from auditor.mutation.executor import PoolSettings, RunnerPool
from auditor.mutation.protocol import BaselineFacts
from auditor.report import BaselineSection


@contextlib.contextmanager
def mutation_pool(run: RunContext) -> Iterator[RunnerPool | DaskPool]:
    """The workers of a mutation run, none started yet (`start_runners`)."""
    with tempfile.TemporaryDirectory(prefix="audit-mutate-") as scratch:
        pool = _pool(run, Path(scratch), run.config.workers)
        try:
            yield pool
        finally:
            pool.close()


def start_runners(run: RunContext, pool: RunnerPool | DaskPool, baseline: BaselineSection) -> None:
    """The baseline is measured: the pool gets its facts, and local runners start at once
    when some mutant will surely need them, so they collect the tests while the caller
    goes on (the smells, planning): all of them on a first run (nothing cached yet), one
    when the tests or the code changed since the baseline was kept (a change's mutants
    may be a handful, and the pool adds runners when the work calls for them; that one
    may have started beside the baseline); a rerun with nothing changed starts them
    only if some mutant has no cached verdict."""
    pool.measured(baseline_facts(baseline, run.config.memory_limit_mb))
    if isinstance(pool, RunnerPool):
        if first_run(run):
            pool.start()
        elif not kept_whole(baseline):
            pool.start(1)


def baseline_facts(baseline: BaselineSection, memory_limit_mb: int) -> BaselineFacts:
    return BaselineFacts(
        deselect=[t.nodeid for t in baseline.tests if t.outcome in ("crashed", "timeout")],
        test_seconds={test.nodeid: test.duration for test in baseline.tests},
        patterns=baseline.compiled_patterns,
        child_growth_limit_mb=child_growth_limit_mb(baseline, memory_limit_mb),
    )


def first_run(run: RunContext) -> bool:
    """Whether no mutant has a cached verdict yet: the first run of this project."""
    cache = ResultCache.of_run(run)
    try:
        return cache.is_empty()
    finally:
        cache.close()


def _pool(run: RunContext, scratch: Path, jobs: int) -> RunnerPool | DaskPool:
    project, config = run.project, run.config
    root = os.path.realpath(project.root)

    def inside(path: Path) -> str:
        return os.path.relpath(os.path.realpath(path), root)

    settings = PoolSettings(
        test_paths=[project.relative(path) for path in project.collect_paths],
        source_files=sorted(inside(path) for path in project.source_files),
        source_roots=[inside(path) for path in project.source_roots],
        allow_write=config.allow_write,
        memory_limit_mb=config.memory_limit_mb,
        isolation=run.isolation,
        pytest_options=project.pytest_options,
    )
    if config.executor == "dask":
        if not config.scheduler:
            raise ConfigError("executor 'dask' needs a scheduler address (--scheduler)")
        return DaskPool(config.scheduler, project.root, settings)
    return RunnerPool(root=Path(root), settings=settings, workdir=scratch, jobs=jobs)


_MIN_CHILD_GROWTH_MB = 16


def child_growth_limit_mb(baseline: BaselineSection, memory_limit_mb: int) -> int:
    """How much a mutant's child may grow beyond its runner: twice what the whole suite
    grew by in the baseline (under coverage, so more than the tests alone need), 16 MB
    at least. A runaway mutant is stopped there, not at the memory limit, so it never
    costs more than its share of the machine."""
    wanted = max(_MIN_CHILD_GROWTH_MB, math.ceil(2 * baseline.memory_growth_mb))
    return min(memory_limit_mb, wanted)
