"""Feedback for the generating model, from the real audit of the shallow shop suite."""

from collections import Counter
from pathlib import Path

import pytest

from auditor.agent.feedback import build, next_tests
from auditor.report import Report
from tests.conftest import run_audit
from tests.reports.stored_report import STORED


@pytest.fixture(scope="module")
def shop(fixture_runs) -> Report:
    _, report, _, _ = fixture_runs[("shop", "tests_shallow")]
    return Report.model_validate(report)


@pytest.fixture
def saved(shop, tmp_path) -> Path:
    path = tmp_path / "report.json"
    path.write_text(shop.model_dump_json())
    return path


@pytest.mark.slow
def test_next_tests_put_the_input_that_shows_most_changes_first(shop):
    found = [w for w in shop.probes.witnesses if w.status == "found"]
    largest = max(Counter((w.function, w.input) for w in found).values())
    groups = next_tests(shop)
    assert len(groups[0].mutants) == largest > 1
    sizes = [len(g.mutants) for g in groups if g.witness is not None]
    assert sizes == sorted(sizes, reverse=True)


@pytest.mark.slow
def test_next_tests_leave_out_likely_equivalent_survivors(shop):
    # The shop's probes label none (its two were false, and fixed): label two here.
    witnesses = [
        w.model_copy(update={"status": "likely_equivalent"}) if index < 2 else w
        for index, w in enumerate(shop.probes.witnesses)
    ]
    report = shop.model_copy(
        update={"probes": shop.probes.model_copy(update={"witnesses": witnesses})}
    )
    equivalent = {w.mutant_id for w in witnesses if w.status == "likely_equivalent"}
    listed = {m.id for group in next_tests(report) for m in group.mutants}
    assert len(equivalent) == 2 and not equivalent & listed
    survived = {m.id for m in shop.mutation.mutants if m.status == "Survived"}
    assert listed == survived - equivalent


@pytest.mark.slow
def test_a_survivor_line_names_the_change_the_input_and_both_outcomes(shop):
    group = next_tests(shop)[0]
    text = build(shop).render(100_000)
    line = next(line for line in text.splitlines() if group.first.id in line)
    assert f"{group.first.file}:{group.first.line}" in line
    assert f"an input that shows it: `{group.witness.input}`" in line
    assert group.witness.original in line and group.witness.mutant in line
    assert f"catches {len(group.mutants) - 1} more such changes" in line


@pytest.mark.slow
def test_weak_tests_carry_the_smell_and_its_fix(shop):
    smell = next(s for s in shop.smells.findings if s.code == "AT001")
    text = build(shop).render(100_000)
    line = next(line for line in text.splitlines() if f"::{smell.test}:" in line)
    assert f"[AT001 assertion-free, line {smell.line}]" in line
    assert f"Fix: {smell.hint}" in line


@pytest.mark.slow
@pytest.mark.parametrize("max_chars", [400, 1500, 6000])
def test_the_text_stays_within_max_chars(shop, max_chars):
    assert len(build(shop).render(max_chars)) <= max_chars


@pytest.mark.slow
def test_a_small_budget_still_gives_every_section_its_first_item(shop):
    feedback = build(shop)
    text = feedback.render(2000)
    for section in feedback.sections:
        assert f"{section.title}:\n{section.items[0]}" in text
    assert "more findings left out" in text


@pytest.mark.slow
def test_a_budget_large_enough_leaves_nothing_out(shop):
    feedback = build(shop)
    text = feedback.render(1_000_000)
    assert "left out" not in text
    assert all(item in text for section in feedback.sections for item in section.items)


@pytest.mark.slow
def test_feedback_for_one_file_speaks_of_that_file_only(shop):
    text = build(shop, {"shop/inventory.py"}).render(100_000)
    findings = [line for line in text.splitlines() if line.startswith("- shop/")]
    assert findings and all(line.startswith("- shop/inventory.py") for line in findings)


@pytest.mark.slow
def test_the_command_prints_the_feedback_of_a_saved_report(shop, saved, tmp_path):
    result = run_audit("feedback", str(saved), "--max-chars", "1000", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == build(shop).render(1000)


def test_the_command_without_a_report_says_how_to_get_one(tmp_path):
    result = run_audit("feedback", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"audit: feedback: no report at {tmp_path / '.audit/report.json'}: run `audit TESTS` "
        "first, or name a saved report"
    ]


@pytest.mark.slow
def test_the_command_refuses_a_file_outside_the_code_under_test(saved, tmp_path):
    result = run_audit("feedback", str(saved), "--file", "shop/nope.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "feedback: shop/nope.py is not a file of the code under test" in result.stderr


@pytest.mark.slow
def test_a_saved_report_renders_the_feedback_as_one_more_output(shop, saved, tmp_path):
    result = run_audit("report", str(saved), "--feedback", "feedback.txt", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert (tmp_path / "feedback.txt").read_text(encoding="utf-8") == build(shop).render()


@pytest.mark.slow
def test_the_smells_of_a_parametrized_test_count_for_the_files_it_runs(shop):
    file = "shop/inventory.py"
    smell = next(
        s
        for s in shop.smells.findings
        for t in shop.baseline.tests
        if t.nodeid == f"{s.file}::{s.test}" and file in t.lines
    )
    cases = [
        t.model_copy(update={"nodeid": f"{t.nodeid}[case]"})
        if t.nodeid == f"{smell.file}::{smell.test}"
        else t
        for t in shop.baseline.tests
    ]
    report = shop.model_copy(update={"baseline": shop.baseline.model_copy(update={"tests": cases})})
    text = build(report, {file}).render(100_000)
    assert f"- {smell.file}::{smell.test}: " in text


def test_the_headline_says_which_score_its_figures_are():
    report = Report.read(STORED)
    counts = report.mutation.scores.counts
    first = build(report, None).render(4000).splitlines()[0]
    detected = counts.killed + counts.timeout
    assert f"noticed {detected} of the {detected + counts.survived} small changes" in first
    assert "to code they run (the score on covered code)" in first
    assert f"and {counts.no_coverage} more are in code no test runs." in first
