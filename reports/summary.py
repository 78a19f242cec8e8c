"""Headline figures every renderer shows, computed once from the report.

A figure knows which direction is better, so a comparison with a previous report can say
whether a change is an improvement without each renderer deciding again."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from auditor.report import (
    Candidate,
    CheckEvidence,
    GeneratorCard,
    Mutant,
    MutationScores,
    MutationSection,
    Report,
)


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    value: float | None
    unit: Literal["%", ""]
    better: Literal["higher", "lower"]
    meaning: str

    @property
    def text(self) -> str:
        if self.value is None:
            return "-"
        return f"{self.value:.1f}%" if self.unit == "%" else f"{self.value:g}"


@dataclass(frozen=True)
class Change:
    figure: Figure
    before: float | None

    @property
    def delta(self) -> float | None:
        if self.figure.value is None or self.before is None:
            return None
        return round(self.figure.value - self.before, 2)

    @property
    def direction(self) -> Literal["better", "worse", "same", "new"]:
        delta = self.delta
        if delta is None:
            return "new"
        if delta == 0:
            return "same"
        improved = delta > 0 if self.figure.better == "higher" else delta < 0
        return "better" if improved else "worse"

    @property
    def text(self) -> str:
        delta = self.delta
        if delta is None:
            return ""
        unit = " pts" if self.figure.unit == "%" else ""
        return f"{delta:+g}{unit}"


def _targeted_score(report: Report) -> float | None:
    mutation = report.mutation
    return mutation.targeted.scores.score if mutation and mutation.targeted else None


def _targeted_label(report: Report) -> str:
    """Over how many modules, and whether the gate's mutation thresholds use it."""
    mutation = report.mutation
    if mutation is None or mutation.targeted is None:
        return "targeted score"
    count = len(mutation.targeted.files)
    gated = report.config.get("gate", {}).get("gate_on", "targeted") == "targeted"
    modules = f"{count} module{'s' if count != 1 else ''} the tests import"
    return f"targeted score ({modules}{', gated' if gated else ''})"


def _targeted_meaning(report: Report) -> str:
    """Which modules the targeted score is over, and whether the gate uses it."""
    mutation = report.mutation
    if mutation is None or mutation.targeted is None:
        return "the tests import no module of the code under test"
    files = mutation.targeted.files
    named = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    gate = report.config.get("gate", {}).get("gate_on", "targeted")
    used = "the gate's mutation thresholds use it" if gate == "targeted" else "not gated"
    return f"injected bugs detected in the modules the tests import ({named}); {used}"


def _killing_share(report: Report) -> float | None:
    if report.mutation is None or not report.mutation.tests:
        return None
    killing = sum(test.state == "killing" for test in report.mutation.tests)
    return round(100.0 * killing / len(report.mutation.tests), 2)


@dataclass(frozen=True)
class HeadlineScores:
    """The scores every output shows: the estimate's where the run sampled (the mutants
    that ran are a sample, their raw score is not the suite's), else the measured ones."""

    score: float | None
    covered_score: float | None
    survived: float | None
    estimated: bool


def headline_scores(mutation: MutationSection | None) -> HeadlineScores:
    if mutation is None:
        return HeadlineScores(None, None, None, estimated=False)
    estimate = mutation.estimate
    if estimate is not None:
        return HeadlineScores(
            estimate.score, estimate.covered_score, round(estimate.survived), estimated=True
        )
    scores = mutation.scores
    return HeadlineScores(
        scores.score, scores.covered_score, scores.counts.survived, estimated=False
    )


def figures(report: Report) -> list[Figure]:
    """The headline figures, in the order every output shows them."""
    return [*_coverage_figures(report), *_mutation_figures(report), *_smell_figures(report)]


def _coverage_figures(report: Report) -> list[Figure]:
    totals = report.coverage.totals
    return [
        Figure(
            "line_coverage",
            "line coverage",
            totals.line_percent,
            "%",
            "higher",
            "lines the passing tests run",
        ),
        Figure(
            "branch_coverage",
            "branch coverage",
            totals.branch_percent,
            "%",
            "higher",
            "branch directions the passing tests take",
        ),
    ]


def _mutation_figures(report: Report) -> list[Figure]:
    mutation = report.mutation
    headline = headline_scores(mutation)
    estimated = " (estimated from a sample)" if headline.estimated else ""
    marked = " (ESTIMATE)" if headline.estimated else ""
    scores = mutation.scores if mutation else None
    return [
        Figure(
            "mutation_score",
            "mutation score" + marked,
            headline.score,
            "%",
            "higher",
            "injected bugs the suite detects, of all valid mutants" + estimated,
        ),
        Figure(
            "targeted_score",
            _targeted_label(report),
            _targeted_score(report),
            "%",
            "higher",
            _targeted_meaning(report),
        ),
        Figure(
            "assertion_score",
            "score by assertion kills",
            scores.assertion_score if scores else None,
            "%",
            "higher",
            "the mutation score counting only the mutants a failing check caught",
        ),
        Figure(
            "assertion_share",
            "kills by assertion",
            scores.assertion_share if scores else None,
            "%",
            "higher",
            "detected mutants a failing check caught; the rest only made the code raise, "
            "crash or hang, which a test with no assertion notices too",
        ),
        Figure(
            "covered_score",
            "score on covered code" + marked,
            headline.covered_score,
            "%",
            "higher",
            "injected bugs detected in code the tests run: how well they check what they run"
            + estimated,
        ),
        *_gap_figures(report, estimated),
    ]


def _gap_figures(report: Report, estimated: str) -> list[Figure]:
    """What the suite runs without checking: the oracle gap, the tests that kill nothing,
    the survivors and the pseudo-tested functions."""
    mutation = report.mutation
    return [
        Figure(
            "oracle_gap",
            "oracle gap",
            mutation.oracle_gap if mutation else None,
            "%",
            "lower",
            "covered lines where no injected bug is detected: run, but not checked",
        ),
        Figure(
            "killing_tests",
            "killing tests" if not first_killer_only(report) else "tests that killed first",
            _killing_share(report),
            "%",
            "higher",
            "tests that caught at least one injected bug by a failing check"
            + (FIRST_KILLER_NOTE if first_killer_only(report) else ""),
        ),
        Figure(
            "surviving",
            "surviving mutants",
            headline_scores(mutation).survived,
            "",
            "lower",
            "injected bugs the tests run over without noticing" + estimated,
        ),
        Figure(
            "pseudo_tested",
            "pseudo-tested functions",
            len(mutation.pseudo_tested) if mutation else None,
            "",
            "lower",
            "functions whose whole body can be removed without a test failing",
        ),
    ]


def _smell_figures(report: Report) -> list[Figure]:
    counts = report.smells.counts
    meanings = {
        "high": "tests that check nothing but that the code does not raise",
        "medium": "weak checks: truthiness, type-only, mocks only",
        "low": "style that hides intent",
    }
    return [
        Figure(
            f"smells_{severity}",
            f"{severity}-severity smells",
            counts[severity],
            "",
            "lower",
            meaning,
        )
        for severity, meaning in meanings.items()
    ]


def suite_rows(report: Report) -> list[tuple[str, str]]:
    """What became of the tests themselves, before any figure: label and value."""
    baseline = report.baseline
    return [
        ("tests passed", f"{baseline.passed} / {len(baseline.tests)}"),
        ("tests excluded (red, crashed, blocked)", str(baseline.excluded)),
        ("collection errors", str(len(baseline.collection_errors))),
        ("flaky or order-dependent (kill nothing)", str(len(baseline.flaky))),
    ]


def outcome_rows(report: Report) -> list[tuple[str, str]]:
    """The mutants' verdicts and the tests' states, counted: label and value."""
    mutation = report.mutation
    if mutation is None:
        return []
    counts = mutation.scores.counts
    states = Counter(test.state for test in mutation.tests)
    return [
        (
            "mutants killed / survived / no coverage / timeout",
            f"{counts.killed} / {counts.survived} / {counts.no_coverage} / {counts.timeout}",
        ),
        (
            "tests killing / covering only / not covering",
            f"{states['killing']} / {states['covering']} / {states['not_covering']}",
        ),
    ]


def compare(report: Report, previous: Report | None) -> list[Change]:
    before = {figure.key: figure.value for figure in figures(previous)} if previous else {}
    return [Change(figure, before.get(figure.key)) for figure in figures(report)]


def by_place(mutants: list[Mutant]) -> list[Mutant]:
    """By file, line and column: the order a reader works through them."""
    return sorted(mutants, key=lambda mutant: (mutant.file, mutant.line, mutant.col, mutant.id))


def generator_cards(report: Report) -> list[GeneratorCard]:
    """The scorecards, when some test file is attributed to a generator."""
    provenance = report.provenance
    if provenance is None or all(c.generator == "unattributed" for c in provenance.generators):
        return []
    return provenance.generators


def percent_or_dash(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def carrying_note(report: Report) -> str | None:
    """What carries the suite, when every killer of every mutant is known."""
    mutation = report.mutation
    if mutation is None or not mutation.all_killers:
        return None
    tests = len(mutation.tests)
    subsumed = sum(bool(test.subsumed_by) for test in mutation.tests)
    note = (
        f"these {len(mutation.carrying)} of {tests} tests kill every mutant the suite kills; "
        f"{subsumed} tests add no kill of their own (another kills all theirs)"
    )
    if mutation.dominator_score is not None:
        note += (
            f"; dominator score {mutation.dominator_score:.1f}% "
            f"({mutation.dominators} minimal mutants killed)"
        )
    return note


@dataclass(frozen=True)
class SurvivorGroup:
    """The survivors of one function: what a new test aimed at it could kill."""

    file: str
    function: str
    survivors: list[Mutant]


def survivor_groups(report: Report) -> list[SurvivorGroup]:
    """Survivors grouped by function, the function with the most first: where one new
    test pays most. Module-level code (`<module>`: constants, declarations, tables)
    comes after every function: its survivors are the ones a test reaches least
    directly, and they would otherwise top the list by number alone."""
    groups: dict[tuple[str, str], list[Mutant]] = {}
    for mutant in survivors(report):
        groups.setdefault((mutant.file, mutant.function or "<module>"), []).append(mutant)
    ranked = sorted(
        groups.items(), key=lambda item: (item[0][1] == "<module>", -len(item[1]), item[0])
    )
    return [SurvivorGroup(file, function, found) for (file, function), found in ranked]


FIRST_KILLER_NOTE = (
    " (first killer only: a mutant's run stops at its first failing test, so a test or"
    " check another one beat to a mutant gets no credit for it; --all-killers for all)"
)


def first_killer_only(report: Report) -> bool:
    """Whether per-test and per-check figures count only each mutant's first killer."""
    return report.mutation is not None and not report.mutation.all_killers


def weak_checks_title(report: Report, count: int) -> str:
    """What the table of `weak_checks` is: a verdict (a weak oracle) only where every
    killer is known; otherwise what was seen, first killer only."""
    if first_killer_only(report):
        return f"checks never the first to fail, passing on survivors ({count}; first killer only)"
    return f"checks that caught nothing, passing on survivors ({count})"


def weak_checks(report: Report) -> list[CheckEvidence]:
    """Checks that caught no mutant and held for survivors, most survivors first."""
    if report.mutation is None:
        return []
    weak = [check for check in report.mutation.checks if not check.caught and check.held]
    return sorted(weak, key=lambda check: (-check.held, check.file, check.line))


def survivors(report: Report) -> list[Mutant]:
    if report.mutation is None:
        return []
    return by_place([mutant for mutant in report.mutation.mutants if mutant.status == "Survived"])


def failed_conditions(report: Report) -> list[str]:
    reasons = [condition.message for condition in report.gate.conditions if not condition.passed]
    if report.status != "complete":
        reasons.insert(0, "the run is incomplete" + budget_note(report))
    return reasons


UNRATED = "UNRATED"
"""The verdict of a run with no thresholds and no rating (the rating needs mutants)."""
UNRATED_NOTE = "no thresholds configured, and no rating without the mutation run"


def banner(report: Report) -> str:
    """What the verdict line says: FAIL when a condition failed or the run is incomplete,
    PASS when thresholds were set and hold, else the suite's rating, or UNRATED without
    one (a completed run with no thresholds has passed nothing)."""
    if failed_conditions(report):
        return "FAIL"
    configured = [c for c in report.gate.conditions if c.name != "max_collection_errors"]
    rating = report.gate.rating
    if configured:
        return "PASS"
    return UNRATED if rating is None else rating.level.upper()


def budget_note(report: Report) -> str:
    """Which stages the time budget stopped, as a parenthesis ('' when none)."""
    if not report.cut_by_budget:
        return ""
    return f" (the time budget stopped: {', '.join(report.cut_by_budget)})"


def code_under_test(report: Report) -> str:
    """Which code the figures are about, and why that code: one line."""
    project = report.project
    line = f"code under test: {', '.join(project.source_paths)}"
    if project.scope_reason:
        line += f" ({project.scope_reason})"
    if project.left_out:
        left = "; ".join(f"{item.path}: {item.reason}" for item in project.left_out)
        line += f"; left out: {left}"
    if project.set_aside:
        options = ", ".join(project.set_aside)
        line += f"; pytest options set aside (audit measures coverage itself): {options}"
    return line


def scope_notes(report: Report) -> list[str]:
    """What the mutation figures are about when they are not the whole project, measured."""
    mutation = report.mutation
    if mutation is None:
        return []
    notes = []
    scope = mutation.scope
    if scope.kind == "diff":
        called = ""
        if scope.called_by_changed_tests:
            tests = ", ".join(scope.changed_tests)
            called = f" and {scope.called_by_changed_tests} in functions that {tests} call"
        notes.append(
            f"patch scores: {scope.selected} of the {scope.planned} mutants of the files the "
            f"change reaches: {scope.on_changed_lines} on lines changed since "
            f"{scope.diff_ref} ({len(scope.changed_files)} files){called}"
        )
        known = mutation.project_known
        if known is not None and known.score is not None:
            counts = known.counts
            judged = sum(counts.model_dump().values()) - counts.ignored
            notes.append(
                f"whole project, the last known verdict of {judged} mutants (this run's and "
                f"earlier runs'): mutation score {known.score:.1f}%"
            )
    elif scope.kind == "shard":
        notes.append(
            f"shard {scope.shard}: {scope.selected} of {scope.planned} mutants; "
            "`audit merge` combines the shards"
        )
    estimate = mutation.estimate
    if estimate is not None:
        notes.append(
            f"ESTIMATE from a stratified sample of {estimate.sampled} of {estimate.population} "
            f"mutants: mutation score {estimate.score:.1f}% (95% interval "
            f"{estimate.score_low:.1f}-{estimate.score_high:.1f}%), score on covered code "
            f"{estimate.covered_score:.1f}% ({estimate.covered_low:.1f}-"
            f"{estimate.covered_high:.1f}%); the gate uses the pessimistic bound"
        )
    if mutation.data_tables:
        tables = mutation.data_tables
        entries = sum(table.entries for table in tables)
        mutated = sum(table.mutated_entries for table in tables)
        left_out = sum(table.left_out for table in tables)
        noun = "table" if len(tables) == 1 else "tables"
        notes.append(
            f"data {noun}: {mutated} of {entries} entries mutated in {len(tables)} "
            f"module-level {noun} ({left_out} mutants of the others not made); "
            "`--mutate-data all` mutates every entry"
        )
    if mutation.interrupted:
        notes.append("INTERRUPTED (Ctrl-C): only the mutants that finished are reported")
    if mutation.stopped_by_budget:
        notes.append("the time budget ran out before every selected mutant ran")
        if estimate is None:
            notes.append("too few verdicts within the budget for an estimate")
    return notes


FINDING_TITLES = {
    "unhandled_crash": "unhandled crash",
    "untested_error_path": "untested error path",
    "untried_edge_class": "edge class never tried",
}


@dataclass(frozen=True)
class ProbeSummary:
    crashes: int
    error_paths: int
    edges: int
    witnessed: int
    likely_equivalent: int
    not_shown: int
    """Survivors no probe input reached: nothing is known about them."""
    unprobeable: int

    @property
    def findings(self) -> int:
        return self.crashes + self.error_paths + self.edges

    @property
    def survivors(self) -> int:
        return self.witnessed + self.likely_equivalent + self.not_shown + self.unprobeable

    def text(self) -> str:
        return (
            f"{self.crashes} unhandled crashes, {self.error_paths} untested error paths, "
            f"{self.edges} edge classes never tried; a witness input for {self.witnessed} "
            f"of {self.survivors} surviving mutants, {self.likely_equivalent} likely "
            f"equivalent, {self.not_shown + self.unprobeable} not shown by the probes"
        )


def probe_summary(report: Report) -> ProbeSummary | None:
    probes = report.probes
    if probes is None:
        return None
    counts = probes.counts
    return ProbeSummary(
        crashes=counts.get("unhandled_crash", 0),
        error_paths=counts.get("untested_error_path", 0),
        edges=counts.get("untried_edge_class", 0),
        witnessed=counts.get("witness found", 0),
        likely_equivalent=counts.get("witness likely_equivalent", 0),
        not_shown=counts.get("witness not_shown", 0),
        unprobeable=counts.get("witness not probeable", 0),
    )


@dataclass(frozen=True)
class HardeningSummary:
    """Escalation in a line: tests accepted, and the measured score of the hardened
    modules before and after (all their mutants together)."""

    mode: str
    generated: int
    """Distinct candidates."""
    repeats: int
    accepted: int
    suspected_bugs: int
    modules: int
    before: float | None
    after: float | None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return round(self.after - self.before, 2)

    def text(self) -> str:
        source = "deep model" if self.mode == "model" else "witness tests (offline)"
        text = f"{self.accepted} of {self.generated} candidate tests accepted ({source})"
        if self.repeats:
            text += f", {self.repeats} repeated proposals not counted"
        if self.delta is not None:
            text += (
                f"; escalated modules {self.before:g}% -> {self.after:g}% mutation score"
                f" ({self.modules} modules)"
            )
        if self.suspected_bugs:
            text += f"; {self.suspected_bugs} suspected bugs or wrong oracles"
        return text


def hardening_summary(report: Report) -> HardeningSummary | None:
    escalation = report.escalation
    if escalation is None:
        return None
    hardened = [m for m in escalation.modules if m.after is not None and m.before is not None]

    def pooled(scores: list[MutationScores]) -> float | None:
        counts = [s.counts for s in scores]
        detected = sum(c.killed + c.timeout for c in counts)
        valid = detected + sum(c.survived + c.no_coverage for c in counts)
        return round(100.0 * detected / valid, 2) if valid else None

    return HardeningSummary(
        mode=escalation.mode,
        generated=len(escalation.candidates),
        repeats=escalation.repeats,
        accepted=sum(c.accepted for c in escalation.candidates),
        suspected_bugs=sum(c.suspected_bug for c in escalation.candidates),
        modules=len(hardened),
        before=pooled([m.before for m in hardened if m.before]) if hardened else None,
        after=pooled([m.after for m in hardened if m.after]) if hardened else None,
    )


def accepted(report: Report) -> list[Mutant]:
    """Survivors someone accepted, with their reasons (`auditor.evidence.acceptance`), by place."""
    return by_place([m for m in report.mutation.mutants if m.accepted]) if report.mutation else []


def acceptance_note(report: Report) -> str | None:
    """Ledger entries that no longer apply: their mutated lines changed."""
    expired = report.mutation.expired_acceptances if report.mutation else []
    if not expired:
        return None
    return (
        f"{len(expired)} accepted mutant(s) in .audit/accepted.toml expired: their lines "
        "changed, so they count again until accepted anew"
    )


def candidate_value(candidate: Candidate) -> str:
    """What an accepted candidate adds, in words: the evidence it was kept for."""
    parts = []
    if candidate.kills:
        parts.append(f"kills {len(candidate.kills)} the suite missed")
    if candidate.checked_kills:
        parts.append(f"its checks catch {len(candidate.checked_kills)} the suite only crashed on")
    lines = sum(len(numbers) for numbers in candidate.new_lines.values())
    arcs = sum(len(pairs) for pairs in candidate.new_arcs.values())
    if lines or arcs:
        parts.append(f"covers {lines} new lines and {arcs} new branches")
    return "; ".join(parts)
