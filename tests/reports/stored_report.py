"""The stored report the renderer tests read: a real audit of the markup fixture.

Renderers are pure functions of a report, so their tests read this file instead of
running an audit. tests/reports/test_stored_report.py checks it is still what a real
run gives; after a change to the report model or to what a run finds, write it again:

    python -m tests.reports.stored_report
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import copy_fixture, run_audit

STORED = Path(__file__).resolve().parent / "markup-report.json"
GATE = ("--min-mutation-score", "80")
"""A threshold the shallow markup suite misses, so the report carries a failed gate."""


def audit_markup(workspace: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Audit a fresh copy of the markup fixture under `workspace`; the report's path and
    the finished command."""
    root = copy_fixture("markup", workspace / "markup")
    report = workspace / "report.json"
    return report, run_audit("tests", "-q", "--json", str(report), *GATE, cwd=root)


def main() -> int:
    with tempfile.TemporaryDirectory() as workspace:
        report, result = audit_markup(Path(workspace))
        if result.returncode != 1:  # the gate must fail: the suite is shallow
            print(result.stderr, file=sys.stderr)
            return 1
        # Indented, so that a change to it reads as a diff (audit writes it compact).
        document = json.loads(report.read_text(encoding="utf-8"))
        STORED.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {STORED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
