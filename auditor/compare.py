"""`audit compare`: several test folders for the same code, side by side.

Each suite gets its own baseline and mutation run on the same code (the same mutants:
ids follow the code, not the tests); the comparison adds what each suite kills that no
other does."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from auditor.config import AuditConfig
from auditor.pipeline import run_audit
from auditor.progress import StageProgress
from auditor.report import Report


class SuiteRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tests_path: str
    tests: int
    line_coverage: float | None
    score: float | None
    targeted_score: float | None
    assertion_share: float | None
    smells: int
    high_smells: int
    killed: int
    only_it_kills: list[str] = Field(default_factory=list)
    """Mutants this suite kills and no other compared suite does."""
    seconds: float
    """The audit's wall time (baseline and mutation)."""
    rating: str


class Comparison(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code_under_test: list[str]
    mutants: int
    same_mutants: bool
    """Whether every suite's run made the same mutants (same code, same scope)."""
    suites: list[SuiteRow]


def compare_suites(
    paths: list[str], config: AuditConfig, cwd: Path, progress: StageProgress | None = None
) -> tuple[Comparison, list[Report]]:
    """Audit each folder in turn (probes and escalation off: they do not depend on the
    tests) and set the results side by side."""
    settings = config.model_copy(
        update={
            "probes": False,
            "escalation": config.escalation.model_copy(update={"enabled": False}),
        }
    )
    reports = [run_audit([path], settings, cwd, progress) for path in paths]
    killed = {
        path: {m.id for m in report.mutation.mutants if m.status in ("Killed", "Timeout")}
        if report.mutation
        else set()
        for path, report in zip(paths, reports, strict=True)
    }
    mutant_sets = [
        frozenset(m.id for m in report.mutation.mutants) if report.mutation else frozenset()
        for report in reports
    ]
    rows = []
    for path, report in zip(paths, reports, strict=True):
        others = set().union(*(killed[other] for other in paths if other != path))
        mutation = report.mutation
        rows.append(
            SuiteRow(
                tests_path=path,
                tests=sum(test.outcome == "passed" for test in report.baseline.tests),
                line_coverage=report.coverage.totals.line_percent,
                score=mutation.scores.score if mutation else None,
                targeted_score=mutation.targeted.scores.score
                if mutation and mutation.targeted
                else None,
                assertion_share=mutation.scores.assertion_share if mutation else None,
                smells=len(report.smells.findings),
                high_smells=report.smells.counts.get("high", 0),
                killed=len(killed[path]),
                only_it_kills=sorted(killed[path] - others),
                seconds=round(sum(report.timings.values()), 1),
                rating=report.gate.rating.level if report.gate.rating else "-",
            )
        )
    first = reports[0]
    return (
        Comparison(
            code_under_test=first.project.source_paths,
            mutants=len(mutant_sets[0]),
            same_mutants=len(set(mutant_sets)) == 1,
            suites=rows,
        ),
        reports,
    )
