"""`audit merge`: combine the shard reports of a CI matrix into the report an unsharded
run would have written (same mutants, statuses and scores; the gate evaluated again)."""

from __future__ import annotations

from pathlib import Path

from auditor.config import GateConfig
from auditor.errors import MergeError
from auditor.evidence.checks import assertion_evidence
from auditor.evidence.provenance import scorecards
from auditor.gate import evaluate
from auditor.mutation import scoring
from auditor.probes.stage import counts_of
from auditor.report import (
    MutationSection,
    ProbesSection,
    Report,
    Scope,
    SmellsSection,
    TypeCheckSummary,
    read_report,
)
from auditor.smells.analyzer import smells_section
from auditor.smells.evidence import PROVEN_BY_MUTANTS, with_mutation_evidence


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
    """One report from the shards of one run: their mutants scored together, the probes'
    witnesses and the generators' scorecards joined, and the gate evaluated again as an
    unsharded run would (the ratchet and per-generator thresholds included)."""
    shards = _shards_in_order(reports)
    first = shards[0]
    root = Path(first.project.root)
    mutation = _merged_mutation(first, [shard_mutation(report) for report in shards])
    config = first.config
    smells = with_mutation_evidence(
        _static_smells(first.smells), mutation, root, config.get("disable_smells", [])
    )
    probes = _merged_probes([report.probes for report in shards if report.probes is not None])
    origins = first.provenance
    if origins is not None:
        cards = scorecards(origins.files, first.baseline, smells, mutation)
        origins = origins.model_copy(update={"generators": cards})
    timings: dict[str, float] = {}
    for report in shards:
        for stage, seconds in report.timings.items():
            timings[stage] = max(timings.get(stage, 0.0), seconds)
    complete = all(report.status == "complete" for report in shards)
    merged = first.model_copy(
        update={
            "status": "complete" if complete else "incomplete",
            "mutation": mutation,
            "smells": smells,
            "probes": probes,
            "provenance": origins,
            "timings": dict(sorted(timings.items())),
            "config": {**config, "shard": None},
        }
    )
    gate_config = GateConfig.model_validate(config.get("gate", {}))
    previous = None
    if gate_config.baseline_report:
        previous = read_report(root / gate_config.baseline_report, "baseline report")
    return merged.model_copy(update={"gate": evaluate(gate_config, merged, previous)})


def _shards_in_order(reports: list[tuple[Path, Report]]) -> list[Report]:
    """Every shard of one split, once each, of the same code and tests; by shard number."""
    if not reports:
        raise MergeError("no shard reports given")
    shards: dict[int, tuple[Path, Report]] = {}
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
    return [shards[index][1] for index in sorted(shards)]


def _merged_mutation(first: Report, sections: list[MutationSection]) -> MutationSection:
    mutants = sorted(
        (mutant for section in sections for mutant in section.mutants),
        key=lambda mutant: mutant.id,
    )
    passing = [t.nodeid for t in first.baseline.tests if t.reliable]
    return MutationSection(
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
        type_check=_merged_type_check(sections),
    )


def _merged_type_check(sections: list[MutationSection]) -> TypeCheckSummary | None:
    """Each shard type-checks its own mutants: the counts add up; the time it cost and
    saved is the largest shard's, as the merged report's stage timings are."""
    summaries = [section.type_check for section in sections if section.type_check is not None]
    if not summaries:
        return None
    saved = [summary.saved for summary in summaries if summary.saved is not None]
    return TypeCheckSummary(
        checker=summaries[0].checker,
        checked=sum(summary.checked for summary in summaries),
        rejected=sum(summary.rejected for summary in summaries),
        duration=max(summary.duration for summary in summaries),
        cached=sum(summary.cached for summary in summaries),
        saved=max(saved) if saved else None,
    )


def _static_smells(smells: SmellsSection) -> SmellsSection:
    """A shard's smells without those its own share of the mutants proved."""
    return smells_section(
        [smell for smell in smells.findings if smell.code != PROVEN_BY_MUTANTS],
        smells.unparsable,
    )


def _merged_probes(sections: list[ProbesSection]) -> ProbesSection | None:
    """Every shard probes the same functions; each searched witnesses for its survivors."""
    if not sections:
        return None
    functions = {(f.file, f.line, f.function): f for s in sections for f in s.functions}
    findings = {
        (f.file, f.line, f.function, f.kind, f.message): f for s in sections for f in s.findings
    }
    witnesses = {w.mutant_id: w for s in sections for w in s.witnesses}
    kept_findings = [findings[key] for key in sorted(findings)]
    kept_witnesses = [witnesses[key] for key in sorted(witnesses)]
    return ProbesSection(
        functions=[functions[key] for key in sorted(functions)],
        findings=kept_findings,
        witnesses=kept_witnesses,
        counts=counts_of(kept_findings, kept_witnesses),
        max_examples=sections[0].max_examples,
        duration=max(s.duration for s in sections),
        interrupted=any(s.interrupted for s in sections),
        stopped_by_budget=any(s.stopped_by_budget for s in sections),
    )
