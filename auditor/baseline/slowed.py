"""Tests that timed out only because coverage traced them, measured again with room.

Branch coverage can make a test several times slower: a test that passes in 3 s can
pass a 10 s per-test timeout in the measured run and be excluded as a hang, with its
mutants left uncovered. The flaky reruns run untraced; a test that timed out in the
measured run and passed in every rerun within the timeout is measured once more, under
coverage, with a limit that follows its untraced time. A real hang times out in the
reruns too and costs nothing more.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from auditor.baseline import protocol
from auditor.baseline.patterns import merged
from auditor.baseline.runner import (
    BaselineRunner,
    ChildOutcome,
    checked_run,
    merge_coverage,
    merge_observed,
)

TRACING_SLOWDOWN = 20.0
"""How many times slower than untraced a test may run under coverage when measured
again: branch tracing and the call recorder cost several times on tight loops, more on
threads that contend for the interpreter. A test that passes takes its own time; only
one that hangs under tracing alone runs to this limit."""


def untraced_seconds(
    measured: ChildOutcome, reruns: Sequence[ChildOutcome | None]
) -> dict[str, float]:
    """The measured run's timed-out tests that passed in every rerun that ran them (at
    least one), each with its longest untraced time there."""
    timed_out = {result.nodeid for result in measured.results if result.outcome == "timeout"}
    passes: dict[str, list[float]] = {}
    failed: set[str] = set()
    for rerun in reruns:
        for result in [] if rerun is None else rerun.results + rerun.removed:
            if result.nodeid not in timed_out:
                continue
            if result.outcome == "passed":
                passes.setdefault(result.nodeid, []).append(result.duration)
            else:
                failed.add(result.nodeid)
    return {nodeid: max(times) for nodeid, times in passes.items() if nodeid not in failed}


def shares(untraced: dict[str, float], count: int) -> list[dict[str, float]]:
    """The tests in at most `count` shares of about equal untraced time, one per core."""
    parts: list[dict[str, float]] = [{} for _ in range(min(count, len(untraced)))]
    for nodeid in sorted(untraced, key=lambda test: (-untraced[test], test)):
        lightest = min(parts, key=lambda part: sum(part.values()))
        lightest[nodeid] = untraced[nodeid]
    return parts


def limit_for(untraced: dict[str, float], test_timeout: float) -> float:
    """The per-test timeout of a run that measures these tests again."""
    return test_timeout + TRACING_SLOWDOWN * max(untraced.values())


def measure_again(
    runners: list[BaselineRunner], measured: ChildOutcome, untraced: dict[str, float]
) -> ChildOutcome:
    """`measured` with the tests of `untraced` measured again, each share by one of
    `runners` (all at once): those that pass now replace their timeouts, and their
    coverage and the calls they observed are added. A run that fails changes nothing.
    Leaving early (Ctrl-C) kills the children still running."""
    pool = ThreadPoolExecutor(len(runners))
    try:
        ran = [
            (runner, outcome)
            for runner, outcome in zip(runners, pool.map(checked_run, runners), strict=True)
            if outcome is not None
        ]
    finally:
        for runner in runners:
            runner.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
    passed = {
        result.nodeid: _noted(result, untraced[result.nodeid], runner.test_timeout)
        for runner, outcome in ran
        for result in outcome.results
        if result.nodeid in untraced and result.outcome == "passed"
    }
    outcomes = [outcome for _, outcome in ran]
    if not passed:
        return measured
    merge_coverage(measured.data_file, [outcome.data_file for outcome in outcomes])
    observed = [entry for outcome in (measured, *outcomes) for entry in outcome.observed]
    return dataclasses.replace(
        measured,
        results=[passed.get(result.nodeid, result) for result in measured.results],
        observed=merge_observed(observed),
        memory_growth_mb=max(outcome.memory_growth_mb for outcome in (measured, *outcomes)),
        patterns=merged(*(outcome.patterns for outcome in (measured, *outcomes))),
    )


def _noted(result: protocol.Result, untraced: float, limit: float) -> protocol.Result:
    message = (
        f"timed out under coverage; passed in {untraced:.1f}s untraced, "
        f"and was measured again with a limit of {limit:.0f}s"
    )
    return dataclasses.replace(result, message=message)
