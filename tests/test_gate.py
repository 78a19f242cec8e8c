from auditor.config import GateConfig
from auditor.gate import evaluate
from auditor.report import (
    BaselineSection,
    CollectionError,
    CoverageCounts,
    CoverageSection,
    SmellsSection,
    TestResult,
)


def counts(line: float, branch: float) -> CoverageCounts:
    return CoverageCounts(
        statements=100,
        covered_lines=int(line),
        branches=10,
        covered_branches=int(branch / 10),
        line_percent=line,
        branch_percent=branch,
    )


def baseline(outcomes: list[str], collection_errors: int = 0) -> BaselineSection:
    tests = [
        TestResult(nodeid=f"t.py::test_{i}", file="t.py", outcome=o, duration=0.0)
        for i, o in enumerate(outcomes)
    ]
    return BaselineSection(
        tests=tests,
        collection_errors=[
            CollectionError(file=f"c{i}.py", message="x") for i in range(collection_errors)
        ],
        passed=outcomes.count("passed"),
        excluded=len(outcomes) - outcomes.count("passed"),
        restarts=0,
        import_time_lines={},
    )


SMELLS = SmellsSection(findings=[], counts={"high": 2, "medium": 0, "low": 5}, unparsable=[])
COVERAGE = CoverageSection(totals=counts(85.0, 60.0), files=[])


def test_no_thresholds_pass_with_no_conditions():
    gate = evaluate(GateConfig(), baseline(["passed"]), COVERAGE, SMELLS)
    assert (gate.verdict, gate.conditions) == ("pass", [])


def test_coverage_below_threshold_fails_with_the_numbers():
    gate = evaluate(GateConfig(min_line_coverage=90), baseline(["passed"]), COVERAGE, SMELLS)
    assert gate.verdict == "fail"
    assert gate.conditions[0].message == "min_line_coverage: 85% < 90%"


def test_coverage_at_threshold_passes():
    gate = evaluate(GateConfig(min_branch_coverage=60), baseline(["passed"]), COVERAGE, SMELLS)
    assert gate.verdict == "pass"


def test_failing_tests_count_red_crashed_and_uncollectable_but_not_skipped():
    run = baseline(["passed", "failed", "crashed", "skipped"], collection_errors=1)
    gate = evaluate(GateConfig(max_failing_tests=2), run, COVERAGE, SMELLS)
    assert gate.conditions[0].actual == 3
    assert gate.verdict == "fail"


def test_smell_limits_apply_per_severity():
    config = GateConfig(max_smells={"high": 2, "low": 4})
    gate = evaluate(config, baseline(["passed"]), COVERAGE, SMELLS)
    assert [(c.name, c.passed) for c in gate.conditions] == [
        ("max_smells.high", True),
        ("max_smells.low", False),
    ]
