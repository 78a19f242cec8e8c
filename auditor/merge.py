"""`audit merge`: combine the shard reports of a CI matrix into the report an unsharded
run would have written (same mutants, statuses and scores; the gate evaluated again)."""

from __future__ import annotations

from pathlib import Path

from auditor.checks import assertion_evidence
from auditor.config import GateConfig
from auditor.engine import scoring
from auditor.errors import MergeError
from auditor.gate import evaluate
from auditor.report import MutationSection, Report, Scope


def _shard_of(report: Report, path: Path) -> tuple[int, int]:
    mutation = report.mutation
    if mutation is None or mutation.scope.kind != "shard" or not mutation.scope.shard:
        raise MergeError(f"{path} is not a shard report (run with --shard K/N)")
    if mutation.estimate is not None:
        raise MergeError(f"{path} holds a sampled estimate; only exact shards merge")
    index, total = mutation.scope.shard.split("/")
    return int(index), int(total)


def shard_mutation(report: Report) -> MutationSection:
    assert report.mutation is not None  # checked by _shard_of
    return report.mutation


def merge_reports(reports: list[tuple[Path, Report]]) -> Report:
    if not reports:
        raise MergeError("no shard reports given")
    shards = {}
    totals = set()
    for path, report in reports:
        index, total = _shard_of(report, path)
        if index in shards:
            raise MergeError(f"shard {index}/{total} given twice ({shards[index][0]}, {path})")
        shards[index] = (path, report)
        totals.add(total)
    if len(totals) != 1:
        raise MergeError(f"shards of different splits: /{', /'.join(map(str, sorted(totals)))}")
    total = totals.pop()
    missing = sorted(set(range(1, total + 1)) - set(shards))
    if missing:
        raise MergeError(f"missing shard(s) {', '.join(f'{i}/{total}' for i in missing)}")
    first_path, first = shards[1]
    for path, report in (shards[index] for index in sorted(shards)):
        if report.sources != first.sources or report.project.test_files != first.project.test_files:
            raise MergeError(f"{path} audited different code or tests than {first_path}")
    sections = [shard_mutation(shards[index][1]) for index in sorted(shards)]
    mutants = sorted(
        (mutant for section in sections for mutant in section.mutants),
        key=lambda mutant: mutant.id,
    )
    passing = [t.nodeid for t in first.baseline.tests if t.reliable]
    mutation = MutationSection(
        **scoring.derived_fields(
            mutants,
            passing,
            sections[0].targeted.files if sections[0].targeted else (),
            sections[0].all_killers,
        ),
        cache_hits=sum(section.cache_hits for section in sections),
        jobs=sum(section.jobs for section in sections),
        duration=max(section.duration for section in sections),
        mutants_per_second=round(sum(section.mutants_per_second for section in sections), 2),
        scope=Scope(kind="all", planned=sections[0].scope.planned, selected=len(mutants)),
        checks=assertion_evidence(mutants, Path(first.project.root), first.project.test_files),
    )
    gate_config = GateConfig.model_validate(first.config.get("gate", {}))
    gate = evaluate(gate_config, first.baseline, first.coverage, first.smells, mutation)
    timings: dict[str, float] = {}
    for _, report in shards.values():
        for stage, seconds in report.timings.items():
            timings[stage] = max(timings.get(stage, 0.0), seconds)
    complete = all(report.status == "complete" for _, report in shards.values())
    return first.model_copy(
        update={
            "status": "complete" if complete else "incomplete",
            "mutation": mutation,
            "gate": gate,
            "timings": dict(sorted(timings.items())),
            "config": {**first.config, "shard": None},
        }
    )
