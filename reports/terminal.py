"""The terminal summary: verdict, headline numbers, the weakest spots, what to do next."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table

from auditor.report import Report

_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan"}
_SHOWN_FINDINGS = 15


def _percent(value: float) -> str:
    return f"{value:.1f}%"


def render(report: Report, console: Console, report_path: str | None = None) -> None:
    baseline = report.baseline
    totals = report.coverage.totals

    headline = Table(title="audit summary", show_header=False, title_justify="left")
    headline.add_column("what")
    headline.add_column("value", justify="right")
    headline.add_row("tests passed", f"{baseline.passed} / {len(baseline.tests)}")
    headline.add_row("tests excluded (red, crashed, blocked)", str(baseline.excluded))
    headline.add_row("collection errors", str(len(baseline.collection_errors)))
    headline.add_row("line coverage", _percent(totals.line_percent))
    headline.add_row("branch coverage", _percent(totals.branch_percent))
    for severity in ("high", "medium", "low"):
        style = _SEVERITY_STYLE[severity]
        headline.add_row(
            f"smells ({severity})", f"[{style}]{report.smells.counts[severity]}[/{style}]"
        )
    console.print(headline)

    excluded = [test for test in baseline.tests if test.outcome not in ("passed", "skipped")]
    if excluded or baseline.collection_errors:
        table = Table(title="not audited (did not pass on the original code)", title_justify="left")
        table.add_column("test")
        table.add_column("outcome")
        table.add_column("why")
        for error in baseline.collection_errors:
            table.add_row(error.file, "collection error", error.message)
        for test in excluded:
            table.add_row(test.nodeid, test.outcome, test.message)
        console.print(table)

    if report.smells.findings:
        by_code = Counter(f"{s.code} {s.name}" for s in report.smells.findings)
        table = Table(title="smells by rule", title_justify="left")
        table.add_column("rule")
        table.add_column("count", justify="right")
        for rule, count in sorted(by_code.items()):
            table.add_row(rule, str(count))
        console.print(table)

        order = {"high": 0, "medium": 1, "low": 2}
        worst = sorted(report.smells.findings, key=lambda s: (order[s.severity], s.file, s.line))
        table = Table(title="top findings", title_justify="left")
        table.add_column("where")
        table.add_column("rule")
        table.add_column("finding")
        for smell in worst[:_SHOWN_FINDINGS]:
            style = _SEVERITY_STYLE[smell.severity]
            table.add_row(
                f"{smell.file}:{smell.line}", f"[{style}]{smell.code}[/{style}]", smell.message
            )
        console.print(table)
        hidden = len(worst) - _SHOWN_FINDINGS
        if hidden > 0:
            console.print(f"... and {hidden} more in the JSON report")

    gate = report.gate
    if gate.verdict == "pass":
        checked = len(gate.conditions)
        note = f"{checked} conditions" if checked else "no thresholds configured"
        console.print(f"[bold green]gate: PASS[/bold green] ({note})")
    else:
        console.print("[bold red]gate: FAIL[/bold red]")
        for condition in gate.conditions:
            if not condition.passed:
                console.print(f"  [red]x[/red] {condition.message}")
    if report_path:
        console.print(f"report: {report_path}")
