from dataclasses import dataclass, field

from auditor.config import GateConfig
from auditor.gate import evaluate
from auditor.mutation.scoring import scores
from auditor.report import (
    BaselineSection,
    CollectionError,
    CoverageCounts,
    CoverageSection,
    Estimate,
    MutationSection,
    ProbeFinding,
    ProbesSection,
    ProvenanceSection,
    SmellsSection,
    TestResult,
    Witness,
)
from tests.conftest import a_mutant


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


@dataclass(frozen=True)
class Sections:
    """The report sections the gate reads, as a stage hands them over."""

    baseline: BaselineSection
    coverage: CoverageSection = field(default_factory=lambda: COVERAGE)
    smells: SmellsSection = field(default_factory=lambda: SMELLS)
    mutation: MutationSection | None = None
    probes: ProbesSection | None = None
    provenance: ProvenanceSection | None = None


def sections(run: BaselineSection | None = None, **given) -> Sections:
    return Sections(baseline=run or baseline(["passed"]), **given)


def test_no_thresholds_pass_with_no_conditions():
    gate = evaluate(GateConfig(), sections())
    assert (gate.verdict, gate.conditions) == ("pass", [])


def test_coverage_below_threshold_fails_with_the_numbers():
    gate = evaluate(GateConfig(min_line_coverage=90), sections())
    assert gate.verdict == "fail"
    assert gate.conditions[0].message == "min_line_coverage: 85% < 90%"


def test_coverage_at_threshold_passes():
    gate = evaluate(GateConfig(min_branch_coverage=60), sections())
    assert gate.verdict == "pass"


def test_failing_tests_count_red_crashed_and_uncollectable_but_not_skipped():
    run = baseline(["passed", "failed", "crashed", "skipped"], collection_errors=1)
    gate = evaluate(GateConfig(max_failing_tests=2), sections(run))
    assert gate.conditions[0].actual == 3
    assert gate.verdict == "fail"


def test_smell_limits_apply_per_severity():
    config = GateConfig(max_smells={"high": 2, "low": 4})
    gate = evaluate(config, sections())
    assert [(c.name, c.passed) for c in gate.conditions] == [
        ("max_smells.high", True),
        ("max_smells.low", False),
    ]


def _probes(crashes: int, equivalent: list[str]) -> ProbesSection:
    findings = [
        ProbeFinding(
            kind="unhandled_crash",
            file="m.py",
            function="f",
            line=i,
            message="unhandled ZeroDivisionError",
            input="f(0)",
            observed="raises ZeroDivisionError",
        )
        for i in range(crashes)
    ]
    witnesses = [Witness(mutant_id=key, status="likely_equivalent") for key in equivalent]
    counts = {"unhandled_crash": crashes, "witness likely_equivalent": len(equivalent)}
    return ProbesSection(
        functions=[],
        findings=findings,
        witnesses=witnesses,
        counts=counts,
        max_examples=100,
        duration=0.0,
    )


def _mutation(statuses: list[str]) -> MutationSection:
    mutants = [
        a_mutant(
            f"m{i}",
            file="m.py",
            operator="o",
            family="f",
            original="a",
            replacement="b",
            description="a -> b",
            status=status,
        )
        for i, status in enumerate(statuses)
    ]
    return MutationSection(
        scores=scores(mutants),
        mutants=mutants,
        files=[],
        functions=[],
        tests=[],
        pseudo_tested=[],
        paths={},
        cache_hits=0,
        jobs=1,
        duration=0.0,
        mutants_per_second=0.0,
    )


def test_max_unhandled_crashes_counts_the_probes_crashes():
    config = GateConfig(max_unhandled_crashes=1)
    failing = evaluate(config, sections(probes=_probes(2, [])))
    passing = evaluate(config, sections(probes=_probes(1, [])))
    assert (failing.verdict, passing.verdict) == ("fail", "pass")
    assert failing.conditions[0].message == "max_unhandled_crashes: 2 > 1"


def test_max_unhandled_crashes_fails_when_the_probes_did_not_run():
    gate = evaluate(GateConfig(max_unhandled_crashes=0), sections())
    assert gate.verdict == "fail"
    assert "probes did not run" in gate.conditions[0].message


def test_likely_equivalent_survivors_count_only_when_asked_to_be_left_out():
    mutation = _mutation(["Killed", "Survived", "Survived", "Survived"])
    probes = _probes(0, ["m2", "m3"])
    kept = GateConfig(min_mutation_score=50)
    left_out = GateConfig(min_mutation_score=50, exclude_likely_equivalent=True)
    assert evaluate(kept, sections(mutation=mutation, probes=probes)).verdict == "fail"
    gate = evaluate(left_out, sections(mutation=mutation, probes=probes))
    assert gate.verdict == "pass"
    assert gate.conditions[0].actual == 50.0
    assert "likely-equivalent mutants left out" in gate.conditions[0].message


def _estimate() -> Estimate:
    return Estimate(
        sampled=2,
        population=10,
        seed=0,
        score=50.0,
        score_low=9.5,
        score_high=90.5,
        covered_score=50.0,
        covered_low=9.5,
        covered_high=90.5,
        survived=5.0,
        survived_high=9.1,
    )


def test_a_run_the_budget_stopped_is_unfinished_without_a_sample():
    stopped = _mutation(["Killed"]).model_copy(
        update={"stopped_by_budget": True, "estimate": _estimate()}
    )
    assert not stopped.finished(sampling=False)


def test_a_sampled_run_the_budget_stopped_is_finished_when_it_has_an_estimate():
    stopped = _mutation(["Killed"]).model_copy(
        update={"stopped_by_budget": True, "estimate": _estimate()}
    )
    assert stopped.finished(sampling=True)


def test_a_sampled_run_the_budget_stopped_before_any_verdict_is_unfinished():
    stopped = _mutation([]).model_copy(update={"stopped_by_budget": True})
    assert not stopped.finished(sampling=True)


def test_an_interrupted_run_is_unfinished_even_with_an_estimate():
    interrupted = _mutation(["Killed"]).model_copy(
        update={"interrupted": True, "estimate": _estimate()}
    )
    assert not interrupted.finished(sampling=True)
