"""The mutation stage, orchestrated: plan the mutants, select the scope, take cached
verdicts, run the rest on the workers (and the copy path), score and report."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from auditor.containment.memory import release_freed_memory
from auditor.context import RunContext
from auditor.discovery.targeted import targeted_files
from auditor.errors import IncompleteRunError
from auditor.evidence import acceptance
from auditor.evidence.checks import assertion_evidence
from auditor.mutation import extension, known, scoring, selection
from auditor.mutation.cache import ResultCache
from auditor.mutation.copies import run_on_copies
from auditor.mutation.distributed import DaskPool
from auditor.mutation.estimates import estimate, overheads, physical_floor, type_check_saving
from auditor.mutation.executor import RunnerPool
from auditor.mutation.jobs import job_for
from auditor.mutation.plan import PlannedMutant, Planner, TimeoutPolicy, plan, planner_for
from auditor.mutation.protocol import Job, JobResult
from auditor.mutation.ran_code import RanCode
from auditor.mutation.test_ids import CaseNames
from auditor.mutation.type_check import reject_ill_typed, rejected_by
from auditor.mutation.verdicts import to_report, to_verdict
from auditor.mutation.verify import verify_sample
from auditor.mutation.workers import mutation_pool, start_runners
from auditor.report import (
    BaselineSection,
    DataTableSample,
    Mutant,
    MutationScores,
    MutationSection,
    Scope,
    TypeCheckSummary,
    Verification,
)

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
    type_check_wait: float = 0.0,
) -> MutationRun:
    """`only`: run just the mutants with these ids (escalation re-measures survivors).
    `pool`: workers from `mutation_pool`, already starting; by default, new ones.
    `type_check_wait`: seconds the stage waited for the type check begun early."""
    cache = ResultCache.of_run(run)
    try:
        if pool is not None:
            return _mutate(run, baseline, only, cache, pool, type_check_wait)
        with mutation_pool(run) as own_pool:
            start_runners(run, own_pool, baseline)
            return _mutate(run, baseline, only, cache, own_pool, type_check_wait)
    finally:
        cache.keep_test_sets()
        cache.close()


def _mutate(
    run: RunContext,
    baseline: BaselineSection,
    only: set[str] | None,
    cache: ResultCache,
    pool: RunnerPool | DaskPool,
    type_check_wait: float,
) -> MutationRun:
    """Plan the scope, take the cached verdicts, run the rest, score what came in."""
    started = time.perf_counter()
    scoped = _plan_scope(run, baseline, only, cache)
    names = CaseNames(test.nodeid for test in baseline.tests)
    durations = {test.nodeid: test.duration for test in baseline.tests}
    verdicts = _Verdicts(run, cache, scoped, names, durations)
    to_run = [m for m in scoped.runnable if m.id not in verdicts.results]
    passing = [t.nodeid for t in baseline.tests if t.reliable]
    release_freed_memory()  # the source files' syntax trees, before the long part
    jobs = pool.connect() if isinstance(pool, DaskPool) else run.config.workers
    interrupted = _execute(run, pool, jobs, to_run, verdicts, set(passing))
    return _scored(
        run,
        baseline,
        scoped,
        verdicts,
        _Timing(started, len(to_run), jobs, interrupted, type_check_wait),
    )


@dataclass(frozen=True)
class _Scoped:
    """The mutants this run is about, and what planning them found."""

    planned: list[PlannedMutant]
    """Every mutant of the mutated files (in a diff run, of those the change reaches)."""
    in_scope: list[PlannedMutant]
    scope: Scope
    runnable: list[PlannedMutant]
    """Those of the scope that need a run (of a sample, when sampling)."""
    data_tables: list[DataTableSample]
    type_check: TypeCheckSummary | None
    ran_code: RanCode
    """The function bodies the tests ran (what an earlier verdict's tests may see
    differently now)."""
    files: list[str]
    """Every mutated file of the project."""
    planned_files: list[str]
    """Those planned."""
    known_settings: str | None
    """Where this run records its planned files' known verdicts (`mutation.known`); None
    when it judges only part of each file (a shard, a sample, chosen mutants)."""
    partly_planned: dict[str, set[str]]
    """Per file a diff run planned in part, the ids of all its mutants."""


def _plan_scope(
    run: RunContext, baseline: BaselineSection, only: set[str] | None, cache: ResultCache
) -> _Scoped:
    project, config = run.project, run.config
    planner = planner_for(project, config, baseline, cache)
    files = selection.mutated_files(project, config)
    diff = selection.diff_scope(project, config, baseline)
    planned = plan(planner, files, diff)
    in_scope, scope = selection.select_scope(config, planned, diff)
    if only is not None:
        in_scope = [m for m in in_scope if m.id in only]
    type_checked = reject_ill_typed(
        in_scope, project.root, list(project.source_files), config.type_check, cache
    )
    runnable = [m for m in in_scope if m.runnable]
    if config.sample:
        runnable = selection.stratified_sample(runnable, config.sample, config.sample_seed)
    tables = [planner.data_tables[key] for key in sorted(planner.data_tables)]
    names = [project.relative(path) for path in files]
    whole_files = only is None and not config.sample and not config.shard
    return _Scoped(
        planned,
        in_scope,
        scope,
        runnable,
        tables,
        type_checked,
        planner.ran_code,
        names,
        [name for name in names if diff is None or name in diff.files],
        _known_settings(run, planner) if whole_files else None,
        planner.partly_planned,
    )


def _known_settings(run: RunContext, planner: Planner) -> str:
    """What the last known verdicts are kept under: every setting that decides which
    mutants a file has and what their verdicts mean, and the tests audited."""
    settings, project = planner.settings, run.project
    return known.settings_key(
        planner.sites_salt,
        settings.module_level,
        settings.sample_data,
        settings.copy_path,
        settings.policy,
        run.config.all_killers,
        sorted(project.relative(path) for path in project.test_paths),
    )


def cached_verdict(cache: ResultCache, mutant: PlannedMutant, names: CaseNames) -> JobResult | None:
    """The mutant's verdict from an earlier run, the tests it names as this session
    calls them; none when one of them is not among the mutant's tests."""
    hit = cache.get(mutant.cache_key)
    if hit is None:
        return None
    hit = renamed(hit, names.local)
    named = {*hit.killed_by, *(kill[0] for kill in hit.kills)}
    # A survivor names none; a kill one to a few: no set of the mutant's tests per hit.
    known = all(test in mutant.tests or test in mutant.subprocess_tests for test in named)
    return hit if known else None


def renamed(result: JobResult, name: Callable[[str], str]) -> JobResult:
    """The result with each test it names renamed."""
    return dataclasses.replace(
        result,
        killed_by=[name(test) for test in result.killed_by],
        kills=[(name(kill[0]), *kill[1:]) for kill in result.kills],
    )


class _Verdicts:
    """The verdicts as they come in (cached ones first), counted for the progress line,
    and cached once final."""

    def __init__(
        self,
        run: RunContext,
        cache: ResultCache,
        scoped: _Scoped,
        names: CaseNames,
        durations: dict[str, float],
    ):
        """`durations`: each test's time in the baseline."""
        self.run, self.cache, self.names = run, cache, names
        self.durations = durations
        runnable = scoped.runnable
        self.by_id = {m.id: m for m in runnable}
        self.results: dict[str, JobResult] = {}
        self.cached: set[str] = set()
        self.carried: dict[str, extension.Carried] = {}
        """Earlier verdicts under other tests, whose added tests run now."""
        self.extended: set[str] = set()
        """Verdicts from an earlier run under other tests (`extension`)."""
        self.undecided: set[str] = set()
        """Survived, but the subprocesses that run its code never got the mutant."""
        for mutant in runnable:
            hit = cached_verdict(cache, mutant, names)
            if hit is not None:
                self.results[mutant.id] = hit
                self.cached.add(mutant.id)
            elif not run.config.all_killers:  # an earlier verdict names its first killer only
                self._carry_over(mutant, scoped.ran_code)
        self.tally: Counter[str] = Counter(r.status for r in self.results.values())
        self.report_progress()

    def report_progress(self) -> None:
        summary = " ".join(f"{status.lower()} {n}" for status, n in sorted(self.tally.items()))
        self.run.progress(len(self.results), len(self.by_id), summary)

    def _carry_over(self, mutant: PlannedMutant, code: RanCode) -> None:
        carried = extension.carried(self.cache, mutant, self.names.local, code)
        if carried is None:
            return
        self.extended.add(mutant.id)
        if carried.tests:
            self.carried[mutant.id] = carried
        else:
            self.results[mutant.id] = carried.earlier
            self.cached.add(mutant.id)
            self._keep(mutant, carried.earlier)

    def to_run(self, mutant: PlannedMutant) -> PlannedMutant:
        """The mutant as its job runs it: only the added tests when an earlier verdict
        is carried over."""
        carried = self.carried.get(mutant.id)
        if carried is None:
            return mutant
        config = self.run.config
        policy = TimeoutPolicy(config.mutant_timeout_factor, config.mutant_timeout_constant)
        return extension.subset(mutant, carried.tests, self.durations, policy)

    def add(self, result: JobResult) -> None:
        carried = self.carried.pop(result.id, None)
        if carried is not None:
            result = extension.merged(carried.earlier, result)
        self.results[result.id] = result
        self.tally[result.status] += 1
        if result.subprocess_unreached and self.run.config.copy_path and not result.on_copy:
            self.undecided.add(result.id)  # not final: cached after the copy run
        else:
            self._keep(self.by_id[result.id], result)
        self.report_progress()

    def _keep(self, mutant: PlannedMutant, result: JobResult) -> None:
        kept = renamed(result, self.names.portable)
        self.cache.put(mutant.cache_key, kept)
        extension.remember(self.cache, mutant, kept)

    def take_back(self, mutant_id: str) -> None:
        """A verdict that is not final after all: the mutant runs again on a copy."""
        self.tally[self.results.pop(mutant_id).status] -= 1

    def drop_undecided(self) -> None:
        """After Ctrl-C: a survivor waiting for its copy run has no verdict."""
        for mutant_id in self.undecided:
            if mutant_id in self.results and not self.results[mutant_id].on_copy:
                del self.results[mutant_id]


def _module_names(run: RunContext) -> dict[str, str]:
    project = run.project
    return {str(path): project.module_name(path) for path in project.source_files}


def _dispatch_order(run: RunContext, in_process: list[PlannedMutant]) -> list[PlannedMutant]:
    if run.deadline is not None:
        # Under a budget any prefix of the run must be a fair sample: no family first.
        return selection.stratified_order(in_process, run.config.sample_seed)
    # The extreme family first: pseudo-tested functions show up before the full run.
    # One stream, so no runner waits for the family's last mutant before the rest.
    order = [m for m in in_process if m.site.family == "extreme"]
    return order + [m for m in in_process if m.site.family != "extreme"]


def _within_budget(
    run: RunContext, mutants: list[PlannedMutant], jobs: int
) -> Iterator[PlannedMutant]:
    """Every worker gets one mutant however small the budget: planning and runner
    start-up alone may use it up, and a sampled run needs verdicts to estimate from."""
    for dispatched, mutant in enumerate(mutants):
        if run.deadline is not None and dispatched >= jobs and time.monotonic() >= run.deadline:
            return
        yield mutant


def _execute(
    run: RunContext,
    pool: RunnerPool | DaskPool,
    jobs: int,
    to_run: list[PlannedMutant],
    verdicts: _Verdicts,
    passing: set[str],
) -> bool:
    """Runs the mutants on the workers, then on copies those that need one; True when
    Ctrl-C stopped it (every final verdict so far is kept, and cached)."""
    project, config, deadline = run.project, run.config, run.deadline
    module_names = _module_names(run)
    in_process = [m for m in to_run if m.path != "copy"]
    order = _within_budget(run, _dispatch_order(run, in_process), jobs)
    try:
        pool.run(
            (job_for(verdicts.to_run(m), module_names[m.abs_path], project, config) for m in order),
            verdicts.add,
            stop_at=None if deadline is None else deadline + BUDGET_GRACE_SECONDS,
        )
        pool.close()
        # Survivors whose subprocesses the hook could not reach get a copy of the project.
        second_chance = [m for m in in_process if m.id in verdicts.undecided]
        for mutant in second_chance:
            verdicts.take_back(mutant.id)
        work = [(m, m.tests) for m in to_run if m.path == "copy"]
        work += [(m, m.subprocess_reach) for m in second_chance]
        run_on_copies(run, work, passing, jobs, verdicts.add)
    except (KeyboardInterrupt, IncompleteRunError):
        verdicts.drop_undecided()
        return True
    return False


@dataclass(frozen=True)
class _Timing:
    started: float
    executed: int
    jobs: int
    interrupted: bool
    type_check_wait: float


def _scored(
    run: RunContext,
    baseline: BaselineSection,
    scoped: _Scoped,
    verdicts: _Verdicts,
    timing: _Timing,
) -> MutationRun:
    """The section: verdicts with acceptances applied, scores, evidence and how it ran."""
    project, config = run.project, run.config
    results, in_scope = verdicts.results, scoped.in_scope
    stopped_by_budget = any(m.id not in results for m in scoped.runnable)
    reported = [m for m in in_scope if not m.runnable or m.id in results]
    mutants, expired = acceptance.apply(
        sorted(
            (to_report(m, results.get(m.id), m.id in verdicts.cached) for m in reported),
            key=lambda mutant: mutant.id,
        ),
        {m.file: m.source for m in in_scope},
        acceptance.read_ledger(project.root),
    )
    duration = time.perf_counter() - timing.started
    sampled = config.sample is not None or (stopped_by_budget and config.time_budget is not None)
    passing = [t.nodeid for t in baseline.tests if t.reliable]
    ran_here = [m for m in scoped.runnable if m.id in results and m.id not in verdicts.cached]
    ran = [results[m.id] for m in ran_here]
    in_process_run = [m for m in ran_here if not results[m.id].on_copy]
    section = MutationSection(
        **scoring.derived_fields(mutants, passing, targeted_files(project), config.all_killers),
        checks=assertion_evidence(
            mutants, project.root, [project.relative(f) for f in project.test_files]
        ),
        cache_hits=len(verdicts.cached),
        carried_over=len(verdicts.extended.intersection(results)),
        jobs=timing.jobs,
        duration=round(duration, 3),
        mutants_per_second=round(timing.executed / duration, 2)
        if duration and timing.executed
        else 0.0,
        **overheads(ran, duration, timing.jobs),
        floor_seconds=physical_floor(
            [([*m.tests, *m.subprocess_tests], results[m.id]) for m in in_process_run],
            {test.nodeid: test.duration for test in baseline.tests},
            timing.jobs,
        ),
        verification=_verification(run, baseline, scoped, mutants),
        scope=scoped.scope,
        estimate=estimate(in_scope, results, config) if sampled else None,
        project_known=_project_known(scoped, results, verdicts),
        stopped_by_budget=stopped_by_budget and not timing.interrupted,
        interrupted=timing.interrupted,
        data_tables=scoped.data_tables,
        type_check=_type_check_paid(scoped.type_check, mutants, timing),
        expired_acceptances=expired,
    )
    return MutationRun(section, _survivor_jobs(run, scoped, mutants))


def _type_check_paid(
    summary: TypeCheckSummary | None, mutants: list[Mutant], timing: _Timing
) -> TypeCheckSummary | None:
    """The type check's summary with what it cost (the stage's check and its wait for the
    early one) and what running its rejected mutants would have cost."""
    if summary is None:
        return None
    reason = rejected_by(summary.checker)
    rejected = {m.id for m in mutants if m.status_reason.startswith(reason)}
    return summary.model_copy(
        update={
            "duration": round(summary.duration + timing.type_check_wait, 3),
            "saved": type_check_saving(mutants, rejected, timing.jobs),
        }
    )


def _verification(
    run: RunContext, baseline: BaselineSection, scoped: _Scoped, mutants: list[Mutant]
) -> Verification | None:
    """`--verify-sample N`: N verdicts checked against fresh runs of the mutated code."""
    if not run.config.verify_sample:
        return None
    by_id = {m.id: m for m in scoped.in_scope}
    return verify_sample(
        run,
        baseline,
        mutants,
        run.config.verify_sample,
        lambda mutant_id: by_id[mutant_id].site.apply(by_id[mutant_id].source),
    )


def _survivor_jobs(run: RunContext, scoped: _Scoped, mutants: list[Mutant]) -> dict[str, Job]:
    """Each survivor's job as the executor ran it, for the probes' witness searches."""
    module_names = _module_names(run)
    survived = {mutant.id for mutant in mutants if mutant.status == "Survived"}
    return {
        m.id: job_for(m, module_names[m.abs_path], run.project, run.config)
        for m in scoped.in_scope
        if m.id in survived
    }


def _project_known(
    scoped: _Scoped, results: dict[str, JobResult], verdicts: _Verdicts
) -> MutationScores | None:
    """Records the planned files' known verdicts (`mutation.known`): this run's, the
    cache's, the statically known ones. In a diff run, the whole project's scores over
    the last known verdict of every mutant."""
    if scoped.known_settings is None:
        return None
    by_file: dict[str, dict[str, scoring.Verdict | None]] = {
        file: {} for file in scoped.planned_files
    }
    for mutant in scoped.planned:
        result = results.get(mutant.id) or (
            cached_verdict(verdicts.cache, mutant, verdicts.names) if mutant.runnable else None
        )
        known_now = not mutant.runnable or result is not None
        by_file[mutant.file][mutant.id] = to_verdict(mutant, result) if known_now else None
    known.record(
        verdicts.cache, scoped.known_settings, by_file, scoped.files, scoped.partly_planned
    )
    if scoped.scope.kind != "diff":
        return None
    return scoring.scores_of(known.read(verdicts.cache, scoped.known_settings))
