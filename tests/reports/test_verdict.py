"""A run with no thresholds has passed nothing: it is rated by its evidence, and without
the mutation run (no rating) every output says it is not rated, never PASS."""

from __future__ import annotations

import json

from rich.console import Console

from auditor.report import GateSection, Report
from reports import badge, html, markdown, terminal
from reports.summary import banner


def _without_mutation(report: Report) -> Report:
    """The stored audit as `--no-mutation --no-probes` with no threshold gives it."""
    return report.model_copy(
        update={
            "mutation": None,
            "probes": None,
            "gate": GateSection(verdict="pass", conditions=[], rating=None),
            "status": "complete",
        }
    )


def test_a_rated_run_without_thresholds_shows_its_rating(report):
    no_thresholds = report.model_copy(
        update={"gate": report.gate.model_copy(update={"conditions": []}), "status": "complete"}
    )
    assert banner(no_thresholds) == report.gate.rating.level.upper()


def test_without_mutants_or_thresholds_the_verdict_is_unrated(report):
    assert banner(_without_mutation(report)) == "UNRATED"


def test_the_terminal_says_not_rated_and_never_pass(report):
    console = Console(record=True, width=200)
    terminal.render(_without_mutation(report), console)
    text = console.export_text()
    assert "gate: no thresholds configured, and no rating without the mutation run" in text
    assert "PASS (" not in text


def test_markdown_html_and_badge_say_unrated(report):
    unrated = _without_mutation(report)
    assert markdown.render(unrated).startswith("## audit: UNRATED\n")
    assert "the suite is not rated: the rating needs the mutation run" in html.render(unrated)
    assert json.loads(badge.render(unrated))["color"] == "lightgrey"
