"""After a change, a probe process starts once the baseline is measured, so that it is
ready when the probe stage hands it the work; a first run's mutants keep every core
busy, and a rerun with nothing changed has nothing new to probe."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from auditor.config import AuditConfig
from auditor.pipeline import run_audit
from auditor.progress import SilentProgress
from tests.conftest import children_running


def _probe_processes_of(pid: int) -> list[int]:
    return children_running(pid, "auditor.probes.child")


class _WatchTheProbeStage(SilentProgress):
    """Records the probe processes already running when the probe stage begins."""

    def __init__(self) -> None:
        self.at_probe_stage: list[int] | None = None

    def start(self, stage: str, total: int | None = None) -> None:
        if stage == "probe":
            self.at_probe_stage = _probe_processes_of(os.getpid())


def _audit(root: Path) -> tuple[list[int] | None, list[int]]:
    """The probe processes running when the probe stage began, and those left after."""
    watch = _WatchTheProbeStage()
    run_audit(["tests_strong"], AuditConfig(jobs=2), root, watch)
    return watch.at_probe_stage, _probe_processes_of(os.getpid())


@pytest.mark.slow
def test_a_probe_process_starts_after_the_baseline_of_a_change_only(project_copy):
    root = project_copy("ledger")
    accounts = root / "ledger" / "accounts.py"
    old = "return debit - credit if self.kind.debit_normal else credit - debit"
    new = "return (debit - credit) if self.kind.debit_normal else (credit - debit)"

    first_run = _audit(root)
    accounts.write_text(accounts.read_text().replace(old, new))
    after_the_change = _audit(root)
    nothing_changed = _audit(root)

    assert new in accounts.read_text()
    assert first_run == ([], [])  # every core runs mutants: nothing to overlap
    assert len(after_the_change[0] or []) == 1 and after_the_change[1] == []
    assert nothing_changed == ([], [])  # nothing new to probe
