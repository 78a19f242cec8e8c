"""The terminal summary: verdict, headline numbers, the weakest spots, what to do next."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from auditor.report import Report
from reports.summary import (
    FINDING_TITLES,
    UNRATED,
    UNRATED_NOTE,
    acceptance_note,
    accepted,
    banner,
    carrying_note,
    code_under_test,
    failed_conditions,
    figures,
    generator_cards,
    hardening_summary,
    outcome_rows,
    percent_or_dash,
    probe_summary,
    scope_notes,
    suite_rows,
    survivors,
    weak_checks,
    weak_checks_title,
)

_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan"}
_SHOWN_FINDINGS = 15


_SHOWN_SURVIVORS = 10


def _render_mutation(report: Report, console: Console) -> None:
    mutation, notes = report.mutation, scope_notes(report)
    assert mutation is not None
    details = [f"{mutation.jobs} workers", f"{mutation.cache_hits} from cache"]
    if mutation.carried_over:
        details.append(f"{mutation.carried_over} carried over (only changed tests ran)")
    if mutation.paths.get("copy"):
        details.append(f"{mutation.paths['copy']} on a project copy")
    if mutation.mutants_per_second:
        details.insert(0, f"{mutation.mutants_per_second:g} mutants/s")
    checked = mutation.type_check
    if checked is not None:
        early = f", {checked.cached} checked ahead" if checked.cached else ""
        saved = f", ~{checked.saved:g}s of runs saved" if checked.saved is not None else ""
        details.append(
            f"{checked.checker} rejected {checked.rejected} of {checked.checked} "
            f"function mutants in {checked.duration:g}s{early}{saved}: they never ran"
        )
    console.print(
        f"mutation: {len(mutation.mutants)} mutants in {mutation.duration:g}s "
        f"({', '.join(details)})"
    )
    for note in notes:
        console.print(f"[bold]{escape(note)}[/bold]")
    if mutation.pseudo_tested:
        console.print(
            "pseudo-tested (run by tests, no effect checked): " + ", ".join(mutation.pseudo_tested)
        )
    found = survivors(report)
    if found:
        table = Table(title="surviving mutants (first 10)", title_justify="left")
        table.add_column("where", overflow="fold")
        table.add_column("change", overflow="fold")
        for mutant in found[:_SHOWN_SURVIVORS]:
            table.add_row(f"{mutant.file}:{mutant.line}", mutant.description)
        console.print(table)
    verification = mutation.verification
    if verification is not None and verification.checked:
        console.print(
            f"verify-sample: {verification.agreed}/{verification.checked} verdicts agree "
            "with a fresh run of the whole suite"
        )
        for item in verification.disagreements:
            console.print(
                f"  [red]x[/red] {item.id}: engine {item.engine}, fresh run {item.fresh_run}"
            )


def _render_probes(report: Report, console: Console) -> None:
    summary = probe_summary(report)
    if summary is None or report.probes is None:
        return
    console.print(f"probes: {summary.text()}")
    if not report.probes.findings:
        return
    table = Table(title="probe findings", title_justify="left")
    table.add_column("where", overflow="fold")
    table.add_column("finding", overflow="fold")
    table.add_column("input", overflow="fold")
    for finding in report.probes.findings[:_SHOWN_FINDINGS]:
        table.add_row(
            f"{finding.file}:{finding.line}",
            f"{FINDING_TITLES[finding.kind]}: {finding.message}",
            finding.input,
        )
    console.print(table)
    hidden = len(report.probes.findings) - _SHOWN_FINDINGS
    if hidden > 0:
        console.print(f"... and {hidden} more probe findings in the JSON report")


def _render_escalation(report: Report, console: Console) -> None:
    summary = hardening_summary(report)
    if summary is None or report.escalation is None:
        return
    escalation = report.escalation
    console.print(f"escalation: {summary.text()}")
    funnel = " -> ".join(f"{stage} {count}" for stage, count in escalation.funnel.items())
    console.print(f"  funnel: {funnel}")
    for module in escalation.modules:
        if module.after is not None and module.before is not None:
            files = ", ".join(module.hardened_files)
            console.print(
                f"  {module.file}: {module.before.score:g}% -> {module.after.score:g}% "
                f"({len(module.newly_killed)} more mutants killed), {files}"
            )
    for error in escalation.errors:
        console.print(f"  [yellow]{error}[/yellow]")
    if escalation.budget_exhausted:
        console.print(f"  [yellow]budget: {escalation.budget_exhausted}[/yellow]")


def render(report: Report, console: Console, report_path: str | None = None) -> None:
    if not report.sandbox.processes_bounded:
        console.print(f"[yellow]sandbox: {report.sandbox.level} ({report.sandbox.reason})[/yellow]")
    if report.store:
        console.print(f"[yellow]cache: {escape(report.store)}[/yellow]")
    console.print(code_under_test(report), highlight=False, markup=False)
    console.print(_headline(report))
    if report.mutation is not None:
        _render_mutation(report, console)
        _render_accepted(report, console)
    _render_generators(report, console)
    _render_carrying(report, console)
    _render_weak_checks(report, console)
    _render_probes(report, console)
    _render_escalation(report, console)
    _render_not_audited(report, console)
    _render_smells(report, console)
    _render_verdict(report, console)
    if report_path:
        console.print(f"report: {report_path}")


def _headline(report: Report) -> Table:
    """The same figures as every other output (`reports.summary`), after the tests'
    own counts and before the mutants' verdicts."""
    headline = Table(title="audit summary", show_header=False, title_justify="left")
    headline.add_column("what")
    headline.add_column("value", justify="right")
    for label, value in suite_rows(report):
        headline.add_row(label, value)
    for figure in figures(report):
        if report.mutation is None and figure.value is None:
            continue  # no mutation run: its figures would all be dashes
        severity = figure.key.removeprefix("smells_")
        if severity in _SEVERITY_STYLE:
            style = _SEVERITY_STYLE[severity]
            headline.add_row(figure.label, f"[{style}]{figure.text}[/{style}]")
        else:
            headline.add_row(figure.label, figure.text)
    for label, value in outcome_rows(report):
        headline.add_row(label, value)
    return headline


def _render_accepted(report: Report, console: Console) -> None:
    shown = accepted(report)
    if shown:
        console.print(f"accepted survivors (out of the scores): {len(shown)}")
        for mutant in shown[:_SHOWN_SURVIVORS]:
            console.print(f"  {escape(mutant.file)}:{mutant.line} {escape(mutant.accepted)}")
    note = acceptance_note(report)
    if note:
        console.print(f"[bold]{escape(note)}[/bold]")


def _render_generators(report: Report, console: Console) -> None:
    cards = generator_cards(report)
    if not cards:
        return
    table = Table(title="generators", title_justify="left")
    for column in ("generator", "tests", "kills by check", "other kills", "by check"):
        table.add_column(column, justify="left" if column == "generator" else "right")
    for column in ("unique kills", "score alone", "smells/test", "blocked/flaky"):
        table.add_column(column, justify="right")
    for card in cards:
        table.add_row(
            card.generator,
            str(card.tests),
            str(card.kills_by_check),
            str(card.other_kills),
            percent_or_dash(card.assertion_share),
            "-" if card.unique_kills is None else str(card.unique_kills),
            percent_or_dash(card.score_alone),
            f"{card.smells_per_test:g}",
            str(card.blocked_or_flaky),
        )
    console.print(table)


def _render_carrying(report: Report, console: Console) -> None:
    carrying = carrying_note(report)
    if carrying is None or report.mutation is None:
        return
    console.print(carrying + ":", highlight=False, markup=False)
    for nodeid in report.mutation.carrying[:_SHOWN_SURVIVORS]:
        console.print(f"  {nodeid}", highlight=False, markup=False)
    hidden = len(report.mutation.carrying) - _SHOWN_SURVIVORS
    if hidden > 0:
        console.print(f"  ... and {hidden} more in the JSON report (mutation.carrying)")


def _render_weak_checks(report: Report, console: Console) -> None:
    weak = weak_checks(report)
    if not weak:
        return
    table = Table(
        title=weak_checks_title(report, len(weak)),
        title_justify="left",
    )
    table.add_column("check", overflow="fold")
    table.add_column("test", overflow="fold")
    table.add_column("survivors", justify="right")
    for check in weak[:_SHOWN_SURVIVORS]:
        table.add_row(f"{check.file}:{check.line}", check.test, str(check.held))
    console.print(table)


def _render_not_audited(report: Report, console: Console) -> None:
    baseline = report.baseline
    alike = baseline.excluded_alike()
    if not alike and not baseline.collection_errors:
        return
    count = sum(len(nodeids) for _, nodeids in alike)
    title = f"not audited (did not pass on the original code): {count} tests"
    table = Table(title=title, title_justify="left")
    table.add_column("test", overflow="fold")
    table.add_column("outcome")
    table.add_column("why", overflow="fold")
    for error in baseline.collection_errors:
        table.add_row(error.location, "collection error", error.message)
    for (outcome, message), nodeids in alike:
        more = f" and {len(nodeids) - 1} more" if len(nodeids) > 1 else ""
        table.add_row(nodeids[0] + more, outcome, message)
    console.print(table)


def _render_smells(report: Report, console: Console) -> None:
    if report.smells.findings:
        by_code = Counter(f"{s.code} {s.name}" for s in report.smells.findings)
        table = Table(title="smells by rule", title_justify="left")
        table.add_column("rule")
        table.add_column("count", justify="right")
        for rule, count in sorted(by_code.items()):
            table.add_row(rule, str(count))
        console.print(table)
        _render_top_smells(report, console)
    for error in report.smells.unparsable:
        console.print(
            f"[yellow]smells: {escape(error.location)} not analysed: "
            f"{escape(error.message)}[/yellow]",
            soft_wrap=True,
        )


def _render_top_smells(report: Report, console: Console) -> None:
    order = {"high": 0, "medium": 1, "low": 2}
    worst = sorted(report.smells.findings, key=lambda s: (order[s.severity], s.file, s.line))
    table = Table(title="top findings", title_justify="left")
    table.add_column("where", overflow="fold")
    table.add_column("rule")
    table.add_column("finding", overflow="fold")
    for smell in worst[:_SHOWN_FINDINGS]:
        style = _SEVERITY_STYLE[smell.severity]
        table.add_row(
            f"{smell.file}:{smell.line}", f"[{style}]{smell.code}[/{style}]", smell.message
        )
    console.print(table)
    hidden = len(worst) - _SHOWN_FINDINGS
    if hidden > 0:
        console.print(f"... and {hidden} more in the JSON report")


def _render_verdict(report: Report, console: Console) -> None:
    gate = report.gate
    reasons = failed_conditions(report)  # an incomplete run fails, as in every output
    verdict = banner(report)
    if verdict == "PASS":
        console.print(f"[bold green]gate: PASS[/bold green] ({len(gate.conditions)} conditions)")
    elif verdict == UNRATED:
        console.print(f"gate: {UNRATED_NOTE}: set a gate for PASS/FAIL (docs/evidence.md)")
    elif not reasons and gate.rating is not None:
        console.print(
            f"[bold]rating: {verdict}[/bold] ({escape(gate.rating.reason)}); no thresholds "
            "configured: set a gate for PASS/FAIL (docs/evidence.md)",
            soft_wrap=True,
        )
    else:
        console.print("[bold red]gate: FAIL[/bold red]")
        for reason in reasons:
            console.print(f"  [red]x[/red] {escape(reason)}")
