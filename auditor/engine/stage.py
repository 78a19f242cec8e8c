"""The mutate + execute stages: plan mutants, run them (extreme family first), score."""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import math
import os
import statistics
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from auditor import acceptance
from auditor.checks import assertion_evidence
from auditor.config import AuditConfig
from auditor.context import RunContext
from auditor.discovery import Project
from auditor.engine import scoring, selection
from auditor.engine.cache import ResultCache
from auditor.engine.copies import CopyPool, CopyRun
from auditor.engine.distributed import DaskPool
from auditor.engine.executor import PoolSettings, RunnerPool
from auditor.engine.plan import PlannedMutant, Planner, TimeoutPolicy, plan
from auditor.engine.protocol import Job, JobResult, text_digest
from auditor.engine.readers import ReadIndex
from auditor.engine.type_check import reject_ill_typed
from auditor.engine.verify import verify_sample
from auditor.errors import ConfigError, IncompleteRunError
from auditor.memory import release_freed_memory
from auditor.report import (
    BaselineSection,
    Estimate,
    Kill,
    Mutant,
    MutationScores,
    MutationSection,
    Scope,
)
from auditor.targeted import targeted_files
from mutators.registry import UnknownFamily, operators

BUDGET_GRACE_SECONDS = 10.0
"""How long mutants already running may finish once the time budget is used up."""


def _shared_digest(project: Project, config: AuditConfig) -> str:
    digest = hashlib.sha256()
    for conftest in project.conftest_files:
        digest.update(conftest.read_bytes())
    settings = (config.mutant_timeout_factor, config.mutant_timeout_constant, config.all_killers)
    digest.update(repr(settings).encode())
    return digest.hexdigest()


def planner_for(
    project: Project,
    config: AuditConfig,
    baseline: BaselineSection,
    site_cache: ResultCache | None = None,
) -> Planner:
    """The planner of this run's mutants: the same ids and code for every stage."""
    try:
        chosen = operators(config.mutators, config.disable_mutators)
    except UnknownFamily as exc:
        raise ConfigError(str(exc)) from None
    return Planner(
        project.root,
        baseline,
        chosen,
        TimeoutPolicy(config.mutant_timeout_factor, config.mutant_timeout_constant),
        _shared_digest(project, config),
        module_level=config.module_level,
        sample_data=config.mutate_data == "sample",
        copy_path=config.copy_path,
        site_cache=site_cache,
        read_index=read_index(project),
    )


def read_index(project: Project) -> ReadIndex:
    """Names bound and read across the code under test, the test files, and what the
    tests import beside them (conftests, helpers: any test may read through those)."""
    test_files = set(project.test_files)
    support = {
        path
        for folder in project.test_paths
        for path in (folder.rglob("*.py") if folder.is_dir() else ())
        if path not in test_files
    }
    support.update(project.conftest_files)
    return ReadIndex(project.root, _package_files(project), sorted(test_files), sorted(support))


def _package_files(project: Project) -> list[Path]:
    """The files under test and every other module of their packages: code outside the
    mutated scope reads what it makes too (toolz's `__init__` builds the registry that
    `_signatures.py`'s tables feed, while `[tool.audit] src` names only the modules)."""
    files = set(project.source_files)
    for path in project.source_files:
        for root in project.source_roots:
            if root in path.parents and len(path.relative_to(root).parts) > 1:
                package = root / path.relative_to(root).parts[0]
                files.update(package.rglob("*.py"))
    return sorted(files - set(project.test_files))


def _patch(mutant: PlannedMutant, project: Project) -> dict[str, Any]:
    return {
        "source_digest": text_digest(mutant.source),
        "patch_start": mutant.site.start,
        "patch_end": mutant.site.end,
        "replacement": mutant.site.replacement,
        "rerun_lines": [list(lines) for lines in mutant.rerun_lines],
        "consumers": [
            [
                os.path.realpath(project.root / file),
                project.module_name(project.root / file),
                start,
                end,
            ]
            for file, (start, end) in mutant.consumers
        ],
    }


def _job(mutant: PlannedMutant, module_name: str, project: Project, all_killers: bool) -> Job:
    return Job(
        id=mutant.id,
        path=mutant.path,
        file=os.path.realpath(mutant.abs_path),
        module_name=module_name,
        tests=mutant.tests,
        timeout=mutant.timeout,
        target_line=mutant.target[0],
        target_name=mutant.target[1],
        code_b64=Job.encode_code(zlib.decompress(mutant.function_code))
        if mutant.function_code
        else "",
        **(_patch(mutant, project) if mutant.path != "swap" or mutant.subprocess_reach else {}),
        subprocess_tests=mutant.subprocess_tests,
        serve_subprocesses=bool(mutant.subprocess_reach),
        all_killers=all_killers,
    )


def _copy_result(
    mutant: PlannedMutant, tests: list[str], run: CopyRun, seconds: float
) -> JobResult:
    return JobResult(
        id=mutant.id,
        status="Killed" if run.red else "Survived",
        killed_by=run.failing[:1],
        kill_kind=("assertion" if run.by_check else "error") if run.red else "",
        ran=len(tests),
        duration=round(seconds, 4),
        detail=run.reason,
        on_copy=True,
    )


def _run_on_copies(
    run: RunContext,
    work: list[tuple[PlannedMutant, list[str]]],
    passing: set[str],
    jobs: int,
    on_result: Callable[[JobResult], None],
) -> None:
    """Copy-path mutants, `jobs` at a time, each copy of the project reused."""
    if not work:
        return
    deadline = run.deadline

    def run_on_a_copy(mutant: PlannedMutant, tests: list[str]) -> JobResult | None:
        if deadline is not None and time.monotonic() >= deadline:
            return None
        started = time.perf_counter()
        mutated = mutant.site.apply(mutant.source)
        outcome = copies.run(mutant.file, mutated, tests, passing)
        return _copy_result(mutant, tests, outcome, time.perf_counter() - started)

    with (
        CopyPool(run, size=jobs) as copies,
        ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="audit-copy") as threads,
    ):
        futures = [threads.submit(run_on_a_copy, mutant, tests) for mutant, tests in work]
        try:
            for future in as_completed(futures):
                result = future.result()
                if result is not None:
                    on_result(result)
        except BaseException:
            threads.shutdown(wait=False, cancel_futures=True)
            raise


def _kills(result: JobResult | None, status: str) -> tuple[list[Kill], str]:
    """The tests that failed on the mutant (one, from a copy run or an older cache
    entry, when the result lists none), and how the first did."""
    if result is None:
        return [], ""
    kind = "timeout" if status == "Timeout" else result.kill_kind
    kills = [Kill(test=test, kind=how, line=line) for test, how, line in result.kills]
    if not kills and result.killed_by and kind:
        kills = [Kill(test=result.killed_by[0], kind=kind)]
    return kills, kind


def _to_report(mutant: PlannedMutant, result: JobResult | None, cached: bool) -> Mutant:
    site = mutant.site
    status = mutant.status or (result.status if result else "RuntimeError")
    kills, kind = _kills(result, status)
    return Mutant(
        id=mutant.id,
        file=mutant.file,
        function=site.function,
        operator=site.operator,
        family=site.family,
        line=site.line,
        col=site.col,
        end_line=site.end_line,
        original=site.original,
        replacement=site.replacement,
        description=site.description,
        diff=mutant.diff,
        status=status,
        status_reason=mutant.status_reason or (result.detail if result else ""),
        path=("copy" if result and result.on_copy else mutant.path) if mutant.runnable else "none",
        covered_by=sorted({*mutant.tests, *mutant.subprocess_reach}) if mutant.runnable else [],
        killed_by=[kill.test for kill in kills] or (result.killed_by if result else []),
        kills=kills,
        kill_kind=kind,
        duration=result.duration if result else 0.0,
        cached=cached,
    )


def _mutated_files(project: Project, config: AuditConfig) -> list[Path]:
    """The files of the code under test less those `do_not_mutate` names."""
    return [
        path
        for path in project.source_files
        if not any(fnmatch.fnmatch(project.relative(path), glob) for glob in config.do_not_mutate)
    ]


def _select_scope(
    project: Project, config: AuditConfig, planned: list[PlannedMutant]
) -> tuple[list[PlannedMutant], Scope]:
    if config.diff:
        changed = selection.changed_lines(project.root, config.diff)
        tests = {project.relative(path) for path in project.test_files}
        in_scope = selection.touched_by_diff(planned, changed, tests & set(changed))
        scope = Scope(
            kind="diff",
            diff_ref=config.diff,
            changed_files=sorted(changed),
            changed_lines={
                path: sorted(lines)
                for path, lines in sorted(changed.items())
                if path.endswith(".py")
            },
        )
    elif config.shard:
        shard = selection.Shard.parse(config.shard)
        in_scope = [m for m in planned if shard.holds(m.id)]
        scope = Scope(kind="shard", shard=f"{shard.index}/{shard.total}")
    else:
        in_scope, scope = planned, Scope()
    scope.planned, scope.selected = len(planned), len(in_scope)
    return in_scope, scope


def _pool(
    run: RunContext, baseline: BaselineSection, scratch: Path, jobs: int
) -> RunnerPool | DaskPool:
    project, config = run.project, run.config
    root = os.path.realpath(project.root)

    def inside(path: Path) -> str:
        return os.path.relpath(os.path.realpath(path), root)

    settings = PoolSettings(
        test_paths=[project.relative(path) for path in project.collect_paths],
        deselect=[t.nodeid for t in baseline.tests if t.outcome in ("crashed", "timeout")],
        source_files=sorted(inside(path) for path in project.source_files),
        source_roots=[inside(path) for path in project.source_roots],
        allow_write=config.allow_write,
        memory_limit_mb=config.memory_limit_mb,
        child_growth_limit_mb=child_growth_limit_mb(baseline, config.memory_limit_mb),
        isolation=run.isolation,
    )
    if config.executor == "dask":
        if not config.scheduler:
            raise ConfigError("executor 'dask' needs a scheduler address (--scheduler)")
        return DaskPool(config.scheduler, project.root, settings)
    return RunnerPool(root=Path(root), settings=settings, workdir=scratch, jobs=jobs)


def _estimate(
    in_scope: list[PlannedMutant], results: dict[str, JobResult], config: AuditConfig
) -> Estimate | None:
    """Scores of the whole scope from the sampled verdicts: the share detected among
    covered mutants gets a Wilson interval; the score scales it by the share of valid
    mutants that tests cover (no-coverage mutants are known exactly, they never run)."""
    population = [m for m in in_scope if m.runnable]
    verdicts = [results[m.id].status for m in population if m.id in results]
    detected = sum(status in ("Killed", "Timeout") for status in verdicts)
    covered = detected + sum(status == "Survived" for status in verdicts)
    if not covered:
        return None
    uncovered = sum(m.status == "NoCoverage" for m in in_scope)
    valid_runnable = len(population) * covered / len(verdicts)
    low, high = selection.wilson_interval(detected, covered)
    share = detected / covered

    def score(p: float) -> float:
        return round(100.0 * p * valid_runnable / (valid_runnable + uncovered), 2)

    return Estimate(
        sampled=len(verdicts),
        population=len(population),
        seed=config.sample_seed,
        score=score(share),
        score_low=score(low),
        score_high=score(high),
        covered_score=round(100.0 * share, 2),
        covered_low=round(100.0 * low, 2),
        covered_high=round(100.0 * high, 2),
        survived=round((1 - share) * valid_runnable, 1),
        survived_high=round((1 - low) * valid_runnable, 1),
    )


@contextlib.contextmanager
def mutation_pool(run: RunContext, baseline: BaselineSection) -> Iterator[RunnerPool | DaskPool]:
    """The workers of a mutation run. On a first run (nothing cached) local runners start
    at once, so they collect the tests while the caller goes on (the smells, planning);
    a rerun starts them only if some mutant has no cached verdict."""
    with tempfile.TemporaryDirectory(prefix="audit-mutate-") as scratch:
        pool = _pool(run, baseline, Path(scratch), run.config.workers)
        try:
            if isinstance(pool, RunnerPool) and _first_run(run.project):
                pool.start()
            yield pool
        finally:
            pool.close()


def _first_run(project: Project) -> bool:
    cache = ResultCache(project.root)
    try:
        return cache.is_empty()
    finally:
        cache.close()


def run_mutation(
    run: RunContext,
    baseline: BaselineSection,
    only: set[str] | None = None,
    pool: RunnerPool | DaskPool | None = None,
) -> MutationSection:
    """`only`: run just the mutants with these ids (escalation re-measures survivors).
    `pool`: workers from `mutation_pool`, already starting; by default, new ones."""
    cache = ResultCache(run.project.root)
    try:
        if pool is not None:
            return _mutate(run, baseline, only, cache, pool)
        with mutation_pool(run, baseline) as own_pool:
            return _mutate(run, baseline, only, cache, own_pool)
    finally:
        cache.close()


def _mutate(
    run: RunContext,
    baseline: BaselineSection,
    only: set[str] | None,
    cache: ResultCache,
    pool: RunnerPool | DaskPool,
) -> MutationSection:
    project, config, progress, deadline = run.project, run.config, run.progress, run.deadline
    started = time.perf_counter()
    planner = planner_for(project, config, baseline, cache)
    planned = plan(planner, _mutated_files(project, config))
    in_scope, scope = _select_scope(project, config, planned)
    if only is not None:
        in_scope = [m for m in in_scope if m.id in only]
    type_checked = reject_ill_typed(
        in_scope,
        project.root,
        list(project.source_files),
        config.type_check,
        project.root / ".audit" / "mypy-cache",
    )
    module_names = {str(path): project.module_name(path) for path in project.source_files}
    results: dict[str, JobResult] = {}
    cached: set[str] = set()
    runnable = [m for m in in_scope if m.runnable]
    if config.sample:
        runnable = selection.stratified_sample(runnable, config.sample, config.sample_seed)
    for mutant in runnable:
        hit = cache.get(mutant.cache_key)
        if hit is not None:
            results[mutant.id] = hit
            cached.add(mutant.id)
    to_run = [m for m in runnable if m.id not in results]
    total = len(runnable)
    tally: Counter[str] = Counter(result.status for result in results.values())

    def report_progress() -> None:
        summary = " ".join(f"{status.lower()} {count}" for status, count in sorted(tally.items()))
        progress(len(results), total, summary)

    report_progress()
    by_id = {m.id: m for m in to_run}

    undecided: set[str] = set()
    """Survived, but the subprocesses that run its code never got the mutant."""

    def on_result(result: JobResult) -> None:
        results[result.id] = result
        tally[result.status] += 1
        if result.subprocess_unreached and config.copy_path and not result.on_copy:
            undecided.add(result.id)  # not final: cached after the copy run
        else:
            cache.put(by_id[result.id].cache_key, result)
        report_progress()

    jobs = config.workers

    def within_budget(mutants: list[PlannedMutant]) -> Iterator[PlannedMutant]:
        """Every worker gets one mutant however small the budget: planning and runner
        start-up alone may use it up, and a sampled run needs verdicts to estimate from."""
        for dispatched, mutant in enumerate(mutants):
            if deadline is not None and dispatched >= jobs and time.monotonic() >= deadline:
                return
            yield mutant

    passing = [t.nodeid for t in baseline.tests if t.reliable]
    in_process = [m for m in to_run if m.path != "copy"]
    if deadline is not None:
        # Under a budget any prefix of the run must be a fair sample: no family first.
        order = selection.stratified_order(in_process, config.sample_seed)
    else:
        # The extreme family first: pseudo-tested functions show up before the full run.
        # One stream, so no runner waits for the family's last mutant before the rest.
        order = [m for m in in_process if m.site.family == "extreme"]
        order += [m for m in in_process if m.site.family != "extreme"]
    release_freed_memory()  # the source files' syntax trees, before the long part
    if isinstance(pool, DaskPool):
        jobs = pool.connect()
    interrupted = False
    try:
        pool.run(
            (
                _job(m, module_names[m.abs_path], project, config.all_killers)
                for m in within_budget(order)
            ),
            on_result,
            stop_at=None if deadline is None else deadline + BUDGET_GRACE_SECONDS,
        )
        pool.close()
        # Survivors whose subprocesses the hook could not reach get a copy of the project.
        second_chance = [m for m in in_process if m.id in undecided]
        for mutant in second_chance:
            tally[results.pop(mutant.id).status] -= 1
        work = [(m, m.tests) for m in to_run if m.path == "copy"]
        work += [(m, m.subprocess_reach) for m in second_chance]
        _run_on_copies(run, work, set(passing), jobs, on_result)
    except (KeyboardInterrupt, IncompleteRunError):
        # Ctrl-C: children stopped; every final verdict so far is kept (and cached).
        interrupted = True
        for mutant_id in undecided:
            if mutant_id in results and not results[mutant_id].on_copy:
                del results[mutant_id]  # survived in process: not final
    project_known = _project_known(scope, planned, results, cache)
    stopped_by_budget = any(m.id not in results for m in runnable)
    reported = [m for m in in_scope if not m.runnable or m.id in results]
    mutants, expired = acceptance.apply(
        sorted(
            (_to_report(m, results.get(m.id), m.id in cached) for m in reported),
            key=lambda mutant: mutant.id,
        ),
        {m.file: m.source for m in in_scope},
        acceptance.read_ledger(project.root),
    )
    duration = time.perf_counter() - started
    executed = len(to_run)
    verification = None
    if config.verify_sample:
        planned_by_id = {m.id: m for m in in_scope}
        verification = verify_sample(
            run,
            baseline,
            mutants,
            config.verify_sample,
            lambda mutant_id: planned_by_id[mutant_id].site.apply(planned_by_id[mutant_id].source),
        )
    sampled = config.sample is not None or (stopped_by_budget and config.time_budget is not None)
    return MutationSection(
        **scoring.derived_fields(mutants, passing, targeted_files(project), config.all_killers),
        checks=assertion_evidence(
            mutants, project.root, [project.relative(f) for f in project.test_files]
        ),
        cache_hits=len(cached),
        jobs=jobs,
        duration=round(duration, 3),
        mutants_per_second=round(executed / duration, 2) if duration and executed else 0.0,
        **_overheads([results[m.id] for m in to_run if m.id in results], duration, jobs),
        verification=verification,
        scope=scope,
        estimate=_estimate(in_scope, results, config) if sampled else None,
        project_known=project_known,
        stopped_by_budget=stopped_by_budget and not interrupted,
        interrupted=interrupted,
        data_tables=[planner.data_tables[key] for key in sorted(planner.data_tables)],
        type_check=type_checked,
        expired_acceptances=expired,
    )


def _overheads(ran: list[JobResult], duration: float, jobs: int) -> dict[str, float | None]:
    """A mutant stopped by its timeout spent its whole time in the tests (running until
    they were stopped): that wait is the tests' time, not the engine's."""
    if not ran:
        return {"overhead_ms": None, "child_overhead_ms": None}
    tests_time = sum(
        result.duration if result.status == "Timeout" else result.tests_seconds for result in ran
    )
    in_child = sorted(
        result.duration - result.tests_seconds for result in ran if result.tests_seconds
    )
    return {
        "overhead_ms": round(1000 * (duration * jobs - tests_time) / len(ran), 2),
        "child_overhead_ms": round(1000 * statistics.median(in_child), 2) if in_child else None,
    }


def _project_known(
    scope: Scope,
    planned: list[PlannedMutant],
    results: dict[str, JobResult],
    cache: ResultCache,
) -> MutationScores | None:
    """In diff mode, the whole project's scores over every mutant with a known verdict:
    this run's, earlier runs' (the cache) and the statically known ones."""
    if scope.kind != "diff":
        return None
    known = []
    for mutant in planned:
        result = results.get(mutant.id) or (
            cache.get(mutant.cache_key) if mutant.runnable else None
        )
        if mutant.runnable and result is None:
            continue
        known.append(_to_report(mutant, result, cached=False))
    return scoring.scores(known)


_MIN_CHILD_GROWTH_MB = 16


def child_growth_limit_mb(baseline: BaselineSection, memory_limit_mb: int) -> int:
    """How much a mutant's child may grow beyond its runner: twice what the whole suite
    grew by in the baseline (under coverage, so more than the tests alone need), 16 MB
    at least. A runaway mutant is stopped there, not at the memory limit, so it never
    costs more than its share of the machine."""
    wanted = max(_MIN_CHILD_GROWTH_MB, math.ceil(2 * baseline.memory_growth_mb))
    return min(memory_limit_mb, wanted)
