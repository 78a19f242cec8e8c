"""Per-test and per-check figures judge a test or a check only when every killer of
every mutant is known (`--all-killers`); otherwise they say they count the first killer
only, with no verdict word."""

from __future__ import annotations

from auditor.report import CheckEvidence
from reports import markdown
from reports.summary import figures


def _with_all_killers(report, known: bool):
    """The stored run with one check that failed on no mutant and held on three."""
    idle = CheckEvidence(file="tests/test_render.py", line=30, test="test_x", caught=0, held=3)
    mutation = report.mutation.model_copy(
        update={"all_killers": known, "checks": [*report.mutation.checks, idle]}
    )
    return report.model_copy(update={"mutation": mutation})


def test_the_stored_run_stopped_at_first_killers(report):
    assert not report.mutation.all_killers


def test_first_killer_figures_say_so(report):
    killing = next(f for f in figures(report) if f.key == "killing_tests")
    assert killing.label == "tests that killed first"
    assert "first killer only" in killing.meaning


def test_with_every_killer_known_the_figure_is_the_killing_tests(report):
    killing = next(f for f in figures(_with_all_killers(report, True)) if f.key == "killing_tests")
    assert (killing.label, "first killer" in killing.meaning) == ("killing tests", False)


def test_weak_checks_are_no_verdict_without_every_killer(report):
    first_only = markdown.render(_with_all_killers(report, False))
    judged = markdown.render(_with_all_killers(report, True))
    assert "### Checks never the first to fail, passing on survivors (" in first_only
    assert "first killer only)" in first_only
    assert "caught nothing" not in first_only
    assert "### Checks that caught nothing, passing on survivors (" in judged
