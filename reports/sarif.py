"""SARIF 2.1.0 for code scanning: surviving mutants (with their witness input),
pseudo-tested functions, probe findings and test smells as results with locations and
rule metadata."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from auditor.report import Report, Severity
from auditor.smells.catalog import RULES
from reports.summary import FINDING_TITLES

_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL: dict[Severity, str] = {"high": "error", "medium": "warning", "low": "note"}
_SRCROOT = "%SRCROOT%"

_MUTATION_RULES = [
    {
        "id": "AM001",
        "name": "surviving-mutant",
        "text": "A change to the code that no test notices",
        "help": "Add an assertion that fails on the mutated code: the diff shows the change.",
        "level": "warning",
    },
    {
        "id": "AM002",
        "name": "pseudo-tested-function",
        "text": "Tests run this function, but replacing its whole body changes no outcome",
        "help": "Assert on what the function returns or changes, not only that it runs.",
        "level": "error",
    },
    {
        "id": "AP001",
        "name": "unhandled-crash",
        "text": "On this input the code raises an exception it does not raise on purpose",
        "help": "Decide what the code should do with the input, fix it, and add a test.",
        "level": "error",
    },
    {
        "id": "AP002",
        "name": "untested-error-path",
        "text": "A raise that no passing test reaches or expects",
        "help": "Add a test with pytest.raises on an input that reaches it (one is suggested).",
        "level": "warning",
    },
    {
        "id": "AP003",
        "name": "edge-class-never-tried",
        "text": "An edge input class the suite never tried, where the code behaves differently",
        "help": "Add a test on the edge input; check the behaviour is the intended one.",
        "level": "note",
    },
]
_RULE_LEVELS = {rule["id"]: rule["level"] for rule in _MUTATION_RULES}
_PROBE_RULES = {
    "unhandled_crash": "AP001",
    "untested_error_path": "AP002",
    "untried_edge_class": "AP003",
}


def _rules() -> list[dict[str, Any]]:
    rules = [
        {
            "id": rule["id"],
            "name": rule["name"],
            "shortDescription": {"text": rule["text"]},
            "help": {"text": rule["help"]},
            "defaultConfiguration": {"level": rule["level"]},
            "properties": {"tags": ["mutation-testing"]},
        }
        for rule in _MUTATION_RULES
    ]
    for rule in RULES.values():
        rules.append(
            {
                "id": rule.code,
                "name": rule.name.replace(" ", "-"),
                "shortDescription": {"text": rule.name},
                "help": {"text": rule.hint},
                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
                "properties": {"tags": ["test-smell"], "severity": rule.severity},
            }
        )
    return rules


def _location(path: str, line: int, column: int | None = None) -> dict[str, Any]:
    region: dict[str, int] = {"startLine": max(line, 1)}
    if column is not None:
        region["startColumn"] = column + 1
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": path, "uriBaseId": _SRCROOT},
            "region": region,
        }
    }


def _result(
    rule_id: str, index: dict[str, int], level: str, text: str, location: dict[str, Any], key: str
) -> dict[str, Any]:
    return {
        "ruleId": rule_id,
        "ruleIndex": index[rule_id],
        "level": level,
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {"auditId/v1": key},
    }


def _function_lines(report: Report) -> dict[tuple[str, str], int]:
    return {
        (file.path, function.qualname): function.start_line
        for file in report.coverage.files
        for function in file.functions
    }


def render(report: Report) -> str:
    rules = _rules()
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    results = []
    witnesses = {w.mutant_id: w for w in report.probes.witnesses} if report.probes else {}
    mutation = report.mutation
    if mutation is not None:
        for mutant in mutation.mutants:
            if mutant.status != "Survived":
                continue
            text = (
                f"Surviving mutant in {mutant.function}: {mutant.description} "
                f"(covered by {len(mutant.covered_by)} test(s), none failed). {mutant.id}"
            )
            witness = witnesses.get(mutant.id)
            if witness is not None and witness.status == "found":
                text += (
                    f" Witness: {witness.input} {witness.original}; the mutant {witness.mutant}."
                )
            elif witness is not None and witness.status == "likely_equivalent":
                text += f" Likely equivalent: {witness.reason}."
            location = _location(mutant.file, mutant.line, mutant.col)
            results.append(_result("AM001", index, "warning", text, location, mutant.id))
        starts = _function_lines(report)
        for name in mutation.pseudo_tested:
            path, _, function = name.partition("::")
            text = f"{function} is pseudo-tested: every extreme mutant of it survived"
            location = _location(path, starts.get((path, function), 1))
            results.append(_result("AM002", index, "error", text, location, name))
    for finding in report.probes.findings if report.probes else []:
        rule = _PROBE_RULES[finding.kind]
        level = _RULE_LEVELS[rule]
        text = f"{FINDING_TITLES[finding.kind]} in {finding.function}: {finding.message}"
        if finding.input:
            text += f" Input: {finding.input} {finding.observed}."
        key = f"{rule}:{finding.file}:{finding.function}:{finding.line}:{finding.message}"
        location = _location(finding.file, finding.line)
        results.append(_result(rule, index, level, text, location, key))
    for smell in report.smells.findings:
        text = f"{smell.name}: {smell.message} (hint: {smell.hint})"
        key = f"{smell.code}:{smell.file}:{smell.test}:{smell.line}"
        location = _location(smell.file, smell.line)
        results.append(_result(smell.code, index, _LEVEL[smell.severity], text, location, key))
    document = {
        "$schema": _SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "audit",
                        "version": report.tool.audit,
                        "informationUri": "https://pypi.org/project/audit-tests/",
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {_SRCROOT: {"uri": Path(report.project.root).as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
