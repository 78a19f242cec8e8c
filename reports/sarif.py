"""SARIF 2.1.0 for code scanning: surviving mutants, pseudo-tested functions and test
smells as results with locations and rule metadata."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from auditor.report import Report, Severity
from auditor.smells.catalog import RULES

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
]


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
    mutation = report.mutation
    if mutation is not None:
        for mutant in mutation.mutants:
            if mutant.status != "Survived":
                continue
            text = (
                f"Surviving mutant in {mutant.function}: {mutant.description} "
                f"(covered by {len(mutant.covered_by)} test(s), none failed). {mutant.id}"
            )
            location = _location(mutant.file, mutant.line, mutant.col)
            results.append(_result("AM001", index, "warning", text, location, mutant.id))
        starts = _function_lines(report)
        for name in mutation.pseudo_tested:
            path, _, function = name.partition("::")
            text = f"{function} is pseudo-tested: every extreme mutant of it survived"
            location = _location(path, starts.get((path, function), 1))
            results.append(_result("AM002", index, "error", text, location, name))
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
