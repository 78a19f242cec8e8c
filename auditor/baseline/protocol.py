"""What crosses the process boundary between the baseline child and the parent, as
`auditor.containment.wire` sends it: the spec, then the events the child appends to a file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass
class ChildSpec:
    """Everything the child needs; written to a JSON file the child reads at start."""

    root: str
    test_paths: list[str]
    source_dirs: list[str]
    data_file: str
    events_file: str
    basetemp: str
    allowed_roots: list[str]
    deselect: list[str]
    test_timeout: float
    memory_limit_mb: int
    omit: list[str] = field(default_factory=list)
    """Test code among the sources, measured by nobody (`Project.test_code`)."""
    measure: bool = True
    """Measure coverage (the baseline); the copy path only needs outcomes."""
    guard: bool = True
    """Install the audit-hook guard (off only with `--sandbox none`)."""
    shuffle_seed: int | None = None
    """Run the tests in a seeded random order (the flaky-test rerun)."""
    pytest_args: list[str] = field(default_factory=list)
    """Options the project's own would be replaced by (`discovery.pytest_options`)."""
    rewritten: str = ""
    """The test modules' kept assertion rewrites (`containment.rewritten`)."""
    uncollected: list[str] = field(default_factory=list)
    """Test files, relative to `root`, left out of the collection: all their tests keep
    an earlier run's results (`baseline.known.Partial`)."""
    scratch: str = ""
    """The child's own folder (its temporary files and pytest's `tmp_path` lie under it):
    its name differs from run to run, and observed values write it as `SCRATCH`."""


# What the child appends, one JSON object per line, to `events_file`.


@dataclass
class Collecting:
    path: str
    kind: Literal["collecting"] = "collecting"


@dataclass
class CollectError:
    path: str
    message: str
    line: int | None
    kind: Literal["collect_error"] = "collect_error"


@dataclass
class Collected:
    count: int
    resident_mb: float
    kind: Literal["collected"] = "collected"


@dataclass
class Deselected:
    """Tests collected and left out by `ChildSpec.deselect` (those of a kept baseline
    that this collection still has)."""

    nodeids: list[str]
    kind: Literal["deselected"] = "deselected"


@dataclass
class Start:
    nodeid: str
    kind: Literal["start"] = "start"


@dataclass
class Result:
    nodeid: str
    file: str
    outcome: str
    duration: float
    message: str
    blocked: list[dict[str, str]] = field(default_factory=list)
    """What the guard blocked during the test: {"event", "target"}."""
    spawns_python: bool = False
    kind: Literal["result"] = "result"


@dataclass
class Observed:
    """Argument values the tests passed to one function of the code under test."""

    file: str
    qualname: str
    calls: list[dict[str, tuple[str, str]]]
    kind: Literal["observed"] = "observed"


@dataclass
class Finish:
    exitstatus: int
    peak_mb: float
    patterns: list[tuple[str, int, bool]] = field(default_factory=list)
    """The regular expressions the suite compiled (`baseline.patterns`)."""
    kind: Literal["finish"] = "finish"


@dataclass
class Resume:
    """The child stopped after a test timed out, its results and coverage saved: a
    timed-out test may leave threads or processes behind that slow or block every later
    test, so the parent starts a fresh child for the tests that have not run."""

    kind: Literal["resume"] = "resume"


Event = (
    Collecting | CollectError | Collected | Deselected | Start | Result | Observed | Finish | Resume
)


CONTEXT_PHASES = ("setup", "run", "teardown")
SUBPROCESS = "subprocess"
"""The context of code a test ran in a Python subprocess it started."""
OUTSIDE_TESTS = "|outside"
"""The context of code run once a test has ended, before the next begins: a thread the
test left running (one stopped by its timeout, still consuming), a hook at the end of
the session. Neither import time (the empty context, what collection ran) nor a test."""


def context_name(nodeid: str, phase: str) -> str:
    return f"{nodeid}|{phase}"
