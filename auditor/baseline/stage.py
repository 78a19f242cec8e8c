"""The baseline stage: run the suite once and turn what it did into report sections."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from auditor.baseline import known, protocol, slowed
from auditor.baseline.coverage_data import BaselineCoverage, KnownFiles
from auditor.baseline.observe import MAX_CALLS
from auditor.baseline.patterns import merged
from auditor.baseline.runner import BaselineRunner, ChildOutcome, checked_run
from auditor.containment import rewritten
from auditor.context import RunContext
from auditor.discovery.project import Project
from auditor.errors import SuiteUnusableError
from auditor.report import (
    BaselineSection,
    BlockedAction,
    CollectionError,
    CoverageSection,
    ObservedFunction,
    TestResult,
)

_SANDBOX_REFUSALS = re.compile(r"Read-only file system|Network is unreachable")
"""What the OS sandbox answers a write outside the scratch folders or a connection."""


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


KEPT_WHOLE = "kept from an earlier run: nothing it depends on changed"


def kept_whole(baseline: BaselineSection) -> bool:
    """Whether the baseline is an earlier run's, unchanged: nothing the tests run changed."""
    return baseline.reuse == KEPT_WHOLE


def run_baseline(
    run: RunContext,
    store: known.BaselineStore | None = None,
    on_partial: Callable[[RunContext], None] | None = None,
) -> tuple[BaselineSection, CoverageSection]:
    """The baseline kept from an earlier run when nothing it depends on changed, or
    measured again for the tests a change can touch only (see `known`); else the
    measured run, and the flaky reruns alongside it on the other cores (each is a single
    process; they share nothing but the read-only project). Past the run's deadline (the
    time budget) a run that crashed or hung is not started again: the measured run then
    stops the audit, a rerun is left out. `on_partial`: what may start when a core is
    free of a change's tests run again (the flaky reruns are done: they run without
    coverage, so sooner than the measured run)."""
    rewritten.prepare(run.project.root, [*run.project.test_files, *run.project.conftest_files])
    settings = known.scope({**_settings(run), "reruns": run.config.flaky_reruns})
    now = known.manifest(run.project)
    sources = known.sources(run.project)  # as the tests will run them, like the manifest
    earlier = known.kept(store, settings)
    plan: known.Partial | str = "no baseline kept for these settings"
    if earlier is not None:
        if not known.changes(earlier.manifest, now):
            kept_as_it_was = {"reuse": KEPT_WHOLE, "compiled_patterns": earlier.patterns}
            return earlier.baseline.model_copy(update=kept_as_it_was), earlier.coverage
        plan = known.partial(earlier, now, run.project)
    if isinstance(plan, known.Partial) and earlier is not None:
        measured = _measured(run, plan, earlier, on_partial)
    else:
        measured = _measured(run)
        measured.baseline.reuse = f"measured: {plan}"
    kept = known.KeptBaseline(
        manifest=now,
        baseline=measured.baseline,
        coverage=measured.coverage,
        sources=sources,
        coverage_keys=measured.coverage_keys,
        patterns=measured.baseline.compiled_patterns,
        import_time_arcs=measured.import_time_arcs,
        subprocess_arcs=measured.subprocess_arcs,
    )
    known.keep(store, settings, kept)
    return measured.baseline, measured.coverage


@dataclass
class _Measured:
    """The sections, and what the kept baseline holds beside them."""

    baseline: BaselineSection
    coverage: CoverageSection
    coverage_keys: dict[str, str]
    """What each file's coverage was computed from (`coverage_data.file_keys`)."""
    import_time_arcs: dict[str, list[tuple[int, int]]]
    subprocess_arcs: dict[str, dict[str, list[tuple[int, int]]]]
    """By passing test: the arcs its Python subprocesses ran (`KeptBaseline`)."""


def _measured(
    run: RunContext,
    plan: known.Partial | None = None,
    earlier: known.KeptBaseline | None = None,
    beside: Callable[[RunContext], None] | None = None,
) -> _Measured:
    """With an earlier baseline, only the tests the plan does not keep run, from the
    files that hold them, and the files whose coverage is computed from the same as then
    are taken from it."""
    keep = [test.nodeid for test in plan.kept] if plan is not None else []
    uncollected = plan.uncollected if plan is not None else []
    files = None if earlier is None else KnownFiles(earlier.coverage.files, earlier.coverage_keys)
    with (
        tempfile.TemporaryDirectory(prefix="audit-baseline-") as scratch,
        _Reruns(run, Path(scratch), keep, uncollected, beside) as reruns,
    ):
        runner = _runner(run, Path(scratch) / "measured", keep=keep, uncollected=uncollected)
        outcome = runner.run(run.progress)
        untraced = list(reruns.outcomes())
        outcome = _slowed_measured_again(run, Path(scratch) / "measured-again", outcome, untraced)
        # A case named at collection may not be found again; an uncollected file's are
        # as they were (its code, and what it imports, ran no changed line at import).
        found, left_out = set(outcome.kept), set(uncollected)
        kept = [t for t in plan.kept if t.nodeid in found or t.file in left_out] if plan else []
        earlier_run = replace(plan, kept=kept) if plan else known.Partial(kept=[], changed="")
        measured = _measure(run, outcome, untraced, earlier_run, files)
    if plan is not None and earlier is not None:
        baseline = measured.baseline
        ran = len(baseline.tests) - len(kept)
        baseline.reuse = (
            f"measured {ran} of {len(baseline.tests)} tests: {plan.changed}; "
            "the others kept their results"
        )
        baseline.observed = _merged_observed(earlier.baseline.observed, baseline.observed)
        growth = earlier.baseline.memory_growth_mb
        baseline.memory_growth_mb = max(baseline.memory_growth_mb, growth)
        baseline.compiled_patterns = merged(baseline.compiled_patterns, earlier.patterns)
    return measured


def _merged_observed(
    old: list[ObservedFunction], new: list[ObservedFunction]
) -> list[ObservedFunction]:
    """The earlier run's calls first, then this run's new ones, distinct and at most
    `MAX_CALLS` per function. Tests run again after an edit that kept their behaviour
    make the calls they made before: the calls stay as the whole suite made them, in
    its order, as a cold run records them (a probe's spec, hence its result and its
    place in the cache, stays the same)."""
    merged: dict[tuple[str, str], ObservedFunction] = {}
    for entry in (*old, *new):
        key = (entry.file, entry.qualname)
        into = merged.setdefault(
            key, ObservedFunction(file=entry.file, qualname=entry.qualname, calls=[])
        )
        into.calls += [call for call in entry.calls if call not in into.calls]
        del into.calls[MAX_CALLS:]
    return [merged[key] for key in sorted(merged)]


def _slowed_measured_again(
    run: RunContext, workdir: Path, outcome: ChildOutcome, reruns: list[ChildOutcome | None]
) -> ChildOutcome:
    """The measured run, with the tests that timed out under coverage only measured
    again (see `slowed`)."""
    untraced = slowed.untraced_seconds(outcome, reruns)
    if not untraced:
        return outcome
    runners = [
        BaselineRunner(
            run.project.root,
            workdir / f"share-{number}",
            **{
                **_settings(run),
                "test_paths": sorted(share),
                "test_timeout": slowed.limit_for(share, run.config.test_timeout),
            },
            deadline=run.deadline,
        )
        for number, share in enumerate(slowed.shares(untraced, run.config.workers))
    ]
    return slowed.measure_again(runners, outcome, untraced)


def _measure(
    run: RunContext,
    outcome: ChildOutcome,
    reruns: list[ChildOutcome | None],
    plan: known.Partial,
    files: KnownFiles | None,
) -> _Measured:
    """The sections from the measured run's outcome, and the results `plan` keeps of
    tests an earlier run measured (not run now), with the arcs it ran outside every test
    (for the modules this run's collection did not import) and the arcs of the kept
    tests' Python subprocesses; `files`: the earlier run's file coverage."""
    project, kept = run.project, plan.kept
    collection_errors = sorted(
        (
            CollectionError(file=project.relative(e.path), message=e.message, line=e.line)
            for e in outcome.collection_errors
        ),
        key=lambda error: error.file,
    )
    raw_results = outcome.results + outcome.removed
    if not raw_results and not kept:
        _raise_unusable(collection_errors, outcome, project)
    coverage = BaselineCoverage(outcome.data_file, project.root)
    coverage.add_import_time_arcs(plan.import_time_arcs)
    measured = [_result(run, raw, coverage) for raw in raw_results]
    tests = sorted([*measured, *kept], key=lambda test: test.nodeid)
    for seed, rerun in enumerate(reruns):
        if rerun is not None:
            _mark_flaky(tests, rerun, seed)
    passing = [test.nodeid for test in tests if test.outcome == "passed"]
    if not passing:
        reasons = sorted(f"{t.nodeid}: {t.outcome} ({t.message})" for t in tests)
        raise SuiteUnusableError(
            f"no test passes on the original code ({len(tests)} run; first: {reasons[0]})"
        )
    section = BaselineSection(
        tests=tests,
        collection_errors=collection_errors,
        passed=len(passing),
        excluded=len(tests) - len(passing),
        restarts=outcome.restarts,
        import_time_lines=coverage.import_time_lines(),
        import_time_calls=coverage.import_time_calls(),
        flaky=[test.nodeid for test in tests if test.flaky],
        observed=[
            ObservedFunction(
                file=project.relative(entry.file),
                qualname=entry.qualname,
                calls=entry.calls,
            )
            for entry in outcome.observed
        ],
        memory_growth_mb=round(outcome.memory_growth_mb, 1),
        compiled_patterns=outcome.patterns,
    )
    source_dirs = [str(p) for p in project.source_paths]
    measured_passing = [test.nodeid for test in measured if test.outcome == "passed"]
    subprocess_arcs = _subprocess_arcs(coverage, measured, plan)
    summary, keys = coverage.summary(
        measured_passing,
        source_dirs,
        project.test_code,
        [
            *(t.arcs for t in kept),
            *(subprocess_arcs[t.nodeid] for t in kept if t.nodeid in subprocess_arcs),
        ],
        unimported=[os.path.realpath(path) for path in project.source_files],
        known=files,
    )
    return _Measured(section, summary, keys, coverage.import_time_arcs(), subprocess_arcs)


def _subprocess_arcs(
    coverage: BaselineCoverage, measured: list[TestResult], plan: known.Partial
) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """By passing test, measured now or kept: the arcs its Python subprocesses ran."""
    arcs = {
        test.nodeid: coverage.subprocess_arcs(test.nodeid)
        for test in measured
        if test.outcome == "passed" and test.subprocess_lines
    }
    kept = {test.nodeid for test in plan.kept}
    arcs.update((nodeid, ran) for nodeid, ran in plan.subprocess_arcs.items() if nodeid in kept)
    return arcs


def _result(run: RunContext, raw: protocol.Result, coverage: BaselineCoverage) -> TestResult:
    result = TestResult(
        nodeid=raw.nodeid,
        file=_file_of(raw.nodeid),
        outcome=raw.outcome,
        duration=round(raw.duration, 6),
        message=raw.message,
        blocked=[BlockedAction(**blocked) for blocked in raw.blocked],
        spawns_python=raw.spawns_python,
    )
    sandboxed = run.isolation.level == "os"
    if (
        sandboxed
        and result.outcome in ("failed", "error")
        and _SANDBOX_REFUSALS.search(result.message)
    ):
        result.outcome = "blocked"
        result.message = f"blocked by sandbox: {result.message}"
    if result.outcome == "passed":
        result.lines, result.arcs = coverage.test_lines_and_arcs(result.nodeid)
        result.subprocess_lines = coverage.subprocess_lines(result.nodeid)
    return result


def _settings(run: RunContext) -> dict[str, Any]:
    """What the test processes are given: a kept baseline holds for these only."""
    project, config = run.project, run.config
    return {
        "test_paths": [project.relative(path) for path in project.collect_paths],
        "source_dirs": [str(path) for path in project.source_paths],
        "source_roots": [str(path) for path in project.source_roots],
        "allow_write": config.allow_write,
        "test_timeout": config.test_timeout,
        "memory_limit_mb": config.memory_limit_mb,
        "omit": project.test_code,
        "pytest_options": project.pytest_options,
        "isolation": run.isolation,
    }


def _runner(
    run: RunContext,
    workdir: Path,
    shuffle_seed: int | None = None,
    keep: list[str] | None = None,
    uncollected: list[str] | None = None,
) -> BaselineRunner:
    """The measured run (no seed), or an outcomes-only rerun in a shuffled order; `keep`:
    the tests it does not run (an earlier run's results stand), `uncollected` the files
    it does not collect."""
    return BaselineRunner(
        run.project.root,
        workdir,
        **_settings(run),
        measure=shuffle_seed is None,
        shuffle_seed=shuffle_seed,
        deadline=run.deadline,
        keep=keep,
        uncollected=uncollected,
    )


class _Reruns:
    """The flaky reruns (outcomes only, other orders), started at once on a pool of
    `jobs - 1` threads (none with one job: then they run after the measured run), each
    waiting on its child; then `beside`, on the first thread free of them. Leaving the
    block early (the suite is unusable, Ctrl-C) kills the children still running."""

    def __init__(
        self,
        run: RunContext,
        scratch: Path,
        keep: list[str],
        uncollected: list[str],
        beside: Callable[[RunContext], None] | None = None,
    ) -> None:
        self._run, self._beside = run, beside
        self._runners = [
            _runner(run, scratch / f"rerun-{seed}", seed, keep, uncollected)
            for seed in range(run.config.flaky_reruns)
        ]
        threads = run.config.workers - 1
        wanted = self._runners or beside is not None
        self._pool = ThreadPoolExecutor(threads) if threads and wanted else None
        self._started: list[Future[ChildOutcome | None]] = []
        self._started_beside: Future[None] | None = None

    def __enter__(self) -> _Reruns:
        if self._pool is not None:
            self._started = [self._pool.submit(checked_run, runner) for runner in self._runners]
            if self._beside is not None:
                self._started_beside = self._pool.submit(self._beside, self._run)
        return self

    def outcomes(self) -> Iterator[ChildOutcome | None]:
        """Each rerun's outcome in seed order (None where it failed: the reruns are a
        check on top, the measured run stands)."""
        if self._pool is None:
            yield from (checked_run(runner) for runner in self._runners)
        else:
            yield from (future.result() for future in self._started)
            if self._started_beside is not None:
                self._started_beside.result()  # what went wrong there, raised here

    def __exit__(self, *exc_info: object) -> None:
        for runner in self._runners:
            runner.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def _mark_flaky(tests: list[TestResult], outcome: ChildOutcome, seed: int) -> None:
    """Tests that passed, then did not when everything ran again in another order."""
    again = {raw.nodeid: raw for raw in outcome.results + outcome.removed}
    for test in tests:
        other = again.get(test.nodeid)
        if test.outcome == "passed" and not test.flaky and other and other.outcome != "passed":
            detail = f": {other.message}" if other.message else ""
            order = "reversed" if seed == 0 else f"shuffled, seed {seed}"
            test.flaky = f"{other.outcome} when the suite ran in another order ({order}){detail}"


def _raise_unusable(errors: list[CollectionError], outcome: ChildOutcome, project: Project) -> None:
    if outcome.internal_error:
        where = project.relative(outcome.last_collected_file)
        raise SuiteUnusableError(
            f"pytest stopped while collecting {where}: {outcome.internal_error}"
        )
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more files)" if len(errors) > 1 else ""
        raise SuiteUnusableError(f"cannot collect {first.file}: {first.message}{more}")
    paths = ", ".join(project.relative(path) for path in project.test_paths)
    raise SuiteUnusableError(f"no tests collected from {paths}")
