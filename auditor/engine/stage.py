"""The mutation stage, orchestrated: plan the mutants, select the scope, take cached
verdicts, run the rest on the workers (and the copy path), score and report."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from auditor import acceptance
from auditor.checks import assertion_evidence
from auditor.context import RunContext
from auditor.engine import scoring, selection
from auditor.engine.cache import ResultCache
from auditor.engine.copies import run_on_copies
from auditor.engine.distributed import DaskPool
from auditor.engine.estimates import estimate, overheads
from auditor.engine.executor import RunnerPool
from auditor.engine.jobs import job_for
from auditor.engine.plan import PlannedMutant, plan, planner_for
from auditor.engine.protocol import Job, JobResult
from auditor.engine.type_check import reject_ill_typed
from auditor.engine.verdicts import to_report
from auditor.engine.verify import verify_sample
from auditor.engine.workers import mutation_pool
from auditor.errors import IncompleteRunError
from auditor.memory import release_freed_memory
from auditor.report import (
    BaselineSection,
    MutationScores,
    MutationSection,
    Scope,
)
from auditor.targeted import targeted_files

BUDGET_GRACE_SECONDS = 10.0
"""How long mutants already running may finish once the time budget is used up."""


@dataclass(frozen=True)
class MutationRun:
    """The stage's section, and each survivor's job as the executor ran it: what a later
    stage needs to run the mutant again (the probes' witness searches) without planning
    its file again."""

    section: MutationSection
    survivors: Mapping[str, Job] = field(default_factory=dict)


def run_mutation(
    run: RunContext,
    baseline: BaselineSection,
    only: set[str] | None = None,
    pool: RunnerPool | DaskPool | None = None,
) -> MutationRun:
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
) -> MutationRun:
    project, config, progress, deadline = run.project, run.config, run.progress, run.deadline
    started = time.perf_counter()
    planner = planner_for(project, config, baseline, cache)
    planned = plan(planner, selection.mutated_files(project, config))
    in_scope, scope = selection.select_scope(project, config, planned)
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
            (job_for(m, module_names[m.abs_path], project, config) for m in within_budget(order)),
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
        run_on_copies(run, work, set(passing), jobs, on_result)
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
            (to_report(m, results.get(m.id), m.id in cached) for m in reported),
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
    survived = {mutant.id for mutant in mutants if mutant.status == "Survived"}
    survivors = {
        m.id: job_for(m, module_names[m.abs_path], project, config)
        for m in in_scope
        if m.id in survived
    }
    section = MutationSection(
        **scoring.derived_fields(mutants, passing, targeted_files(project), config.all_killers),
        checks=assertion_evidence(
            mutants, project.root, [project.relative(f) for f in project.test_files]
        ),
        cache_hits=len(cached),
        jobs=jobs,
        duration=round(duration, 3),
        mutants_per_second=round(executed / duration, 2) if duration and executed else 0.0,
        **overheads([results[m.id] for m in to_run if m.id in results], duration, jobs),
        verification=verification,
        scope=scope,
        estimate=estimate(in_scope, results, config) if sampled else None,
        project_known=project_known,
        stopped_by_budget=stopped_by_budget and not interrupted,
        interrupted=interrupted,
        data_tables=[planner.data_tables[key] for key in sorted(planner.data_tables)],
        type_check=type_checked,
        expired_acceptances=expired,
    )
    return MutationRun(section, survivors)


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
        known.append(to_report(mutant, result, cached=False))
    return scoring.scores(known)
