"""Messages between the engine (parent) and its runners, as `auditor.containment.wire`
sends them: the spec, then the baseline's facts, then one job per line; one result per
line back. A runner reads its own (flat) messages with `wire.build`, keeping pydantic out
of it and of every mutant's child forked from it; the parent checks what comes back
with `wire.check`."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass
class RunnerSpec:
    """What a runner starts with; the baseline's measures follow on stdin
    (`BaselineFacts`), so a runner can start while the baseline runs."""

    root: str
    test_paths: list[str]
    source_files: list[str]
    allowed_roots: list[str]
    memory_limit_mb: int
    log_file: str
    basetemp: str
    scratch: str
    """The runner's own folder: a mutant's child writes the spec its subprocesses read."""
    guard: bool = True
    pytest_args: list[str] = field(default_factory=list)
    """Options the project's own would be replaced by (`discovery.pytest_options`)."""
    rewritten: str = ""
    """The test modules' kept assertion rewrites (`containment.rewritten`)."""


@dataclass
class BaselineFacts:
    """What a runner needs from the baseline, its first line on stdin: it collects the
    tests before, and is ready after."""

    deselect: list[str] = field(default_factory=list)
    """Tests that crashed or hung in the baseline."""
    test_seconds: dict[str, float] = field(default_factory=dict)
    """Each test's time in the baseline: what a mutant's child may spend in it follows
    from it (`TestBudget`)."""
    patterns: list[tuple[str, int, bool]] = field(default_factory=list)
    """The regular expressions the suite compiled, compiled by the runner before it forks
    (`baseline.patterns`)."""
    child_growth_limit_mb: int = 0
    """How much a mutant's child may grow beyond its runner (`MemoryWatch`)."""


ORIGINAL_TIMING_LIMIT = 10.0
"""Seconds the runner gives the original code on a job's tests when it times them
(`TestBudget`)."""

WALL_FACTOR = 3.0
WALL_EXTRA_SECONDS = 1.0
"""A mutant's child is stopped by the CPU time it burns (`TestBudget`); wall time, this
multiple of that allowance plus these seconds, is the backstop for a hang that waits
instead of computing (a sleep, a lock, a subprocess): on a busy machine a child gets
a share of a core, so its wall time is a multiple of its CPU time."""


def wall_allowed(cpu_allowed: float) -> float:
    """Seconds of wall time a child allowed `cpu_allowed` CPU seconds may run."""
    return WALL_FACTOR * cpu_allowed + WALL_EXTRA_SECONDS


@dataclass
class Job:
    id: str
    path: Literal["swap", "module", "subprocess"]
    """How the child applies the mutant in its own process; `subprocess`: not at all,
    only the Python subprocesses of its tests get it (`serve_subprocesses`)."""
    file: str
    module_name: str
    tests: list[str]
    timeout: float
    """CPU seconds the child may use: `timeout_factor` x the tests' time in the baseline
    + `timeout_constant`."""
    target_line: int = 0
    target_name: str = ""
    code_b64: str = ""
    source_digest: str = ""
    """Of the original file's text, when the child needs the mutated file (re-executed
    on the module path, served to subprocesses): the runner reads the file once and
    applies the patch below, so a job carries the change, not the whole file."""
    patch_start: int = 0
    patch_end: int = 0
    replacement: str = ""
    rerun_lines: list[list[int]] = field(default_factory=list)
    """Module path: the line ranges of the mutated file to run again; empty: all."""
    consumers: list[list[Any]] = field(default_factory=list)
    """Module path: `[file, module, start line, end line]` of statements in other
    modules to run again afterwards (`ReadIndex.consumers`)."""
    subprocess_tests: list[str] = field(default_factory=list)
    """Run after `tests`: only their Python subprocesses run the mutated code."""
    serve_subprocesses: bool = False
    """Serve the mutated file to every Python process the tests start."""
    all_killers: bool = False
    """Keep running the tests after the first that fails, recording each that does."""
    timeout_factor: float = 0.0
    timeout_constant: float = 0.0
    """How `timeout` was made: the runner makes each test's allowance the same way
    (`TestBudget`); a factor of 0 leaves `timeout` as is, for the whole child."""

    def longest(self) -> float:
        """The most wall time the job can take: its slow tests timed alone (each within
        its baseline time), its tests' allowances, the original's timing, and the
        allowances that timing can give, twice (a child stopped by the wall backstop is
        run again once)."""
        timed = self.timeout_factor * ORIGINAL_TIMING_LIMIT + self.timeout_constant
        tests = len(self.tests) + len(self.subprocess_tests)
        one_child = wall_allowed(self.timeout) + tests * WALL_EXTRA_SECONDS + wall_allowed(timed)
        baseline = self.timeout / self.timeout_factor if self.timeout_factor else 0.0
        alone = WALL_FACTOR * baseline + tests * WALL_EXTRA_SECONDS
        return alone + 2 * one_child + ORIGINAL_TIMING_LIMIT

    def undone(self, original: str) -> Job:
        """This job with its change undone (`original`: the file's text): its child runs
        the same statements again, and serves the file to subprocesses, unchanged."""
        return dataclasses.replace(self, replacement=original[self.patch_start : self.patch_end])

    @staticmethod
    def encode_code(code: bytes) -> str:
        return base64.b64encode(code).decode("ascii")

    def code_bytes(self) -> bytes:
        return base64.b64decode(self.code_b64)

    def mutated(self, original: str) -> str:
        return original[: self.patch_start] + self.replacement + original[self.patch_end :]


@dataclass(frozen=True)
class TestBudget:
    """CPU seconds a mutant's child may use: before its first test (applying the
    mutant, running statements again), the job's timeout; in each test, from its start,
    `timeout_factor` x the test's time + `timeout_constant`. A test's time is the
    baseline's, or the original code's on the same tests in a child like the mutant's
    where that is longer: the baseline can undercharge a test, since a fresh child pays
    again what the baseline's one process paid once, for whichever test came first (a
    lazy import, a cache filled on first use). A hang in a quick test is then stopped at
    that test's cost, not at the cost of every test the mutant has."""

    __test__ = False  # not a pytest test class, despite the name
    job: Job
    baseline: tuple[float, ...]
    """The baseline's time of each test the child runs, in order."""
    original: tuple[float, ...] = ()
    """The original code's CPU time of each, where timed."""

    @property
    def per_test(self) -> bool:
        return bool(self.job.timeout_factor)

    def cpu(self, test: int) -> float:
        """CPU seconds for test number `test` (-1: before the first)."""
        if not self.per_test or not 0 <= test < len(self.baseline):
            return self.job.timeout
        seconds = self.baseline[test]
        if test < len(self.original):
            seconds = max(seconds, self.original[test])
        return self.job.timeout_factor * seconds + self.job.timeout_constant


@dataclass(frozen=True)
class OriginalCost:
    """What the original code took on a job's tests in a child like the mutant's: CPU
    seconds in each test (as far as it got within ORIGINAL_TIMING_LIMIT) and how far
    the child grew beyond the runner (its peak)."""

    cpu: tuple[float, ...]
    growth_mb: float

    def growth_limit_mb(self, memory_limit_mb: int) -> int:
        """What a mutant's child of these tests may grow by: twice the original's growth,
        16 MB more, within the memory limit."""
        return min(memory_limit_mb, math.ceil(2 * self.growth_mb) + 16)


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class JobResult:
    id: str
    status: Literal["Killed", "Survived", "Timeout", "RuntimeError", "CompileError"]
    killed_by: list[str] = field(default_factory=list)
    kill_kind: Literal["assertion", "error", "crash", "timeout", ""] = ""
    """How the killing test failed: a check failed, another exception, or the process died."""
    kills: list[tuple[str, str, int]] = field(default_factory=list)
    """Each test that failed on the mutant, in the order they ran: (nodeid, kind, line of
    the failing check); the first only unless the job asked for all killers."""
    ran: int = 0
    duration: float = 0.0
    """Wall time of the mutant's child, fork to exit."""
    tests_seconds: float = 0.0
    """Of that, the time pytest measured inside the tests' setup, call and teardown."""
    fork_seconds: float = 0.0
    """What the runner's fork of the child took."""
    detail: str = ""
    on_copy: bool = False
    """The verdict came from a run on a copy of the project (the copy path)."""
    subprocess_unreached: bool = False
    """Survived, and no Python subprocess of its tests got the mutated file from the
    hook (one that reads the file itself, say): the copy path decides."""


@dataclass
class Ready:
    collected: int
    ready: bool = True
    at: float = 0.0
    """`time.monotonic()` when the runner was ready: the audit process reads the clock
    shared by every process of the machine to learn what a runner's start-up costs."""
    missing: list[str] = field(default_factory=list)
    waited: float = 0.0
    """Seconds it waited for the baseline's facts, collected: not part of its start-up."""
