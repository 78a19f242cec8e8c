"""Figures of a run beyond its verdicts: the scores a sample estimates for the whole
scope, the engine's overhead per mutant, and the physical floor it is measured by."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Set

from auditor.config import AuditConfig
from auditor.mutation import selection
from auditor.mutation.plan import PlannedMutant
from auditor.mutation.protocol import JobResult
from auditor.report import Estimate, Mutant


def estimate(
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


def overheads(ran: list[JobResult], duration: float, jobs: int) -> dict[str, float | None]:
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


def physical_floor(
    ran: list[tuple[list[str], JobResult]], test_seconds: Mapping[str, float], jobs: int
) -> float | None:
    """Seconds no engine can beat on these mutants (each with the tests its child runs,
    in order) with these workers: each mutant's tests up to the first that fails (their
    own time, as pytest measured it in the child; for a child stopped or dead inside a
    test, the baseline's time of the tests it started: what the original code needs to
    get that far) plus one fork, divided by the workers."""
    if not ran:
        return None
    total = 0.0
    for tests, result in ran:
        tests_time = result.tests_seconds
        if result.status == "Timeout" or not tests_time:
            tests_time = sum(test_seconds.get(test, 0.0) for test in tests[: result.ran])
        total += tests_time + result.fork_seconds
    return round(total / jobs, 3)


def type_check_saving(mutants: list[Mutant], rejected: Set[str], jobs: int) -> float | None:
    """Estimated wall seconds the rejected mutants would have taken to run. A mutant the
    type checker rejects mostly crashes the first test that calls it, as a killed mutant
    ends: each counts as the mean time of the killed mutants of its function, of its
    file where none of those was killed, of the whole run where none of the file was."""
    killed = [m for m in mutants if m.status == "Killed"]
    if not rejected or not killed:
        return None
    by_function: dict[tuple[str, str], list[float]] = defaultdict(list)
    by_file: dict[str, list[float]] = defaultdict(list)
    for mutant in killed:
        by_function[mutant.file, mutant.function].append(mutant.duration)
        by_file[mutant.file].append(mutant.duration)
    overall = statistics.fmean(mutant.duration for mutant in killed)
    seconds = 0.0
    for mutant in mutants:
        if mutant.id in rejected:
            times = by_function.get((mutant.file, mutant.function)) or by_file.get(mutant.file)
            seconds += statistics.fmean(times) if times else overall
    return round(seconds / jobs, 3)
