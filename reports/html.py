"""The HTML report for QA leads: one self-contained file (inline CSS, JS and SVG, no
network), rendered with jinja2 from the report alone. Same report, same bytes."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from auditor.report import CheckEvidence, Mutant, Report, Witness
from reports.summary import (
    FINDING_TITLES,
    Change,
    SurvivorGroup,
    acceptance_note,
    accepted,
    banner,
    by_place,
    candidate_value,
    carrying_note,
    code_under_test,
    compare,
    failed_conditions,
    generator_cards,
    hardening_summary,
    probe_summary,
    scope_notes,
    survivor_groups,
)

_STATUS_ORDER = ["Killed", "Timeout", "Survived", "NoCoverage", "RuntimeError", "CompileError"]
_STATUS_COLOURS = {
    "Killed": "#2e7d32",
    "Timeout": "#66bb6a",
    "Survived": "#c62828",
    "NoCoverage": "#9e9e9e",
    "RuntimeError": "#ef6c00",
    "CompileError": "#6d4c41",
}
_TESTS_SHOWN_PER_LINE = 1
_CHECKS_SHOWN = 200
_LISTED = ("Survived", "NoCoverage", "Timeout", "RuntimeError")
"""The mutants the HTML lists one by one: those a test could still catch or that hung."""


@dataclass
class SourceLine:
    number: int
    text: str
    state: str
    """`covered`, `missed` or `plain` (not a statement)."""
    tests: list[str]
    mutants: list[Mutant] = field(default_factory=list)
    anchored: bool = False
    """Other sections link to it (a mutant or a probe finding is on it): it gets an id."""

    @property
    def survivors(self) -> list[Mutant]:
        return [mutant for mutant in self.mutants if mutant.status == "Survived"]

    @property
    def tests_title(self) -> str:
        shown = self.tests[:_TESTS_SHOWN_PER_LINE]
        more = len(self.tests) - len(shown)
        return "\n".join(shown + ([f"... and {more} more"] if more > 0 else []))


@dataclass
class SourceFile:
    path: str
    lines: list[SourceLine]
    survived: int
    line_percent: float | None


@dataclass
class Bar:
    label: str
    coverage: float
    score: float | None


@dataclass
class Segment:
    status: str
    count: int
    x: float
    width: float
    colour: str


def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("reports", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["pct"] = lambda value: "-" if value is None else f"{value:.1f}%"
    environment.filters["seconds"] = lambda value: f"{value:.3f} s"
    environment.filters["value"] = candidate_value
    return environment


def _asset(name: str) -> Markup:
    """Our own CSS and JS, inlined as they are (never user text)."""
    return Markup(files("reports").joinpath("templates", name).read_text(encoding="utf-8"))


def _lines_by_test(report: Report) -> dict[str, dict[int, list[str]]]:
    covering: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for test in report.baseline.tests:
        if test.outcome != "passed":
            continue
        for path, lines in test.lines.items():
            for line in lines:
                covering[path][line].append(test.nodeid)
        for path, lines in test.subprocess_lines.items():
            for line in lines:
                covering[path][line].append(f"{test.nodeid} (in a subprocess)")
    return covering


def _source_files(report: Report) -> list[SourceFile]:
    covering = _lines_by_test(report)
    coverage = {file.path: file for file in report.coverage.files}
    mutants: dict[str, dict[int, list[Mutant]]] = defaultdict(lambda: defaultdict(list))
    for mutant in report.mutation.mutants if report.mutation else []:
        mutants[mutant.file][mutant.line].append(mutant)
    found = {(f.file, f.line) for f in report.probes.findings} if report.probes else set()
    result = []
    for path, text in report.sources.items():
        file_coverage = coverage.get(path)
        missing = set(file_coverage.missing_lines) if file_coverage else set()
        import_time = set(report.baseline.import_time_lines.get(path, []))
        lines = []
        for number, line_text in enumerate(text.splitlines(), start=1):
            tests = sorted(covering[path].get(number, []))
            if number in missing:
                state = "missed"
            elif tests or number in import_time:
                state = "covered"
            else:
                state = "plain"
            on_line = sorted(mutants[path].get(number, []), key=lambda m: m.id)
            anchored = bool(on_line) or (path, number) in found
            lines.append(SourceLine(number, line_text, state, tests, on_line, anchored))
        survived = sum(len(line.survivors) for line in lines)
        percent = file_coverage.counts.line_percent if file_coverage else None
        result.append(SourceFile(path, lines, survived, percent))
    return result


def _bars(report: Report) -> list[Bar]:
    scores = (
        {file.path: file.scores.score for file in report.mutation.files} if report.mutation else {}
    )
    return [
        Bar(file.path, file.counts.line_percent, scores.get(file.path))
        for file in report.coverage.files
        if file.counts.statements
    ]


@dataclass(frozen=True)
class TrendLine:
    label: str
    colour: str
    points: str
    """SVG polyline points, x by run, y by percent (100% at the top)."""
    last: float


def _trend(report: Report, width: float = 600.0, height: float = 120.0) -> list[TrendLine]:
    """Mutation score and line coverage over the recorded runs (two runs at least)."""
    points = report.trend
    if len(points) < 2:
        return []
    step = width / (len(points) - 1)
    series = [
        ("mutation score", "#2e7d32", [p.targeted_score or p.mutation_score for p in points]),
        ("line coverage", "#90a4ae", [p.line_coverage for p in points]),
    ]
    lines = []
    for label, colour, values in series:
        known = [(i, v) for i, v in enumerate(values) if v is not None]
        if len(known) < 2:
            continue
        xy = " ".join(f"{40 + i * step:.1f},{10 + height * (1 - v / 100):.1f}" for i, v in known)
        lines.append(TrendLine(label, colour, xy, known[-1][1]))
    return lines


def _segments(report: Report, width: float) -> list[Segment]:
    if report.mutation is None:
        return []
    counts: dict[str, int] = defaultdict(int)
    for mutant in report.mutation.mutants:
        if mutant.status in _STATUS_COLOURS:
            counts[mutant.status] += 1
    total = sum(counts.values())
    segments, x = [], 0.0
    for status in _STATUS_ORDER:
        if counts[status] and total:
            part = width * counts[status] / total
            segments.append(
                Segment(
                    status, counts[status], round(x, 2), round(part, 2), _STATUS_COLOURS[status]
                )
            )
            x += part
    return segments


def _test_rows(report: Report) -> list[dict[str, Any]]:
    states = {test.nodeid: test for test in report.mutation.tests} if report.mutation else {}
    smells: dict[tuple[str, str], int] = defaultdict(int)
    for smell in report.smells.findings:
        smells[smell.file, smell.test] += 1
    escalated = {
        module.file
        for module in (report.escalation.modules if report.escalation else [])
        if module.escalated
    }
    carrying = set(report.mutation.carrying) if report.mutation else set()
    rows = []
    for test in report.baseline.tests:
        name = test.nodeid.split("::", 1)[-1].split("[", 1)[0].replace("::", ".")
        mutation = states.get(test.nodeid)
        rows.append(
            {
                "nodeid": test.nodeid,
                "outcome": f"{test.outcome} (flaky)" if test.flaky else test.outcome,
                "state": mutation.state.replace("_", " ") if mutation else "-",
                "killed": mutation.killed if mutation else 0,
                "other_kills": mutation.crash_kills if mutation else 0,
                "unique": mutation.unique_kills if mutation else None,
                "subsumed_by": mutation.subsumed_by if mutation else "",
                "carries": bool(mutation) and test.nodeid in carrying,
                "smells": smells.get((test.file, name), 0),
                "duration": test.duration,
                "blocked": [f"{action.event} {action.target}" for action in test.blocked],
                "message": test.flaky or test.message,
                "escalated": bool(escalated & set(test.lines)),
            }
        )
    return rows


@dataclass(frozen=True)
class FirstTest:
    """One line of the first screen: a function whose survivors one new test would kill,
    with an input that shows one of them when the probes found it."""

    group: SurvivorGroup
    count: int
    witness: Witness | None


def _first_tests(report: Report, limit: int = 5) -> list[FirstTest]:
    """The functions with the most survivors no probe found equivalent, module-level code
    last (`survivor_groups`)."""
    witnesses = {w.mutant_id: w for w in report.probes.witnesses} if report.probes else {}
    found = []
    for group in survivor_groups(report):
        labels = [witnesses.get(m.id) for m in group.survivors]
        open_ = [w for w in labels if w is None or w.status != "likely_equivalent"]
        shown = next((w for w in labels if w is not None and w.status == "found"), None)
        if open_:
            found.append(FirstTest(group, len(open_), shown))
    return found[:limit]


def _checks_shown(report: Report) -> list[CheckEvidence]:
    """The checks that passed on the most survivors, those that caught nothing first: the
    weakest oracles. A check that ran on no mutant says nothing either way."""
    checks = [c for c in report.mutation.checks if c.caught or c.held] if report.mutation else []
    checks.sort(key=lambda c: (c.caught > 0, -c.held, c.file, c.line))
    return checks[:_CHECKS_SHOWN]


def render(report: Report, previous: Report | None = None) -> str:
    changes: list[Change] = compare(report, previous)
    mutation = report.mutation
    pseudo = set(mutation.pseudo_tested) if mutation else set()
    context = {
        "report": report,
        "previous": previous,
        "passed": report.gate.verdict == "pass" and report.status == "complete",
        "verdict": banner(report),
        "reasons": failed_conditions(report),
        "scope_notes": scope_notes(report),
        "code_under_test": code_under_test(report),
        "carrying_note": carrying_note(report),
        "generator_cards": generator_cards(report),
        "survivor_groups": survivor_groups(report),
        "first_tests": _first_tests(report),
        "checks": _checks_shown(report),
        "changes": changes,
        "bars": _bars(report),
        "segments": _segments(report, 600.0),
        "trend": _trend(report),
        "accepted": accepted(report),
        "acceptance_note": acceptance_note(report),
        "colours": _STATUS_COLOURS,
        "functions": [
            {
                "file": function.file,
                "function": function.function,
                "scores": function.scores,
                "pseudo": f"{function.file}::{function.function}" in pseudo,
            }
            for function in (mutation.functions if mutation else [])
        ],
        "file_mutation": {file.path: file for file in mutation.files} if mutation else {},
        "tests": _test_rows(report),
        "sources": _source_files(report),
        # Killed, rejected and ignored mutants are counted, and listed in the JSON: as
        # rows they made most of a large project's page.
        "mutants": by_place([m for m in mutation.mutants if m.status in _LISTED])
        if mutation
        else [],
        "probe_summary": probe_summary(report),
        "hardening": hardening_summary(report),
        "finding_titles": FINDING_TITLES,
        "witnesses": {w.mutant_id: w for w in report.probes.witnesses} if report.probes else {},
        "config_json": json.dumps(report.config, indent=2, sort_keys=True),
        "css": _asset("report.css"),
        "js": _asset("report.js"),
    }
    return _environment().get_template("report.html.j2").render(context)
