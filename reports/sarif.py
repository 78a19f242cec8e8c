"""SARIF 2.1.0 for code scanning: surviving mutants (with their witness input),
pseudo-tested functions, probe findings and test smells as results with locations and
rule metadata."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from auditor.report import Report
from reports.findings import findings, rules

_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SRCROOT = "%SRCROOT%"


def _rules() -> list[dict[str, Any]]:
    described = []
    for rule in rules():
        properties: dict[str, Any] = {"tags": [rule.kind]}
        if rule.severity is not None:
            properties["severity"] = rule.severity
        described.append(
            {
                "id": rule.id,
                "name": rule.name,
                "shortDescription": {"text": rule.text},
                "help": {"text": rule.help},
                "defaultConfiguration": {"level": rule.level},
                "properties": properties,
            }
        )
    return described


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


def render(report: Report, previous: Report | None = None) -> str:
    rules = _rules()
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    results = [
        {
            "ruleId": finding.rule,
            "ruleIndex": index[finding.rule],
            "level": finding.level,
            "message": {"text": finding.text},
            "locations": [_location(finding.file, finding.line, finding.column)],
            "partialFingerprints": {"auditId/v1": finding.key},
        }
        for finding in findings(report)
    ]
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
