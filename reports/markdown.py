"""A short Markdown summary for PR comments and `$GITHUB_STEP_SUMMARY`."""

from __future__ import annotations

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
    compare,
    failed_conditions,
    generator_cards,
    hardening_summary,
    percent_or_dash,
    probe_summary,
    scope_notes,
    survivors,
    weak_checks,
    weak_checks_title,
)

_SHOWN_SURVIVORS = 10
_SHOWN_SMELLS = 10


def _cell(text: str) -> str:
    """Table cells: no pipes or newlines from user text, code in backticks kept short."""
    return text.replace("|", "\\|").replace("\n", " ").replace("`", "'")


def render(report: Report, previous: Report | None = None) -> str:
    lines = _verdict(report)
    lines += [_cell(code_under_test(report)), ""]
    notes = scope_notes(report)
    lines += [f"> {note}" for note in notes] + ([""] if notes else [])
    lines += _figures(report, previous)
    lines += _survivors(report)
    lines += _generators(report)
    carrying = carrying_note(report)
    if carrying is not None:
        lines += [f"**Tests that carry the suite:** {carrying}.", ""]
    lines += _weak_checks(report)
    lines += _probes(report)
    lines += _hardening(report)
    lines += _flaky_and_pseudo_tested(report)
    findings = sorted(
        report.smells.findings,
        key=lambda s: (("high", "medium", "low").index(s.severity), s.file, s.line, s.code),
    )
    lines += _table(
        f"Test smells ({len(findings)})",
        ["where", "rule", "finding"],
        [[f"`{s.file}:{s.line}`", f"{s.code} {s.severity}", _cell(s.message)] for s in findings],
        _SHOWN_SMELLS,
    )
    return "\n".join(lines)


def _verdict(report: Report) -> list[str]:
    verdict = banner(report)
    rating = report.gate.rating
    rated = verdict not in ("PASS", "FAIL") and rating is not None
    lines = [f"## audit: {verdict} suite" if rated else f"## audit: {verdict}", ""]
    reasons = failed_conditions(report)
    if reasons:
        return lines + [f"- :x: {_cell(reason)}" for reason in reasons] + [""]
    if rated and rating is not None:
        reason = _cell(rating.reason)
        return [*lines, f"No gate thresholds configured; rated by the evidence: {reason}.", ""]
    if verdict == UNRATED:
        return [*lines, f"{UNRATED_NOTE[0].upper()}{UNRATED_NOTE[1:]}.", ""]
    if not report.gate.conditions:
        return [*lines, "No gate thresholds configured.", ""]
    return lines


def _figures(report: Report, previous: Report | None) -> list[str]:
    header = "| figure | value |" + (" change |" if previous else "")
    rule = "|---|---:|" + ("---:|" if previous else "")
    lines = [header, rule]
    for change in compare(report, previous):
        row = f"| {change.figure.label} | {change.figure.text} |"
        if previous:
            row += f" {change.text} |"
        lines.append(row)
    return [*lines, ""]


def _survivors(report: Report) -> list[str]:
    found = survivors(report)
    lines = _table(
        f"Surviving mutants ({len(found)})",
        ["where", "change"],
        [[f"`{m.file}:{m.line}`", f"`{_cell(m.description)}`"] for m in found],
        _SHOWN_SURVIVORS,
    )
    shown = accepted(report)
    lines += _table(
        f"Accepted survivors ({len(shown)})",
        ["where", "change", "why"],
        [[f"`{m.file}:{m.line}`", f"`{_cell(m.description)}`", _cell(m.accepted)] for m in shown],
        _SHOWN_SURVIVORS,
    )
    note = acceptance_note(report)
    return lines + ([f"> {note}", ""] if note else [])


def _generators(report: Report) -> list[str]:
    cards = generator_cards(report)
    if not cards:
        return []
    lines = [
        "### Generators",
        "",
        "| generator | tests | kills by check | other kills | by check | unique kills "
        "| score alone | smells/test | blocked/flaky |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for card in cards:
        unique = "-" if card.unique_kills is None else str(card.unique_kills)
        lines.append(
            f"| {_cell(card.generator)} | {card.tests} | {card.kills_by_check} | "
            f"{card.other_kills} | {percent_or_dash(card.assertion_share)} | {unique} | "
            f"{percent_or_dash(card.score_alone)} | {card.smells_per_test:g} | "
            f"{card.blocked_or_flaky} |"
        )
    return [*lines, ""]


def _weak_checks(report: Report) -> list[str]:
    weak = weak_checks(report)
    if not weak:
        return []
    lines = [
        f"### {weak_checks_title(report, len(weak)).capitalize()}",
        "",
        "| check | test | survivors it passed on |",
        "|---|---|---:|",
    ]
    for check in weak[:_SHOWN_SURVIVORS]:
        lines.append(f"| `{check.file}:{check.line}` | `{_cell(check.test)}` | {check.held} |")
    return [*lines, ""]


def _probes(report: Report) -> list[str]:
    probes = probe_summary(report)
    if probes is None or report.probes is None:
        return []
    lines = [f"### Probes: {probes.findings} findings", "", probes.text() + ".", ""]
    if report.probes.findings:
        lines += ["| where | finding | input |", "|---|---|---|"]
        for finding in report.probes.findings[:_SHOWN_SMELLS]:
            lines.append(
                f"| `{finding.file}:{finding.line}` | {FINDING_TITLES[finding.kind]}: "
                f"{_cell(finding.message)} | `{_cell(finding.input[:120])}` |"
            )
        lines.append("")
    return lines


def _hardening(report: Report) -> list[str]:
    hardening = hardening_summary(report)
    if hardening is None or report.escalation is None:
        return []
    lines = ["### Hardening", "", hardening.text() + ".", ""]
    modules = [m for m in report.escalation.modules if m.escalated]
    if modules:
        lines += ["| module | before | after | accepted tests |", "|---|---:|---:|---:|"]
        for module in modules:
            before = f"{module.before.score:g}%" if module.before else "-"
            after = f"{module.after.score:g}%" if module.after else "-"
            lines.append(f"| `{module.file}` | {before} | {after} | {module.accepted} |")
        lines.append("")
    return lines


def _flaky_and_pseudo_tested(report: Report) -> list[str]:
    lines = []
    flaky = [test for test in report.baseline.tests if test.flaky]
    if flaky:
        lines += ["### Flaky or order-dependent tests (they kill no mutant)", ""]
        lines += [f"- `{test.nodeid}`: {_cell(test.flaky)}" for test in flaky] + [""]
    if report.mutation and report.mutation.pseudo_tested:
        lines += ["### Pseudo-tested functions", ""]
        lines += [f"- `{name}`" for name in report.mutation.pseudo_tested] + [""]
    return lines


def _table(title: str, columns: list[str], rows: list[list[str]], limit: int) -> list[str]:
    """A section with a table of its first `limit` rows and a count of the rest; nothing
    when there are no rows."""
    if not rows:
        return []
    lines = [f"### {title}", "", f"| {' | '.join(columns)} |", "|---" * len(columns) + "|"]
    lines += [f"| {' | '.join(row)} |" for row in rows[:limit]]
    if len(rows) > limit:
        gap = "| " * (len(columns) - 2)
        lines.append(f"| ... | {gap}{len(rows) - limit} more in the full report |")
    return [*lines, ""]
