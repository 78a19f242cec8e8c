"""The quality gate: thresholds from config checked against the report so far."""

from __future__ import annotations

from auditor.config import GateConfig
from auditor.report import (
    BaselineSection,
    CoverageSection,
    GateCondition,
    GateSection,
    MutationSection,
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


def _mutation_conditions(
    config: GateConfig, mutation: MutationSection | None
) -> list[GateCondition]:
    wanted = [
        config.min_mutation_score,
        config.min_covered_score,
        config.max_surviving,
        config.max_pseudo_tested,
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
    scores = mutation.scores
    if config.min_mutation_score is not None:
        conditions.append(
            _at_least("min_mutation_score", config.min_mutation_score, scores.score or 0.0)
        )
    if config.min_covered_score is not None:
        conditions.append(
            _at_least("min_covered_score", config.min_covered_score, scores.covered_score or 0.0)
        )
    if config.max_surviving is not None:
        conditions.append(_at_most("max_surviving", config.max_surviving, scores.counts.survived))
    if config.max_pseudo_tested is not None:
        conditions.append(
            _at_most("max_pseudo_tested", config.max_pseudo_tested, len(mutation.pseudo_tested))
        )
    return conditions


def evaluate(
    config: GateConfig,
    baseline: BaselineSection,
    coverage: CoverageSection,
    smells: SmellsSection,
    mutation: MutationSection | None = None,
) -> GateSection:
    conditions = []
    if config.min_line_coverage is not None:
        conditions.append(
            _at_least("min_line_coverage", config.min_line_coverage, coverage.totals.line_percent)
        )
    if config.min_branch_coverage is not None:
        conditions.append(
            _at_least(
                "min_branch_coverage", config.min_branch_coverage, coverage.totals.branch_percent
            )
        )
    if config.max_failing_tests is not None:
        conditions.append(
            _at_most("max_failing_tests", config.max_failing_tests, failing_tests(baseline))
        )
    for severity, limit in sorted(config.max_smells.items()):
        conditions.append(_at_most(f"max_smells.{severity}", limit, smells.counts[severity]))
    conditions += _mutation_conditions(config, mutation)
    verdict = "pass" if all(condition.passed for condition in conditions) else "fail"
    return GateSection(verdict=verdict, conditions=conditions)
