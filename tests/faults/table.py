"""Run the fault suite and write its table into docs/reliability.md:

    python -m tests.faults.table

Each row comes from a test that injected the fault and checked what audit did (the
`fault` fixture records it once the checks pass); a test that failed is a row marked
"NOT HANDLED". The rows between the markers are replaced, the rest of the page kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reliability.md"
BEGIN, END = "<!-- fault table: begin -->", "<!-- fault table: end -->"

ELSEWHERE = [
    "tests/mutation/test_engine.py::test_a_mutant_that_grows_memory_without_bound_is_stopped_by_the_memory_watch",
    "tests/mutation/test_engine.py::test_sigkill_during_mutation_leaves_the_tree_alone_and_the_rerun_resumes",
    "tests/mutation/test_engine.py::test_a_runner_killed_between_two_jobs_costs_the_job_it_held_its_time_not_its_verdict",
    "tests/mutation/test_distributed.py::test_a_worker_killed_mid_run_loses_and_doubles_no_mutant",
    "tests/test_session.py::test_a_session_killed_between_two_audits_is_started_again",
]
"""Fault tests that live beside the code they test."""

_GROUPS = ("store", "processes", "load", "inputs")
_OWN_CHECK = "tests/faults/test_table.py::test_every_fault_test_has_its_row_on_the_reliability_page"
"""Checks the page this run writes: it would fail before the page is written."""


class _Rows:
    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.failed: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failed.append(report.nodeid)
        if report.when == "call" and report.passed:
            self.rows += [
                json.loads(value) for name, value in report.user_properties if name == "fault"
            ]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def short_name(nodeid: str) -> str:
    """`test_x` of `tests/faults/test_a.py::test_x[case]`."""
    return nodeid.rpartition("::")[2].partition("[")[0]


def table(rows: list[dict], failed: list[str]) -> str:
    lines = [
        "| | fault injected | what audit did | exit | what the user saw | lost | test |",
        "|---|---|---|---|---|---|---|",
    ]
    ordered = sorted(rows, key=lambda row: (_GROUPS.index(row["group"]), row["test"]))
    for row in ordered:
        cells = [row["injected"], row["did"], row["exit_code"], f"`{row['saw']}`", row["lost"]]
        cells.append(f"`{short_name(row['test'])}`")
        lines.append("| handled | " + " | ".join(_cell(cell) for cell in cells) + " |")
    for nodeid in sorted(set(failed)):
        lines.append(f"| **NOT HANDLED** | the test failed | | | | | `{_cell(nodeid)}` |")
    return "\n".join(lines)


def main() -> int:
    collector = _Rows()
    code = pytest.main(
        ["-p", "no:cacheprovider", "-q", "tests/faults", *ELSEWHERE, "--deselect", _OWN_CHECK],
        plugins=[collector],
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    page = PAGE.read_text(encoding="utf-8")
    before, _, rest = page.partition(BEGIN)
    _, _, after = rest.partition(END)
    made = f"{len(collector.rows)} rows from `python -m tests.faults.table` at {commit}."
    body = f"{BEGIN}\n{made}\n\n{table(collector.rows, collector.failed)}\n{END}"
    PAGE.write_text(before + body + after, encoding="utf-8")
    print(f"wrote {PAGE}: {len(collector.rows)} rows, {len(set(collector.failed))} not handled")
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
