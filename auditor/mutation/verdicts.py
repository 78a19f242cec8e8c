"""A mutant's verdict as the report shows it: the planned mutant and its job's result."""

from __future__ import annotations

from auditor.mutation.plan import PlannedMutant
from auditor.mutation.protocol import JobResult
from auditor.mutation.scoring import Verdict, failed_a_check
from auditor.report import Kill, Mutant


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


def _status(mutant: PlannedMutant, result: JobResult | None) -> str:
    return mutant.status or (result.status if result else "RuntimeError")


def to_verdict(mutant: PlannedMutant, result: JobResult | None) -> Verdict:
    """What the scores count of it: `Verdict.of(to_report(...))` without building the
    report's model (and sorting its covering tests), for every mutant a file has."""
    status = _status(mutant, result)
    kills, kind = _kills(result, status)
    return Verdict(status, kind, status == "Killed" and failed_a_check(kind, kills))


def to_report(mutant: PlannedMutant, result: JobResult | None, cached: bool) -> Mutant:
    site = mutant.site
    status = _status(mutant, result)
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
        covered_by=mutant.covering() if mutant.runnable else [],
        killed_by=[kill.test for kill in kills] or (result.killed_by if result else []),
        kills=kills,
        kill_kind=kind,
        duration=result.duration if result else 0.0,
        cached=cached,
    )
