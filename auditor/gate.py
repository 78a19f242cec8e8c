"""The quality gate: thresholds from config checked against the report so far."""

from __future__ import annotations

from auditor.config import GateConfig
from auditor.report import (
    BaselineSection,
    CoverageSection,
    GateCondition,
    GateSection,
    SmellsSection,
)


def _at_least(name: str, threshold: float, actual: float, unit: str = "%") -> GateCondition:
    passed = actual >= threshold
    relation = ">=" if passed else "<"
    return GateCondition(
        name=name,
        threshold=threshold,
        actual=actual,
        passed=passed,
        message=f"{name}: {actual:g}{unit} {relation} {threshold:g}{unit}",
    )


def _at_most(name: str, threshold: float, actual: float) -> GateCondition:
    passed = actual <= threshold
    relation = "<=" if passed else ">"
    return GateCondition(
        name=name,
        threshold=threshold,
        actual=actual,
        passed=passed,
        message=f"{name}: {actual:g} {relation} {threshold:g}",
    )


def failing_tests(baseline: BaselineSection) -> int:
    """Tests that did not pass (skips aside) plus files that could not be collected."""
    red = sum(1 for test in baseline.tests if test.outcome not in ("passed", "skipped"))
    return red + len(baseline.collection_errors)


def evaluate(
    config: GateConfig,
    baseline: BaselineSection,
    coverage: CoverageSection,
    smells: SmellsSection,
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
    verdict = "pass" if all(condition.passed for condition in conditions) else "fail"
    return GateSection(verdict=verdict, conditions=conditions)
