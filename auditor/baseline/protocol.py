"""What crosses the process boundary between the baseline child and the parent."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel


class ChildSpec(BaseModel):
    """Everything the child needs; written to a JSON file the child reads at start."""

    root: str
    test_paths: list[str]
    source_dirs: list[str]
    omit: list[str] = []
    """Test code among the sources, measured by nobody (`Project.test_code`)."""
    data_file: str
    events_file: str
    basetemp: str
    allowed_roots: list[str]
    deselect: list[str]
    test_timeout: float
    memory_limit_mb: int
    measure: bool = True
    """Measure coverage (the baseline); the copy path only needs outcomes."""
    guard: bool = True
    """Install the audit-hook guard (off only with `--sandbox none`)."""
    shuffle_seed: int | None = None
    """Run the tests in a seeded random order (the flaky-test rerun)."""

    def write(self, path: Path) -> None:
        path.write_text(self.model_dump_json(), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> ChildSpec:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


# Event kinds the child appends, one JSON object per line, to `events_file`.
COLLECTING = "collecting"
COLLECTED = "collected"
COLLECT_ERROR = "collect_error"
START = "start"
RESULT = "result"
FINISH = "finish"
OBSERVED = "observed"
"""Argument values the tests passed to one function of the code under test."""
RESUME = "resume"
"""The child stopped after a test timed out, its results and coverage saved: a timed-out
test may leave threads or processes behind that slow or block every later test, so the
parent starts a fresh child for the tests that have not run."""

CONTEXT_PHASES = ("setup", "run", "teardown")
SUBPROCESS = "subprocess"
"""The context of code a test ran in a Python subprocess it started."""


def context_name(nodeid: str, phase: str) -> str:
    return f"{nodeid}|{phase}"
