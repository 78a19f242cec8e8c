"""The stored report the renderer tests read is what a real audit gives today."""

import json

import pytest

from auditor.report import SCHEMA_VERSION
from tests.reports.stored_report import STORED, audit_markup


def _findings(report: dict) -> dict:
    """What a run found, without what varies between runs (timings, paths, versions,
    cache use, how many inputs a time-bounded search tried)."""
    return {
        "mutants": sorted(
            (m["id"], m["status"], m["kill_kind"]) for m in report["mutation"]["mutants"]
        ),
        "smells": sorted((s["file"], s["line"], s["code"]) for s in report["smells"]["findings"]),
        "tests": sorted((t["nodeid"], t["outcome"]) for t in report["baseline"]["tests"]),
        "coverage": report["coverage"]["totals"],
        "findings": sorted(
            (f["kind"], f["function"], f["input"]) for f in report["probes"]["findings"]
        ),
        "witnesses": sorted((w["mutant_id"], w["status"]) for w in report["probes"]["witnesses"]),
        "gate": [(c["name"], c["passed"]) for c in report["gate"]["conditions"]],
    }


def test_the_stored_report_has_the_current_schema_version(report):
    assert report.schema_version == SCHEMA_VERSION


@pytest.mark.slow
def test_the_stored_report_is_what_a_real_audit_of_the_markup_fixture_gives(tmp_path):
    fresh, result = audit_markup(tmp_path)
    assert result.returncode == 1, result.stderr
    stored = json.loads(STORED.read_text(encoding="utf-8"))
    assert _findings(json.loads(fresh.read_text(encoding="utf-8"))) == _findings(stored), (
        "the stored report is stale: python -m tests.reports.stored_report"
    )
