"""The report's findings as located issues, one list for every format that annotates
code: SARIF, GitHub annotations, SonarQube's generic issues.

A finding is a surviving mutant (AM001), a pseudo-tested function (AM002), a probe
finding (AP001-AP003) or a test smell (AT0xx), each with its rule, level, place and
message, in report order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from auditor.report import Report, Severity
from auditor.smells.catalog import RULES
from reports.summary import FINDING_TITLES

Level = Literal["error", "warning", "note"]
LEVEL: dict[Severity, Level] = {"high": "error", "medium": "warning", "low": "note"}


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    text: str
    help: str
    level: Level
    kind: Literal["mutation-testing", "test-smell"]
    severity: Severity | None = None
    """A smell's severity in the catalog."""


@dataclass(frozen=True)
class Finding:
    rule: str
    level: Level
    file: str
    line: int
    column: int | None
    text: str
    key: str
    """Stable across runs: the mutant id, or the rule, place and message."""


_AUDIT_RULES = (
    Rule(
        "AM001",
        "surviving-mutant",
        "A change to the code that no test notices",
        "Add an assertion that fails on the mutated code: the diff shows the change.",
        "warning",
        "mutation-testing",
    ),
    Rule(
        "AM002",
        "pseudo-tested-function",
        "Tests run this function, but replacing its whole body changes no outcome",
        "Assert on what the function returns or changes, not only that it runs.",
        "error",
        "mutation-testing",
    ),
    Rule(
        "AP001",
        "unhandled-crash",
        "On this input the code raises an exception it does not raise on purpose",
        "Decide what the code should do with the input, fix it, and add a test.",
        "error",
        "mutation-testing",
    ),
    Rule(
        "AP002",
        "untested-error-path",
        "A raise that no passing test reaches or expects",
        "Add a test with pytest.raises on an input that reaches it (one is suggested).",
        "warning",
        "mutation-testing",
    ),
    Rule(
        "AP003",
        "edge-class-never-tried",
        "An edge input class the suite never tried, where the code behaves differently",
        "Add a test on the edge input; check the behaviour is the intended one.",
        "note",
        "mutation-testing",
    ),
)
_PROBE_RULES = {
    "unhandled_crash": "AP001",
    "untested_error_path": "AP002",
    "untried_edge_class": "AP003",
}


def rules() -> list[Rule]:
    smell_rules = [
        Rule(
            rule.code,
            rule.name.replace(" ", "-"),
            rule.name,
            rule.hint,
            LEVEL[rule.severity],
            "test-smell",
            rule.severity,
        )
        for rule in RULES.values()
    ]
    return [*_AUDIT_RULES, *smell_rules]


def findings(report: Report) -> list[Finding]:
    found: list[Finding] = []
    levels = {rule.id: rule.level for rule in _AUDIT_RULES}
    witnesses = {w.mutant_id: w for w in report.probes.witnesses} if report.probes else {}
    mutation = report.mutation
    if mutation is not None:
        for mutant in mutation.mutants:
            if mutant.status != "Survived":
                continue
            where = mutant.function or "import-time code"
            text = (
                f"Surviving mutant in {where}: {mutant.description} "
                f"(covered by {len(mutant.covered_by)} test(s), none failed). {mutant.id}"
            )
            witness = witnesses.get(mutant.id)
            if witness is not None and witness.status == "found":
                text += (
                    f" Witness: {witness.input} {witness.original}; the mutant {witness.mutant}."
                )
            elif witness is not None and witness.status == "likely_equivalent":
                text += f" Likely equivalent: {witness.reason}."
            found.append(
                Finding("AM001", "warning", mutant.file, mutant.line, mutant.col, text, mutant.id)
            )
        starts = {
            (file.path, function.qualname): function.start_line
            for file in report.coverage.files
            for function in file.functions
        }
        for name in mutation.pseudo_tested:
            path, _, function = name.partition("::")
            text = f"{function} is pseudo-tested: every extreme mutant of it survived"
            line = starts.get((path, function), 1)
            found.append(Finding("AM002", "error", path, line, None, text, name))
    for probe in report.probes.findings if report.probes else []:
        rule = _PROBE_RULES[probe.kind]
        text = f"{FINDING_TITLES[probe.kind]} in {probe.function}: {probe.message}"
        if probe.input:
            text += f" Input: {probe.input} {probe.observed}."
        key = f"{rule}:{probe.file}:{probe.function}:{probe.line}:{probe.message}"
        found.append(Finding(rule, levels[rule], probe.file, probe.line, None, text, key))
    for smell in report.smells.findings:
        text = f"{smell.name}: {smell.message} (hint: {smell.hint})"
        key = f"{smell.code}:{smell.file}:{smell.test}:{smell.line}"
        level = LEVEL[smell.severity]
        found.append(Finding(smell.code, level, smell.file, smell.line, None, text, key))
    return found
