"""The body of a sticky pull-request comment: the Markdown summary under a hidden marker,
so a workflow step finds its own comment and updates it instead of adding one per push
(docs/github-actions.yml)."""

from __future__ import annotations

from auditor.report import Report
from reports import markdown

MARKER = "<!-- audit: sticky pull-request comment -->"


def render(report: Report, previous: Report | None = None) -> str:
    return f"{MARKER}\n{markdown.render(report, previous)}"
