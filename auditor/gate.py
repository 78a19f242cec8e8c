"""The quality gate: thresholds from config checked against the report so far."""

from __future__ import annotations

import math
from typing import Protocol

from auditor.config import GateConfig
from auditor.report import (
    BaselineSection,
    CoverageSection,
    EscalationSection,
    GateCondition,
    GateSection,
    MutationScores,
    MutationSection,
    ProbesSection,
    ProvenanceSection,
    Rating,
    Report,
    Smell,
    SmellsSection,
)


def _condition(
    name: str, threshold: float, actual: float, at_least: bool, unit: str = ""
) -> GateCondition:
    passed = actual >= threshold if at_least else actual <= threshold
    relation = {(True, True): ">=", (True, False): "<", (False, True): "<=", (False, False): ">"}[
        (at_least, passed)
    ]
    return GateCondition(
        name=name,
        threshold=threshold,
        actual=actual,
        passed=passed,
        message=f"{name}: {actual:g}{unit} {relation} {threshold:g}{unit}",
    )


def _at_least(name: str, threshold: float, actual: float) -> GateCondition:
    return _condition(name, threshold, actual, at_least=True, unit="%")


def _at_most(name: str, threshold: float, actual: float) -> GateCondition:
    return _condition(name, threshold, actual, at_least=False)


def failing_tests(baseline: BaselineSection) -> int:
    """Tests that did not pass (skips aside) plus files that could not be collected."""
    red = sum(1 for test in baseline.tests if test.outcome not in ("passed", "skipped"))
    return red + len(baseline.collection_errors)


def _gated_scores(
    config: GateConfig, mutation: MutationSection, probes: ProbesSection | None
) -> tuple[MutationScores, list[str]]:
    """The scores the thresholds check, and what the condition messages say of them:
    over the targeted modules (unless `gate_on = "all"`, or the tests import none), and
    without the survivors the probes found no witness for when asked."""
    from auditor.mutation.scoring import scores

    notes = []
    mutants = mutation.mutants
    targeted = mutation.targeted
    if config.gate_on == "targeted" and targeted is not None:
        files = set(targeted.files)
        mutants = [m for m in mutants if m.file in files]
        count = len(targeted.files)
        notes.append(f"targeted: the {count} module{'s' if count != 1 else ''} the tests import")
    if config.exclude_likely_equivalent and probes is not None:
        equivalent = {w.mutant_id for w in probes.witnesses if w.status == "likely_equivalent"}
        mutants = [m for m in mutants if m.id not in equivalent]
        notes.append("likely-equivalent mutants left out")
    if mutants is mutation.mutants:
        return mutation.scores, notes
    return scores(mutants), notes


def _mutation_conditions(
    config: GateConfig, mutation: MutationSection | None, probes: ProbesSection | None = None
) -> list[GateCondition]:
    wanted = [
        config.min_mutation_score,
        config.min_covered_score,
        config.min_assertion_kill_share,
        config.max_surviving,
        config.max_pseudo_tested,
        config.max_accepted_percent,
    ]
    if all(value is None for value in wanted):
        return []
    if mutation is None:
        return [
            GateCondition(
                name="mutation",
                threshold=0,
                actual=0,
                passed=False,
                message="mutation thresholds are set but mutation testing did not run",
            )
        ]
    conditions = []
    estimate = mutation.estimate
    scores, notes = _gated_scores(config, mutation, probes if estimate is None else None)
    if estimate is not None:
        # An estimate is gated on its pessimistic 95% bound.
        score, covered = estimate.score_low, estimate.covered_low
        survived = math.ceil(estimate.survived_high)
    else:
        score, covered = scores.score or 0.0, scores.covered_score or 0.0
        survived = scores.counts.survived
    if config.min_mutation_score is not None:
        conditions.append(_at_least("min_mutation_score", config.min_mutation_score, score))
    if config.min_covered_score is not None:
        conditions.append(_at_least("min_covered_score", config.min_covered_score, covered))
    if config.min_assertion_kill_share is not None:
        share = scores.assertion_share if scores.assertion_share is not None else 0.0
        conditions.append(
            _at_least("min_assertion_kill_share", config.min_assertion_kill_share, share)
        )
    if config.max_surviving is not None:
        conditions.append(_at_most("max_surviving", config.max_surviving, survived))
    if config.max_pseudo_tested is not None:
        conditions.append(
            _at_most("max_pseudo_tested", config.max_pseudo_tested, len(mutation.pseudo_tested))
        )
    if config.max_accepted_percent is not None:
        accepted = sum(1 for m in mutation.mutants if m.accepted)
        counted = sum(1 for m in mutation.mutants if m.status not in ("Ignored", "CompileError"))
        share = 100 * accepted / (counted + accepted) if accepted else 0.0
        conditions.append(
            _condition(
                "max_accepted_percent", config.max_accepted_percent, round(share, 2), False, "%"
            )
        )
    if notes and estimate is None:
        conditions = [
            condition.model_copy(update={"message": f"{condition.message} ({'; '.join(notes)})"})
            if condition.name not in ("max_pseudo_tested", "max_accepted_percent")
            else condition
            for condition in conditions
        ]
    if estimate is not None:
        conditions = [
            condition.model_copy(
                update={"message": condition.message + " (95% bound of a sampled estimate)"}
            )
            if condition.name not in ("max_pseudo_tested", "max_accepted_percent")
            else condition
            for condition in conditions
        ]
    return conditions


def _probe_condition(limit: int, probes: ProbesSection | None) -> GateCondition:
    if probes is None:
        return GateCondition(
            name="max_unhandled_crashes",
            threshold=limit,
            actual=0,
            passed=False,
            message="max_unhandled_crashes is set but the probes did not run",
        )
    crashes = probes.counts.get("unhandled_crash", 0)
    return _at_most("max_unhandled_crashes", limit, crashes)


def _dropped(name: str, before: float | None, after: float | None, tolerance: float):
    if before is None or after is None:
        return None
    change = round(after - before, 2)
    passed = change >= -tolerance
    verb = "dropped" if change < 0 else "rose" if change > 0 else "held"
    return GateCondition(
        name=name,
        threshold=-tolerance,
        actual=change,
        passed=passed,
        message=f"{name}: {verb} {abs(change):g} pts ({before:g} -> {after:g}, "
        f"tolerance {tolerance:g})",
    )


def _smell_key(smell: Smell) -> tuple[str, str, str]:
    return smell.code, smell.file, smell.test


def ratchet(
    config: GateConfig,
    previous: Report,
    coverage: CoverageSection,
    smells: SmellsSection,
    mutation: MutationSection | None,
) -> list[GateCondition]:
    """Regressions against a previous report. Scores are compared only when both runs
    measured the same scope exactly (whole project, no sample); mutants by stable id."""
    conditions = []
    old = previous.mutation
    if old is not None and mutation is not None:
        was_detected = {m.id for m in old.mutants if m.status in ("Killed", "Timeout")}
        regressed = sorted(
            m.id for m in mutation.mutants if m.status == "Survived" and m.id in was_detected
        )
        condition = _at_most("ratchet.killed_now_survive", 0, len(regressed))
        if regressed:
            shown = ", ".join(regressed[:3]) + (" ..." if len(regressed) > 3 else "")
            condition.message += f" ({shown})"
        conditions.append(condition)
        exact = all(
            section.scope.kind == "all" and section.estimate is None for section in (old, mutation)
        )
        if exact:
            for name, before, after in (
                ("ratchet.mutation_score", old.scores.score, mutation.scores.score),
                ("ratchet.covered_score", old.scores.covered_score, mutation.scores.covered_score),
            ):
                found = _dropped(name, before, after, config.ratchet_tolerance)
                if found is not None:
                    conditions.append(found)
    line = _dropped(
        "ratchet.line_coverage",
        previous.coverage.totals.line_percent,
        coverage.totals.line_percent,
        config.ratchet_tolerance,
    )
    if line is not None:
        conditions.append(line)
    known = {_smell_key(smell) for smell in previous.smells.findings}
    for severity in sorted(set(config.ratchet_smells)):
        new = [s for s in smells.findings if s.severity == severity and _smell_key(s) not in known]
        conditions.append(_at_most(f"ratchet.new_smells.{severity}", 0, len(new)))
    return conditions


MIN_ASSERTION_SHARE = 25.0
"""Below this share of detected mutants caught by a failing check, a suite is `shallow`
whatever its score: its kills are the code raising, which needs no oracle."""
SCORE_FLOORS: tuple[tuple[str, float], ...] = (("strong", 80.0), ("adequate", 60.0), ("weak", 40.0))
"""The lowest mutation score (%) of each rating; below the last, `shallow`."""
MAX_HIGH_SMELLS_PER_TEST = 0.1
"""More high-severity smells per test than this and the rating is `weak` at best."""


def rate(
    config: GateConfig, mutation: MutationSection | None, smells: SmellsSection, tests: int
) -> Rating | None:
    """The suite's rating from the evidence (docs/evidence.md): the mutation score
    (targeted, unless `gate_on = "all"`), the share of its kills a failing check made, and
    how common high-severity smells are."""
    if mutation is None:
        return None
    scores, notes = _gated_scores(config, mutation, None)
    score = scores.score or 0.0
    detected = scores.counts.killed + scores.counts.timeout
    # None with mutants detected: verdicts that do not say how (mutmut's, imported).
    share = scores.assertion_share if detected else 0.0
    high = smells.counts.get("high", 0)
    level = next((name for name, floor in SCORE_FLOORS if score >= floor), "shallow")
    if share is not None and share < MIN_ASSERTION_SHARE:
        level = "shallow"
    elif high > MAX_HIGH_SMELLS_PER_TEST * max(tests, 1) and level in ("strong", "adequate"):
        level = "weak"
    # Name the score the rating is on: the banner shows it beside the whole project's.
    targeted = [note.removeprefix("targeted: ") for note in notes if note.startswith("targeted")]
    others = [note for note in notes if not note.startswith("targeted")]
    detail = "; ".join(targeted + others)
    shown = f"{'targeted' if targeted else 'mutation'} score {score:.1f}%"
    shown += f" ({detail})" if detail else ""
    kills = (
        "how its kills failed is not known (mutmut's verdicts)"
        if share is None
        else f"{share:.1f}% of its kills by a failing check"
    )
    reason = (
        f"{shown}, {kills}; {high} high-severity smell{'s' if high != 1 else ''} in {tests} tests"
    )
    return Rating(
        level=level,
        score=round(score, 2),
        assertion_share=None if share is None else round(share, 2),
        reason=reason,
    )


def _generator_conditions(
    config: GateConfig, provenance: ProvenanceSection | None
) -> list[GateCondition]:
    """The thresholds set per generator, on its scorecard; a generator no test file is
    attributed to has nothing to check."""
    cards = {card.generator: card for card in provenance.generators} if provenance else {}
    conditions = []
    for name, limits in sorted(config.generators.items()):
        card = cards.get(name)
        if card is None:
            continue
        checks = [
            ("min_assertion_kill_share", limits.min_assertion_kill_share, card.assertion_share),
            ("max_smells_per_test", limits.max_smells_per_test, card.smells_per_test),
            ("min_score_alone", limits.min_score_alone, card.score_alone),
        ]
        for key, limit, actual in checks:
            if limit is None:
                continue
            label = f"generators.{name}.{key}"
            if actual is None:
                conditions.append(
                    GateCondition(
                        name=label,
                        threshold=limit,
                        actual=0,
                        passed=False,
                        message=f"{label}: not measured"
                        + (" (it needs --all-killers)" if key == "min_score_alone" else ""),
                    )
                )
            elif key.startswith("max"):
                conditions.append(_at_most(label, limit, actual))
            else:
                conditions.append(_at_least(label, limit, actual))
    return conditions


class Evidence(Protocol):
    """What the gate reads: the sections of a report, finished or still being built."""

    @property
    def baseline(self) -> BaselineSection: ...
    @property
    def coverage(self) -> CoverageSection: ...
    @property
    def smells(self) -> SmellsSection: ...
    @property
    def mutation(self) -> MutationSection | None: ...
    @property
    def probes(self) -> ProbesSection | None: ...
    @property
    def provenance(self) -> ProvenanceSection | None: ...


def evaluate(config: GateConfig, report: Evidence, previous: Report | None = None) -> GateSection:
    """Every threshold set in `config`, checked against the report's sections; `previous`
    is the report the ratchet compares with."""
    conditions = _suite_conditions(config, report)
    conditions += _mutation_conditions(config, report.mutation, report.probes)
    if config.max_unhandled_crashes is not None:
        conditions.append(_probe_condition(config.max_unhandled_crashes, report.probes))
    if previous is not None:
        conditions += ratchet(config, previous, report.coverage, report.smells, report.mutation)
    conditions += _generator_conditions(config, report.provenance)
    verdict = "pass" if all(condition.passed for condition in conditions) else "fail"
    passed = sum(test.outcome == "passed" for test in report.baseline.tests)
    rating = rate(config, report.mutation, report.smells, passed)
    return GateSection(verdict=verdict, conditions=conditions, rating=rating)


def _suite_conditions(config: GateConfig, report: Evidence) -> list[GateCondition]:
    """Coverage, failing tests, collection errors and smells: what every run measures."""
    totals, baseline = report.coverage.totals, report.baseline
    conditions = []
    if config.min_line_coverage is not None:
        conditions.append(
            _at_least("min_line_coverage", config.min_line_coverage, totals.line_percent)
        )
    if config.min_branch_coverage is not None:
        conditions.append(
            _at_least("min_branch_coverage", config.min_branch_coverage, totals.branch_percent)
        )
    if config.max_failing_tests is not None:
        conditions.append(
            _at_most("max_failing_tests", config.max_failing_tests, failing_tests(baseline))
        )
    if baseline.collection_errors:  # checked by default: a file that never ran
        conditions.append(
            _at_most(
                "max_collection_errors",
                config.max_collection_errors,
                len(baseline.collection_errors),
            )
        )
    for severity, limit in sorted(config.max_smells.items()):
        conditions.append(_at_most(f"max_smells.{severity}", limit, report.smells.counts[severity]))
    return conditions


def require_escalation(gate: GateSection, escalation: EscalationSection) -> GateSection:
    """`--require-escalation`: the run fails unless hardening accepted at least one test."""
    accepted = sum(module.accepted for module in escalation.modules)
    condition = GateCondition(
        name="require_escalation",
        threshold=1,
        actual=accepted,
        passed=accepted >= 1,
        message=f"escalation accepted {accepted} tests (at least 1 required)",
    )
    conditions = [*gate.conditions, condition]
    verdict = "pass" if all(c.passed for c in conditions) else "fail"
    return GateSection(verdict=verdict, conditions=conditions, rating=gate.rating)
