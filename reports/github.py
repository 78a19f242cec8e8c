"""GitHub Actions workflow commands: the findings as annotations on the pull request's
changed lines.

GitHub shows `::warning file=F,line=N::message` lines of a step's log on the diff. In a
`--diff` run only findings on the lines the diff changed are printed (a reviewer sees
what the pull request brought, not the project's history); otherwise all of them.
GitHub keeps at most 10 annotations of each level per step, so the most useful come
first: surviving mutants (one annotation per line, however many survived there; lines
with an input that shows a survivor first), then the rest in report order.
"""

from __future__ import annotations

from auditor.report import Report
from reports.findings import Finding, findings

_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}
_SHOWN_PER_LINE = 3


def render(report: Report, previous: Report | None = None) -> str:
    scope = report.mutation.scope if report.mutation else None
    changed = (
        {path: set(lines) for path, lines in scope.changed_lines.items()}
        if scope is not None and scope.kind == "diff"
        else None
    )
    kept = [
        finding
        for finding in findings(report)
        if changed is None or finding.line in changed.get(finding.file, ())
    ]
    witnessed = {w.mutant_id: w.status for w in report.probes.witnesses} if report.probes else {}
    lines = [_survivors_line(group) for group in _survivors_by_line(kept, witnessed)]
    lines += [_line(finding, finding.text) for finding in kept if finding.rule != "AM001"]
    return "".join(line + "\n" for line in lines)


def _survivors_by_line(kept: list[Finding], witnessed: dict[str, str]) -> list[list[Finding]]:
    """Survivors grouped by line; lines with a witness input first (the likely
    equivalent ones last). An AM001 finding's key is its mutant's id."""
    grouped: dict[tuple[str, int], list[Finding]] = {}
    for finding in kept:
        if finding.rule == "AM001":
            grouped.setdefault((finding.file, finding.line), []).append(finding)
    return sorted(
        grouped.values(),
        key=lambda group: (
            not any(witnessed.get(f.key) == "found" for f in group),
            all(witnessed.get(f.key) == "likely_equivalent" for f in group),
            group[0].file,
            group[0].line,
        ),
    )


def _survivors_line(group: list[Finding]) -> str:
    first = group[0]
    if len(group) == 1:
        return _line(first, first.text, "audit: surviving mutant")
    shown = group[:_SHOWN_PER_LINE]
    text = f"{len(group)} changes to this line survived every test. " + " | ".join(
        finding.text for finding in shown
    )
    if len(group) > len(shown):
        text += f" | and {len(group) - len(shown)} more (see the report)"
    return _line(first, text, f"audit: {len(group)} surviving mutants")


def _line(finding: Finding, text: str, title: str = "") -> str:
    properties = f"file={_property(finding.file)},line={finding.line}"
    if finding.column is not None:
        properties += f",col={finding.column + 1}"
    properties += f",title={_property(title or f'audit: {finding.rule}')}"
    return f"::{_COMMAND[finding.level]} {properties}::{_data(text)}"


def _data(text: str) -> str:
    """Workflow-command escaping of the message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
