"""SonarQube's generic issue import format (10.3 and later): the findings as external
issues, for `sonar.externalIssuesReportPaths`."""

from __future__ import annotations

import json

from auditor.report import Report
from reports.findings import findings, rules

_IMPACT = {"error": "HIGH", "warning": "MEDIUM", "note": "LOW"}
_EFFORT = {"mutation-testing": 10, "test-smell": 5}
"""Minutes to fix: write one test, or rewrite one check."""


def render(report: Report, previous: Report | None = None) -> str:
    described = {rule.id: rule for rule in rules()}
    found = findings(report)
    used = sorted({finding.rule for finding in found})
    document = {
        "rules": [
            {
                "id": rule_id,
                "name": described[rule_id].name,
                "description": f"{described[rule_id].text}. {described[rule_id].help}",
                "engineId": "audit",
                "cleanCodeAttribute": "TESTED",
                "impacts": [
                    {
                        "softwareQuality": "RELIABILITY"
                        if described[rule_id].kind == "mutation-testing"
                        else "MAINTAINABILITY",
                        "severity": _IMPACT[described[rule_id].level],
                    }
                ],
            }
            for rule_id in used
        ],
        "issues": [
            {
                "ruleId": finding.rule,
                "effortMinutes": _EFFORT[described[finding.rule].kind],
                "primaryLocation": {
                    "message": finding.text,
                    "filePath": finding.file,
                    "textRange": {"startLine": max(finding.line, 1)},
                },
            }
            for finding in found
        ],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
