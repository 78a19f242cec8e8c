"""`audit compare` in the terminal and as one self-contained HTML page."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from auditor.compare import Comparison
from reports.html import _asset, _environment
from reports.summary import percent_or_dash

SHOWN_IDS = 5


def render_terminal(comparison: Comparison, console: Console) -> None:
    console.print(
        f"code under test: {', '.join(comparison.code_under_test)}; {comparison.mutants} mutants",
        highlight=False,
    )
    if not comparison.same_mutants:
        console.print("[yellow]the suites' runs made different mutants: compare with care[/]")
    table = Table(title="suites compared", title_justify="left")
    table.add_column("suite", overflow="fold")
    for column in ("tests", "line cov.", "score", "targeted", "by check", "smells (high)"):
        table.add_column(column, justify="right")
    table.add_column("only it kills", justify="right")
    table.add_column("seconds", justify="right")
    table.add_column("rating")
    for row in comparison.suites:
        table.add_row(
            row.tests_path,
            str(row.tests),
            percent_or_dash(row.line_coverage),
            percent_or_dash(row.score),
            percent_or_dash(row.targeted_score),
            percent_or_dash(row.assertion_share),
            f"{row.smells} ({row.high_smells})",
            str(len(row.only_it_kills)),
            f"{row.seconds:g}",
            row.rating,
        )
    console.print(table)
    for row in comparison.suites:
        if row.only_it_kills:
            shown = ", ".join(row.only_it_kills[:SHOWN_IDS])
            more = len(row.only_it_kills) - SHOWN_IDS
            console.print(
                f"only {row.tests_path} kills: {shown}" + (f" and {more} more" if more > 0 else ""),
                highlight=False,
                markup=False,
            )


def render_html(comparison: Comparison) -> str:
    template = _environment().get_template("compare.html.j2")
    return template.render(comparison=comparison, css=_asset("report.css"))
