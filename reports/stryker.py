"""Stryker's mutation-testing-report-schema (v2) JSON: opens in Stryker's report viewer
(`mutation-testing-elements`) and dashboard."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from auditor.report import Mutant, Report

_THRESHOLDS = {"high": 80, "low": 60}


_KILL_KINDS = {
    "assertion": "a check failed",
    "error": "the code raised (no check needed)",
    "crash": "the test process died",
    "timeout": "the test ran past the timeout",
}


def _end_position(mutant: Mutant) -> dict[str, int]:
    """Columns are 1-based in Stryker's schema; ours are 0-based with no end column, so
    the end follows from the original text's extent."""
    lines = mutant.original.split("\n")
    if len(lines) == 1:
        return {"line": mutant.line, "column": mutant.col + len(lines[0]) + 1}
    return {"line": mutant.line + len(lines) - 1, "column": len(lines[-1]) + 1}


def _test_ids(report: Report) -> dict[str, str]:
    """A short id per test: the viewer shows each test's name, and ids repeated in every
    mutant's `coveredBy` made a large project's file hundreds of MB."""
    return {test.nodeid: str(index) for index, test in enumerate(report.baseline.tests)}


def _mutant(mutant: Mutant, ids: dict[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": mutant.id,
        "mutatorName": mutant.operator,
        "replacement": mutant.replacement,
        "description": mutant.description,
        "location": {
            "start": {"line": mutant.line, "column": mutant.col + 1},
            "end": _end_position(mutant),
        },
        "status": mutant.status,
        "coveredBy": [ids.get(nodeid, nodeid) for nodeid in mutant.covered_by],
        "killedBy": [ids.get(nodeid, nodeid) for nodeid in mutant.killed_by],
        "static": mutant.path == "module",
    }
    reason = mutant.status_reason
    if mutant.kill_kind:  # Stryker has no field for how a kill came about
        kind = _KILL_KINDS[mutant.kill_kind]
        reason = f"{kind}: {reason}" if reason else kind
    if reason:
        entry["statusReason"] = reason
    if mutant.duration:
        entry["duration"] = round(mutant.duration * 1000)
    return entry


def _test_files(report: Report, ids: dict[str, str]) -> dict[str, Any]:
    files: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for test in report.baseline.tests:
        files[test.file].append({"id": ids[test.nodeid], "name": test.nodeid.split("::", 1)[-1]})
    return {path: {"tests": tests} for path, tests in sorted(files.items())}


def render(report: Report, previous: Report | None = None) -> str:
    ids = _test_ids(report)
    mutants_by_file: dict[str, list[Mutant]] = defaultdict(list)
    for mutant in report.mutation.mutants if report.mutation else []:
        mutants_by_file[mutant.file].append(mutant)
    files = {
        path: {
            "language": "python",
            "source": report.sources.get(path, ""),
            "mutants": [_mutant(mutant, ids) for mutant in mutants_by_file.get(path, [])],
        }
        for path in sorted(set(report.sources) | set(mutants_by_file))
    }
    document = {
        "schemaVersion": "2",
        "thresholds": _THRESHOLDS,
        "projectRoot": report.project.root,
        "files": files,
        "testFiles": _test_files(report, ids),
        "framework": {
            "name": "audit",
            "version": report.tool.audit,
            "dependencies": {
                "pytest": report.tool.pytest,
                "coverage": report.tool.coverage,
                "python": report.tool.python,
            },
        },
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
