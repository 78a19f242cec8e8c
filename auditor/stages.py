"""The stages after discovery, in the order they run (`STAGES`): each is a function
`(run, draft) -> draft` that reads the report so far and returns it with its section
added. `pipeline.run_audit` runs the list; this module says what each stage does."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from auditor.baseline.stage import kept_whole, run_baseline
from auditor.containment.memory import release_freed_memory
from auditor.context import RunContext
from auditor.draft import Draft, assemble
from auditor.evidence.provenance import provenance
from auditor.gate import evaluate, require_escalation
from auditor.mutation.cache import ResultCache
from auditor.mutation.distributed import DaskPool
from auditor.mutation.early_sites import EarlySites
from auditor.mutation.executor import RunnerPool
from auditor.mutation.protocol import Job
from auditor.mutation.stage import run_mutation
from auditor.mutation.workers import first_run, mutation_pool, start_runners
from auditor.mutmut_import import import_mutmut
from auditor.probes.stage import run_probes, start_early
from auditor.report import BaselineSection, MutationSection
from auditor.smells.analyzer import analyze
from auditor.smells.evidence import with_mutation_evidence


class MutationWorkers:
    """What the mutation stage starts early, on the cores the stages before it leave
    idle: the search for mutation sites during the baseline, the runners (collecting the
    tests) during the smells, or one during a change's baseline. The mutation stage
    closes them; the pipeline too, on error."""

    def __init__(self, run: RunContext) -> None:
        self._helpers = contextlib.ExitStack()
        # A cache this run may not write gets nothing from the helper.
        self._sites = (
            EarlySites() if run.cache_read_only else EarlySites.start(run.project, run.config)
        )
        self._helpers.callback(self._sites.stop)
        self._pool: RunnerPool | DaskPool | None = None

    def start_early(self, run: RunContext) -> None:
        """A core is free of a change's baseline: one local runner collects the tests
        there, and gets ready once the baseline's facts come (`start_runners`)."""
        if run.config.executor != "local":
            return  # a Dask cluster's workers start with the mutation stage
        self._pool = self._helpers.enter_context(mutation_pool(run))
        if isinstance(self._pool, RunnerPool):
            self._pool.start(1)

    def start_runners(self, run: RunContext, baseline: BaselineSection) -> None:
        if self._pool is None:
            self._pool = self._helpers.enter_context(mutation_pool(run))
        start_runners(run, self._pool, baseline)

    def run(
        self, run: RunContext, baseline: BaselineSection
    ) -> tuple[MutationSection, dict[str, Job]]:
        with self._helpers:
            checking = self._sites.wait()
            mutated = run_mutation(run, baseline, pool=self._pool, type_check_wait=checking)
            return mutated.section, dict(mutated.survivors)

    def close(self) -> None:
        self._helpers.close()


def measure_baseline(run: RunContext, draft: Draft) -> Draft:
    store = ResultCache.of_run(run)
    try:
        starts_beside = draft.workers.start_early if draft.workers is not None else None
        baseline, coverage = run_baseline(run, store, starts_beside)
    finally:
        store.close()
    early = start_early(run) if _probes_early(run, draft, baseline) else None
    if draft.workers is not None:
        draft.workers.start_runners(run, baseline)
    return draft.add(baseline=baseline, coverage=coverage, early_probes=early)


def _probes_early(run: RunContext, draft: Draft, baseline: BaselineSection) -> bool:
    """Whether a probe process starts once the baseline is measured: after a change,
    whose mutants are few, so that its start (Python, Hypothesis, the code under test)
    is not waited for. Not during the baseline, whose test run and flaky rerun keep both
    cores busy; not on a first run, whose mutants do; not on a rerun with nothing
    changed, which has nothing new to probe."""
    if not run.config.probes or draft.workers is None or kept_whole(baseline):
        return False
    return not first_run(run)


def find_smells(run: RunContext, draft: Draft) -> Draft:
    project, config = run.project, run.config
    store = ResultCache.of_run(run)
    try:
        smells = analyze(
            project.test_files,
            project.root,
            set(project.source_package_names),
            config.assertion_helpers,
            config.disable_smells,
            store,
        )
    finally:
        store.close()
    release_freed_memory()  # the test modules' syntax trees
    return draft.add(smells=smells)


def mutate(run: RunContext, draft: Draft) -> Draft:
    """Mutation testing (or mutmut's verdicts, imported), and the smells the kills prove."""
    assert draft.baseline is not None and draft.smells is not None
    if draft.workers is None:
        mutation, survivors = import_mutmut(run.project, draft.baseline), {}
    else:
        mutation, survivors = draft.workers.run(run, draft.baseline)
    smells = with_mutation_evidence(
        draft.smells, mutation, run.project.root, run.config.disable_smells
    )
    return draft.add(mutation=mutation, survivors=survivors, smells=smells)


def probe(run: RunContext, draft: Draft) -> Draft:
    assert draft.baseline is not None
    probes = run_probes(run, draft.baseline, draft.mutation, draft.survivors, draft.early_probes)
    return draft.add(probes=probes, early_probes=None)


def judge(run: RunContext, draft: Draft) -> Draft:
    """Which generator wrote each test, then the gate over every section so far."""
    project, config = run.project, run.config
    assert draft.baseline is not None and draft.smells is not None
    tests = [project.relative(file) for file in project.test_files]
    origins = provenance(
        project.root, tests, config.generators, draft.baseline, draft.smells, draft.mutation
    )
    draft = draft.add(provenance=origins)
    return draft.add(gate=evaluate(config.gate, draft, run.previous))  # type: ignore[arg-type]


def harden(run: RunContext, draft: Draft) -> Draft:
    """Escalation, on the finished report; the gate judged the suite as the user has it,
    and only `--require-escalation` adds a condition. Ctrl-C keeps the audit."""
    # Imported here: the openai client is slow to import, and paid only when used.
    from auditor.escalation.stage import run_escalation

    try:
        escalation = run_escalation(run, assemble(run, draft, {}))
    except KeyboardInterrupt:
        return draft.add(interrupted=True)
    gate = draft.gate
    if run.config.escalation.require and gate is not None:
        gate = require_escalation(gate, escalation)
    return draft.add(escalation=escalation, gate=gate)


def _escalates(run: RunContext, draft: Draft) -> bool:
    sampling = run.config.sample is not None
    wanted = run.config.escalation.enabled and draft.mutation is not None
    return wanted and not draft.stopped(sampling)


def _baseline_line(draft: Draft) -> str:
    assert draft.baseline is not None
    baseline = draft.baseline
    kept = ", kept from an earlier run" if kept_whole(baseline) else ""
    line = f"{baseline.passed} passed, {baseline.excluded} excluded{kept}"
    alike = baseline.excluded_alike()
    if alike and len(alike[0][1]) > 1:  # a cause many share, seen before the run goes on
        (outcome, message), nodeids = alike[0]
        line += f" ({len(nodeids)} {outcome}: {message[:120]})"
    return line


def _smells_line(draft: Draft) -> str:
    assert draft.smells is not None
    return f"{len(draft.smells.findings)} findings"


def _mutation_line(draft: Draft) -> str:
    assert draft.mutation is not None
    score = draft.mutation.scores.score
    return f"{len(draft.mutation.mutants)} mutants, score {'-' if score is None else score}%"


def _mutation_stopped(draft: Draft) -> bool:
    assert draft.mutation is not None
    return draft.mutation.stopped_by_budget or draft.mutation.interrupted


def _probe_line(draft: Draft) -> str:
    assert draft.probes is not None
    counts = draft.probes.counts
    found = sum(n for kind, n in counts.items() if not kind.startswith("witness"))
    return f"{found} findings, {counts.get('witness found', 0)} witnesses"


def _gate_line(draft: Draft) -> str:
    assert draft.gate is not None
    return draft.gate.verdict.upper()


def _escalation_line(draft: Draft) -> str:
    if draft.escalation is None:
        return "interrupted"
    accepted = sum(module.accepted for module in draft.escalation.modules)
    return f"{accepted} tests accepted ({draft.escalation.mode})"


def _always(run: RunContext, draft: Draft) -> bool:
    return True


def _never_stopped(draft: Draft) -> bool:
    return False


@dataclass(frozen=True)
class Stage:
    """One step of the pipeline: its name (in progress lines, timings and
    `cut_by_budget`), when it runs, what it adds, and the line it ends with."""

    name: str
    step: Callable[[RunContext, Draft], Draft]
    line: Callable[[Draft], str]
    runs: Callable[[RunContext, Draft], bool] = _always
    stopped: Callable[[Draft], bool] = _never_stopped
    total: Callable[[RunContext], int | None] = lambda run: None


STAGES: tuple[Stage, ...] = (
    Stage("baseline", measure_baseline, _baseline_line),
    Stage("smells", find_smells, _smells_line, total=lambda run: len(run.project.test_files)),
    Stage(
        "mutate",
        mutate,
        _mutation_line,
        runs=lambda run, draft: run.config.mutation,
        stopped=_mutation_stopped,
    ),
    Stage(
        "probe",
        probe,
        _probe_line,
        runs=lambda run, draft: run.config.probes,
        stopped=lambda draft: "probe" in draft.cut_by_budget(),
    ),
    Stage("gate", judge, _gate_line),
    Stage("escalate", harden, _escalation_line, runs=_escalates),
)
"""Every stage after `discover` (which finds what they work on), in run order."""

ORDER: tuple[str, ...] = ("discover", *(stage.name for stage in STAGES))
"""The pipeline's order, written once: README and docs/design.md are checked against it."""
