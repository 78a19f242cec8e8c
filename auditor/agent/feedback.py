"""Feedback for the model that wrote the tests: what the audit found, as short text a
prompt can carry.

A fast model that writes tests in a loop needs the next thing to fix, not a report: the
changes to the code its tests did not notice (with an input that shows each, the most
valuable first), its weak tests with the fix, the edge cases never tried, and the code no
test runs. `build` gathers them from a finished report; `render` bounds the text to a
size, taking items from every section in turn, so a small budget still says a little
about everything. The escalation prompt uses the same builder for one module.

Same report, same text: everything is sorted, nothing depends on time or place.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from auditor.errors import FeedbackError
from auditor.evidence.checks import split_nodeid
from auditor.mutation import scoring
from auditor.report import Mutant, Report, Smell, Witness

MAX_VALUE_CHARS = 160
"""An input or a value longer than this is cut (with an ellipsis) in a feedback line."""
DEFAULT_MAX_CHARS = 6000


@dataclass(frozen=True)
class SurvivorGroup:
    """Surviving mutants that one new test would kill: those whose witness is the same
    call (one mutant alone when it has no witness)."""

    mutants: tuple[Mutant, ...]
    witness: Witness | None

    @property
    def first(self) -> Mutant:
        return self.mutants[0]


@dataclass(frozen=True)
class Section:
    title: str
    items: tuple[str, ...]


@dataclass(frozen=True)
class Feedback:
    headline: str
    sections: tuple[Section, ...]

    def render(self, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """The text, at most `max_chars` long (the headline always fits in full)."""
        return render(self, max_chars)


def next_tests(report: Report, files: Collection[str] | None = None) -> list[SurvivorGroup]:
    """Survivors worth a test, the most valuable first: groups of survivors that the same
    witness input tells apart from the original (largest group first), then survivors
    without a witness. Likely-equivalent survivors are left out: no input found them."""
    if report.mutation is None:
        return []
    witnesses = {w.mutant_id: w for w in report.probes.witnesses} if report.probes else {}
    grouped: dict[tuple[str, str], list[Mutant]] = {}
    alone: list[Mutant] = []
    for mutant in report.mutation.mutants:
        if mutant.status != "Survived" or (files is not None and mutant.file not in files):
            continue
        witness = witnesses.get(mutant.id)
        if witness is not None and witness.status == "likely_equivalent":
            continue
        if witness is not None and witness.status == "found":
            grouped.setdefault((witness.function, witness.input), []).append(mutant)
        else:
            alone.append(mutant)
    groups = []
    for members in grouped.values():
        members.sort(key=_place)
        groups.append(SurvivorGroup(tuple(members), witnesses[members[0].id]))
    groups.sort(key=lambda group: (-len(group.mutants), _place(group.first)))
    groups += [SurvivorGroup((mutant,), None) for mutant in sorted(alone, key=_place)]
    return groups


def check_files(report: Report, files: Collection[str]) -> None:
    """Files to narrow feedback to must be files of the code under test."""
    known = set(report.project.source_files)
    for file in sorted(set(files) - known):
        raise FeedbackError(f"{file} is not a file of the code under test")


def build(report: Report, files: Collection[str] | None = None) -> Feedback:
    """Everything the audit found; `files` keeps the findings about those files of the
    code under test (and the tests that run them) only."""
    sections = (
        Section(
            "Changes to the code that no test noticed (a test for the first ones notices most)",
            tuple(_survivor_item(group) for group in next_tests(report, files)),
        ),
        Section("Weak tests", tuple(_weak_test_items(report, files))),
        Section("Edge cases the tests never try", tuple(_probe_items(report, files))),
        Section("Code that no test runs", tuple(_uncovered_items(report, files))),
    )
    return Feedback(_headline(report, files), tuple(s for s in sections if s.items))


def render_report(report: Report, previous: Report | None = None) -> str:
    """The feedback on the whole report as an output file (`--feedback PATH`), at the
    default length; `previous` is not used: the feedback is about this run."""
    return build(report).render()


def render(feedback: Feedback, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """The headline, then each section with the items that fit: items are offered from
    the sections in turn (first of each, then second of each...), so every section gets
    its most important items in before any gets its tail; one too long for what is left
    is skipped."""
    lines = [feedback.headline]
    budget = max_chars - len(feedback.headline) - 1 - len(_left_out_line(999_999)) - 2
    taken: list[list[str]] = [[] for _ in feedback.sections]
    depth = max((len(section.items) for section in feedback.sections), default=0)
    for index in range(depth):
        for number, section in enumerate(feedback.sections):
            if index >= len(section.items):
                continue
            cost = len(section.items[index]) + 1
            if not taken[number]:
                cost += len(section.title) + 3  # a blank line, the title and its colon
            if cost <= budget:
                budget -= cost
                taken[number].append(section.items[index])
    for section, items in zip(feedback.sections, taken, strict=True):
        if items:
            lines += ["", f"{section.title}:", *items]
    left_out = sum(len(s.items) for s in feedback.sections) - sum(map(len, taken))
    if left_out:
        lines += ["", _left_out_line(left_out)]
    return "\n".join(lines) + "\n"


def _left_out_line(count: int) -> str:
    return f"({count} more findings left out to keep this short; the report has them all)"


def _headline(report: Report, files: Collection[str] | None) -> str:
    tests = ", ".join(report.project.test_paths) or "the tests"
    where = f" for {', '.join(sorted(files))}" if files is not None else ""
    if report.mutation is None:
        return f"audit of {tests}{where}: mutation testing did not run."
    scores = report.mutation.scores
    counts = scoring.scores(m for m in report.mutation.mutants if files is None or m.file in files)
    detected, survived = counts.counts.killed + counts.counts.timeout, counts.counts.survived
    unrun = counts.counts.no_coverage
    text = (
        f"audit of {tests}{where}: the tests noticed {detected} of the "
        f"{detected + survived} small changes to code they run (the score on covered code); "
        f"{survived} went unnoticed"
        + (f", and {unrun} more are in code no test runs." if unrun else ".")
    )
    if files is None and scores.assertion_share is not None:
        text += (
            f" Only {scores.assertion_share:.0f}% of the noticed ones failed an assertion;"
            " the others raised an error, crashed or hung."
            if scores.assertion_share < 50
            else f" {scores.assertion_share:.0f}% of the noticed ones failed an assertion."
        )
    return text


def _survivor_item(group: SurvivorGroup) -> str:
    mutant, witness = group.first, group.witness
    before, after = _changed_lines(mutant)
    where = f"{mutant.file}:{mutant.line}" + (f" in {mutant.function}" if mutant.function else "")
    text = f"- {where}: `{before}` -> `{after}` ({mutant.description}) was not caught"
    if witness is None:
        return text + f" [{mutant.id}]."
    text += (
        f"; an input that shows it: `{_cut(witness.input)}` {_cut(witness.original)} as the"
        f" code is, but {_cut(witness.mutant)} with the change"
    )
    others = len(group.mutants) - 1
    if others:
        text += f" (a test of this input catches {others} more such change{'s' * (others > 1)})"
    return text + f" [{mutant.id}]."


def _weak_test_items(report: Report, files: Collection[str] | None) -> list[str]:
    """Smells of the tests (those that run `files`), checks that caught nothing, and
    functions the tests run without checking."""
    tests = _tests_running(report, files) if files is not None else None
    by_test: dict[tuple[str, str], list[Smell]] = {}
    for smell in report.smells.findings:
        if tests is None or (smell.file, smell.test) in tests:
            by_test.setdefault((smell.file, smell.test), []).append(smell)
    order = {"high": 0, "medium": 1, "low": 2}
    ranked = sorted(
        by_test.items(),
        key=lambda item: (min(order[s.severity] for s in item[1]), item[0]),
    )
    items = []
    for (file, test), smells in ranked:
        smells.sort(key=lambda s: (order[s.severity], s.line, s.code))
        name = f"{file}::{test}" if test else file
        found = "; ".join(f"{s.message} [{s.code} {s.name}, line {s.line}]" for s in smells)
        fixes = "; ".join(dict.fromkeys(s.hint for s in smells if s.hint))
        items.append(f"- {name}: {found}." + (f" Fix: {fixes}." if fixes else ""))
    if report.mutation is not None:
        for check in report.mutation.checks:
            if check.caught or not check.held:
                continue
            if tests is not None and (check.file, check.test) not in tests:
                continue
            caught = "caught none" if report.mutation.all_killers else "failed first on none"
            items.append(
                f"- {check.file}:{check.line} in {check.test}: this check passed on "
                f"{check.held} unnoticed changes and {caught}. Fix: assert the exact "
                "value the code returns, not a property every wrong value also has."
            )
        for name in report.mutation.pseudo_tested:
            if files is None or name.split("::")[0] in files:
                items.append(
                    f"- {name} runs under the tests, but removing its body or changing "
                    "what it returns fails none of them. Fix: assert on its result or effect."
                )
    return items


def _probe_items(report: Report, files: Collection[str] | None) -> list[str]:
    if report.probes is None:
        return []
    items = []
    for finding in report.probes.findings:
        if files is not None and finding.file not in files:
            continue
        kind = finding.kind.replace("_", " ")
        text = f"- {finding.file}:{finding.line} {finding.function}: {kind}: {finding.message}"
        if finding.input:
            text += f"; input `{_cut(finding.input)}`"
        items.append(text + ".")
    return items


def _uncovered_items(report: Report, files: Collection[str] | None) -> list[str]:
    items = []
    for coverage in report.coverage.files:
        if files is not None and coverage.path not in files:
            continue
        parts = []
        if coverage.missing_lines:
            parts.append(f"lines {_ranges(coverage.missing_lines)} never run")
        branches = [f"{a}->{b}" if b > 0 else f"{a}->exit" for a, b in coverage.missing_branches]
        if branches:
            parts.append(f"branches {', '.join(branches)} never taken")
        if parts:
            items.append(f"- {coverage.path}: {'; '.join(parts)}.")
    return items


def _tests_running(report: Report, files: Collection[str]) -> set[tuple[str, str]]:
    """(test file, qualname) of the tests that run `files`: how smells and checks name
    their test (a parametrized test's cases are one)."""
    return {
        split_nodeid(test.nodeid)
        for test in report.baseline.tests
        if any(file in test.lines for file in files)
    }


def _changed_lines(mutant: Mutant) -> tuple[str, str]:
    removed = [line[1:].strip() for line in mutant.diff.splitlines() if line.startswith("-")]
    added = [line[1:].strip() for line in mutant.diff.splitlines() if line.startswith("+")]
    before = _cut(" ".join(removed) or mutant.original)
    after = _cut(" ".join(added)) if added else "(removed)"
    return before, after


def _ranges(lines: list[int]) -> str:
    spans: list[list[int]] = []
    for line in sorted(lines):
        if spans and line == spans[-1][1] + 1:
            spans[-1][1] = line
        else:
            spans.append([line, line])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def _place(mutant: Mutant) -> tuple[str, int, str]:
    return (mutant.file, mutant.line, mutant.id)
