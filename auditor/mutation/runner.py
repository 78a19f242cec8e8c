"""A long-lived runner: `python -m auditor.mutation.runner SPEC.json`.

It imports pytest and the project, collects the tests once, then reads jobs (one
mutant each) on stdin. Each job runs in a forked child that applies the mutant and runs
only the covering tests, fastest first, stopping at the first failure. The result goes
back as one JSON line on the runner's original stdout; the runner's own output goes to
a log file, its children's to /dev/null.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import marshal
import math
import mmap
import os
import select
import signal
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import IO, Any, NamedTuple

from auditor.baseline.patterns import compile_all
from auditor.containment import wire
from auditor.containment.cpu import cpu_seconds, queued_seconds, runnable
from auditor.containment.memory import MEMORY_POLL_SECONDS, MemoryWatch, resident_bytes
from auditor.mutation.mutant import (
    MutantCompileError,
    MutantImportError,
    MutantSources,
    PreparedMutant,
)
from auditor.mutation.protocol import (
    ORIGINAL_TIMING_LIMIT,
    BaselineFacts,
    Job,
    JobResult,
    OriginalCost,
    Ready,
    RunnerSpec,
    TestBudget,
    wall_allowed,
)
from auditor.mutation.swap import SwapError
from auditor.mutation.test_ids import by_baseline_id

_PYTEST_ARGS = ["-p", "no:cacheprovider", "-s", "--tb=no", "-q"]

SLOW_TEST_SECONDS = 0.5
"""A test this slow in the baseline is timed again alone, untraced, before a mutant's
allowance in it is set from its time."""


class RunnerPlugin:
    """Takes over pytest's run loop to serve mutants instead of running the suite."""

    def __init__(self, spec: Any, results: IO[str]) -> None:
        self.spec = spec
        self.results = results
        self.failed_in_child = False
        self.failed_by_check = False
        self.failed_at = 0
        self.sources = MutantSources()
        self.original_costs: dict[tuple[str, ...], OriginalCost] = {}
        """What the original code took on each list of tests a mutant ran past its
        allowance with, in a child like the mutant's (`TestBudget`, `OriginalCost`)."""
        self.alone_seconds: dict[str, float] = {}
        """Each slow test's CPU time alone on the original code (`_test_seconds`)."""
        self.progress = _Progress()
        """Where a mutant's child is among its tests (one child on a mutant at a time)."""
        self.facts = BaselineFacts()
        """The baseline's, read once the tests are collected."""

    def pytest_runtest_makereport(self, item: Any, call: Any) -> None:
        # A check (assert, pytest.raises, pytest.fail) failing is an oracle at work; any
        # other exception means the mutant crashed the code, which even a test without
        # assertions notices.
        if call.excinfo is not None and call.when == "call":
            from _pytest.outcomes import Failed

            if call.excinfo.errisinstance((AssertionError, Failed)) or _doctest_mismatch(
                call.excinfo.value
            ):
                self.failed_by_check = True
                self.failed_at = _line_in_test_file(call.excinfo, item)

    def pytest_configure(self, config: Any) -> None:
        from auditor.containment.sandbox import derandomize_hypothesis

        derandomize_hypothesis()

    def pytest_sessionstart(self, session: Any) -> None:
        from auditor.containment.sandbox import benchmarks_run_once

        benchmarks_run_once(session.config)

    def pytest_runtest_logreport(self, report: Any) -> None:
        # Subtests report their failures here, not in runtestprotocol's return value.
        if report.failed:
            self.failed_in_child = True

    def pytest_runtestloop(self, session: Any) -> bool:
        from auditor.mutation.swap import live_functions

        for item in session.items:
            _brief_failures(item)
            # Computed once here rather than in every child: pytest caches it on the item,
            # and building it (paths, reportinfo) is a large part of the protocol's cost
            # outside the tests.
            item.location  # noqa: B018
        self.index = live_functions(set(self.spec.source_files))
        collected = time.monotonic()
        facts = sys.stdin.readline().strip()  # the file that holds them (`RunnerPool.measured`)
        if not facts:  # the audit process went away before the baseline ended
            return True
        self.facts = wire.build(BaselineFacts, Path(facts).read_text(encoding="utf-8"))
        waited = time.monotonic() - collected
        # Left out by their exact ids: pytest's `--deselect` takes prefixes (`test_a`
        # would take `test_ab` along).
        left_out = set(self.facts.deselect)
        kept = [item for item in session.items if item.nodeid not in left_out]
        self.items = by_baseline_id(kept, self.facts.test_seconds)
        self.ids = {id(item): nodeid for nodeid, item in self.items.items()}
        """The baseline's id of each item: the report's, whichever this session has."""
        compile_all(self.facts.patterns)  # once here, not in every child
        self.send(Ready(collected=len(self.items), at=time.monotonic(), waited=waited))
        for line in sys.stdin:
            if not line.strip():
                continue
            job = wire.build(Job, line)
            self.send(JobResult(**self.run_job(job)))
        return True

    def send(self, message: Ready | JobResult) -> None:
        self.results.write(wire.encode(message) + "\n")
        self.results.flush()

    # one mutant ---------------------------------------------------------------

    def run_job(self, job: Any) -> dict[str, Any]:
        items = [self.items[nodeid] for nodeid in job.tests if nodeid in self.items]
        spawning = [self.items[nodeid] for nodeid in job.subprocess_tests if nodeid in self.items]
        if not items and not spawning:
            return {"id": job.id, "status": "RuntimeError", "detail": "no covering test collected"}
        try:
            mutant = self.sources.prepare(job)
        except SwapError as changed:
            return {"id": job.id, "status": "RuntimeError", "detail": str(changed)}
        ran = tuple(self.ids[id(item)] for item in items + spawning)
        baseline = tuple(
            self._test_seconds(mutant, item, nodeid)
            for item, nodeid in zip(items, ran, strict=False)
        ) + tuple(self.facts.test_seconds.get(nodeid, 0.0) for nodeid in ran[len(items) :])

        def timed_original() -> OriginalCost | None:
            if ran in self.original_costs or not job.timeout_factor:
                return None  # nothing new to learn
            self.original_costs[ran] = self._time_original(mutant, items, spawning)
            return self.original_costs[ran]

        verdict, waited = self._run_child(job, mutant, items, spawning, baseline, timed_original)
        if waited and verdict["status"] == "Timeout":
            # Stopped by the wall backstop: a stall of the machine (a disk or memory
            # wait under load) looks the same as a hang that waits, once. A hang waits
            # again in a fresh child; a stall does not come back at the same place.
            verdict, _ = self._run_child(job, mutant, items, spawning, baseline, timed_original)
        return verdict

    def _run_child(
        self,
        job: Any,
        mutant: PreparedMutant,
        items: list[Any],
        spawning: list[Any],
        baseline: tuple[float, ...],
        timed_original: Callable[[], OriginalCost | None],
    ) -> tuple[dict[str, Any], bool]:
        """One child on the mutant: its verdict, and whether the wall backstop stopped it."""
        ran = tuple(self.ids[id(item)] for item in items + spawning)
        forking = time.monotonic()
        self.progress.reset()
        pid, read_end = self._fork(mutant, items, spawning, progress=self.progress)
        fork_seconds = time.monotonic() - forking
        child = _Watched(
            pid,
            TestBudget(job, baseline),
            MemoryWatch(pid, resident_bytes(os.getpid()), self.facts.child_growth_limit_mb),
            memory_limit_mb=self.spec.memory_limit_mb,
        )
        if ran in self.original_costs:
            child.allow(self.original_costs[ran])
        output, past = _read_until(read_end, child, timed_original, self.progress)
        wait_status, usage = self._reap(
            pid, read_end, stop=past is not None or child.memory.exceeded
        )
        if past is not None:
            # The polls may have missed a child that outgrew its memory while it also
            # ran past its time: its peak, from the kernel, tells which it was.
            child.memory.exceeded = child.memory.peaked(usage.ru_maxrss * 1024)
        duration = time.monotonic() - forking
        started = ran[: self.progress.position() + 1]
        verdict = _verdict(job.id, output, past, wait_status, duration, started)
        verdict["fork_seconds"] = round(fork_seconds, 6)
        if child.memory.exceeded and not verdict.get("kills"):
            verdict.update(status="Timeout", kill_kind="timeout", detail=child.memory.describe())
        return verdict, child.waited_past and not child.memory.exceeded

    def _fork(
        self,
        mutant: PreparedMutant,
        items: list[Any],
        spawning: list[Any],
        undone: bool = False,
        progress: _Progress | None = None,
    ) -> tuple[int, int]:
        """A child running the tests on the mutant (or, `undone`, on the original code):
        its pid and the end of the pipe it reports on. With `progress`, it marks there
        which test it is in; without, it reports each test's start on the pipe."""
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            self._child(mutant, items, spawning, write_end, undone, progress)
            os._exit(0)  # not reached: _child always leaves with os._exit
        os.close(write_end)
        return pid, read_end

    def _reap(self, pid: int, read_end: int, stop: bool) -> tuple[int, Any]:
        """Close a child's pipe, kill its process group if `stop`, wait for it and remove
        the files it served its subprocesses; its wait status and resource usage."""
        os.close(read_end)
        if stop:
            _kill_group(pid)
        _, wait_status, usage = os.wait4(pid, 0)
        served = self.served_mutant(pid)
        for leftover in (served.spec, served.applied, served.compiled):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
        return wait_status, usage

    def _test_seconds(self, mutant: PreparedMutant, item: Any, nodeid: str) -> float:
        """What a test's allowance follows from: its time in the baseline, or for a slow
        test, its CPU time alone in a child like a mutant's, where it finishes within the
        baseline's time (coverage's tracing can make a test several times slower, and a
        hang in it would run that many times longer)."""
        traced = self.facts.test_seconds.get(nodeid, 0.0)
        if traced < SLOW_TEST_SECONDS:
            return traced
        if nodeid not in self.alone_seconds:
            limit = min(traced, ORIGINAL_TIMING_LIMIT)
            self.alone_seconds[nodeid] = self._time_alone(mutant, item, limit) or traced
        return self.alone_seconds[nodeid]

    def _time_alone(self, mutant: PreparedMutant, item: Any, limit: float) -> float | None:
        """CPU seconds the original code's test takes alone in a child like the
        mutant's, or None if it does not pass within `limit` CPU seconds."""
        run = self._run_original(mutant, [item], [], limit)
        verdict = _verdict(mutant.job.id, run.output, run.past, run.wait_status, 0.0)
        child = run.child
        if verdict["status"] != "Survived" or child.memory.exceeded or len(child.starts) != 1:
            return None
        return run.cpu - child.starts[0]

    def _time_original(
        self, mutant: PreparedMutant, items: list[Any], spawning: list[Any]
    ) -> OriginalCost:
        """What the original code takes on the mutant's tests in a child like the
        mutant's (the same statements run again, the same file served, unchanged), as
        far as it gets within ORIGINAL_TIMING_LIMIT and the memory limit. The mutant's
        child runs on meanwhile."""
        limit = ORIGINAL_TIMING_LIMIT
        run = self._run_original(mutant, items, spawning, limit, wall=limit)
        ends = [*run.child.starts[1:], run.cpu]  # the last: until cut
        return OriginalCost(
            cpu=tuple(end - start for start, end in zip(run.child.starts, ends, strict=False)),
            growth_mb=max(0.0, run.peak_mb - run.runner_bytes / 2**20),
        )

    def _run_original(
        self,
        mutant: PreparedMutant,
        items: list[Any],
        spawning: list[Any],
        limit: float,
        wall: float = 0.0,
    ) -> _OriginalRun:
        """The mutant's tests on the original code in a child like the mutant's, within
        `limit` CPU seconds, `wall` seconds for the whole child (0: the wall time of its
        CPU allowance) and the memory limit."""
        source = self.sources.original(mutant.job.file)[0]
        original = self.sources.prepare(mutant.job.undone(source))
        runner_bytes = resident_bytes(os.getpid())
        pid, read_end = self._fork(original, items, spawning, undone=True)
        bounded = dataclasses.replace(mutant.job, timeout=limit, timeout_factor=0)
        child = _Watched(
            pid,
            TestBudget(bounded, ()),
            MemoryWatch(pid, runner_bytes, self.spec.memory_limit_mb),
            wall=wall,
        )
        output, past = _read_until(read_end, child)
        wait_status, usage = self._reap(pid, read_end, stop=True)
        return _OriginalRun(child, output, past, wait_status, usage, runner_bytes)

    def served_mutant(self, child: int) -> ServedMutant:
        return ServedMutant(Path(self.spec.scratch) / f"mutant-{child}.spec")

    def _child(
        self,
        mutant: PreparedMutant,
        items: list[Any],
        spawning: list[Any],
        channel: int,
        undone: bool = False,
        progress: _Progress | None = None,
    ) -> None:
        """The forked child of one mutant: apply it, run its tests, report, exit."""
        tell = _teller(channel)
        module_code = self._set_up_child(mutant, items, tell, undone)
        served = self.served_mutant(os.getpid())
        try:
            if mutant.job.serve_subprocesses:
                served.offer(mutant.job.file, mutant.mutated, module_code)
            self._run_tests(mutant.job, items + spawning, tell, served, progress)
        except BaseException as exc:
            tell({"error": f"{type(exc).__name__}: {exc}"[:300]})
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)

    def _set_up_child(
        self, mutant: PreparedMutant, items: list[Any], tell: _Tell, undone: bool
    ) -> bytes | None:
        """Contain the child and put the mutant in place; the code subprocesses load on
        the subprocess path. A mutant that cannot be put in place ends the child here."""
        from auditor.containment.sandbox import limit_resources

        job = mutant.job
        try:
            os.setpgid(0, 0)
            _discard_output()
            _detach_stdin()
            limit_resources(self.spec.memory_limit_mb, cpu_seconds=math.ceil(job.longest()) + 2)
            if job.path == "subprocess":  # only its tests' subprocesses get the mutant
                return mutant.compile_module()
            if job.path == "module" or not undone:  # swapping in the same code is free
                mutant.apply(self.index)
            return None
        except MutantCompileError as exc:
            tell({"compile_error": str(exc)})
        except MutantImportError as exc:
            first = self.ids[id(items[0])]
            tell({"start": first})
            tell({"killed_by": first, "kill_kind": "error", "detail": str(exc)})
        except SwapError as exc:
            tell({"error": str(exc)})
        except BaseException as exc:
            tell({"error": f"{type(exc).__name__}: {exc}"[:300]})
        os._exit(0)

    def _run_tests(
        self,
        job: Job,
        everything: list[Any],
        tell: _Tell,
        served: ServedMutant,
        progress: _Progress | None,
    ) -> None:
        """Each test in turn until one fails (every test with `all_killers`); the tests'
        own time is pytest's, per phase. Each test's start is marked in `progress`, or
        told where there is none (the original code's timing needs each start's CPU
        time)."""
        from _pytest.runner import runtestprotocol

        from auditor.containment.sandbox import seed_random

        tests_seconds = 0.0
        killed = False
        child = os.getpid()
        for position, item in enumerate(everything):
            nodeid = self.ids[id(item)]
            if progress is None:
                tell({"start": nodeid})
            elif os.getpid() == child:
                progress.enter(position)
            else:
                os._exit(0)  # a copy a test forked and left running: it reports nothing
            following = everything[position + 1] if position + 1 < len(everything) else None
            self.failed_in_child = self.failed_by_check = False
            self.failed_at = 0
            key = "also_killed_by" if killed else "killed_by"
            seed_random(nodeid)
            try:
                reports = runtestprotocol(item, log=False, nextitem=following)
            except KeyboardInterrupt:
                # Not the user's Ctrl-C (the child has its own process group): the mutant
                # let an interrupt escape the test, which stops a pytest run.
                detail = "an interrupt escaped the test and stopped the run"
                tell({key: nodeid, "kill_kind": "error", "detail": detail})
                os._exit(0)
            tests_seconds += sum(report.duration for report in reports)
            if self.failed_in_child or any(report.failed for report in reports):
                kind = "assertion" if self.failed_by_check else "error"
                at = self.failed_at if self.failed_by_check else 0
                tell({key: nodeid, "kill_kind": kind, "tests": tests_seconds, "at": at})
                if not job.all_killers:
                    os._exit(0)
                killed = True
        if killed:
            os._exit(0)
        unreached = job.serve_subprocesses and not served.applied.exists()
        tell({"survived": len(everything), "tests": tests_seconds, "unreached": unreached})


_Tell = Callable[[dict[str, Any]], None]


def _teller(channel: int) -> _Tell:
    """Writes a message to the runner; in a copy of the child that a test forked and left
    running, exits instead: that copy reports nothing."""
    child = os.getpid()

    def tell(message: dict[str, Any]) -> None:
        if os.getpid() != child:
            os._exit(0)
        os.write(channel, (json.dumps(message) + "\n").encode())

    return tell


def _line_in_test_file(excinfo: Any, item: Any) -> int:
    """The line of the test's own file where the failing check was (its last frame
    there: the assert, or the call of the helper that asserted); 0 when none is."""
    test_file = str(getattr(item, "path", ""))
    for entry in reversed(excinfo.traceback):
        if str(entry.path) == test_file:
            return int(entry.lineno) + 1
    return 0


def _doctest_mismatch(error: BaseException) -> bool:
    """A doctest whose output differs from the expected one failed a comparison, as an
    assertion does; one that raised an exception it did not expect did not."""
    doctest = sys.modules.get("doctest")
    if doctest is None:
        # No doctest ran, so none failed; importing the module in each child would
        # cost a killed mutant more than its test.
        return False
    # pytest raises the first DocTestFailure, or all of them in a MultipleDoctestFailures
    # under --doctest-continue-on-failure.
    failures = getattr(error, "failures", [error])
    return isinstance(failures, list) and any(
        isinstance(failure, doctest.DocTestFailure) for failure in failures
    )


def _detach_stdin() -> None:
    """The runner's stdin carries its next job: a test reading stdin gets nothing."""
    empty = os.open(os.devnull, os.O_RDONLY)
    os.dup2(empty, 0)
    os.close(empty)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 (the child's stdin for its life)


def _discard_output() -> None:
    """A mutant's child reports through its channel; what its tests print is of no use
    to anyone (a suite that prints tables would write hundreds of megabytes into the
    runner's log), so it goes to /dev/null, in blocks rather than a write per line."""
    sys.stdout.flush()
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(line_buffering=False)


def _brief_failures(item: Any) -> None:
    """A failing test's report says only what failed: a child needs the outcome, and
    pytest's traceback formatting would cost each killed mutant milliseconds (the repr
    methods are set on the item, so an unknown pytest version merely ignores them)."""

    def brief(excinfo: Any, style: Any = None) -> str:
        return excinfo.typename

    item.repr_failure = brief
    item._repr_failure_py = brief


@dataclass(frozen=True)
class ServedMutant:
    """The mutant a child serves to the Python processes its tests start: our
    sitecustomize (on their PYTHONPATH) reads the spec named by `AUDIT_MUTANT` and loads
    the mutated source in place of the file; its first such import creates `applied`,
    and loads the mutated file's code from `compiled` (the child's or the first
    process's compilation) rather than compiling it again."""

    spec: Path

    @property
    def applied(self) -> Path:
        return self.spec.with_suffix(".applied")

    @property
    def compiled(self) -> Path:
        return self.spec.with_suffix(".code")

    def offer(self, file: str, mutated_source: str, code: CodeType | None = None) -> None:
        """Serve the mutated source to the processes the child starts, with its `code`
        when the child compiled it already."""
        if code is not None:
            # The header sitecustomize's `_load_compiled` checks: the bytecode version
            # and optimization level of the interpreter that compiled it.
            header = importlib.util.MAGIC_NUMBER + bytes([sys.flags.optimize])
            self.compiled.write_bytes(header + marshal.dumps(code))
        message = {
            "file": file,
            "source": mutated_source,
            "applied": str(self.applied),
            "compiled": str(self.compiled),
        }
        # marshal, not JSON: the sitecustomize reads it without importing anything
        self.spec.write_bytes(marshal.dumps(message))
        os.environ["AUDIT_MUTANT"] = str(self.spec)


_CORES = os.cpu_count() or 1


class _Progress:
    """The test a mutant's child is in, in memory the runner shares with its children.
    Telling each start on the pipe woke the runner for every test, a cost as large as
    the test's own where tests take a fraction of a millisecond. The runner reads it
    when it judges the child's time, at least every `MEMORY_POLL_SECONDS`. One aligned
    4-byte number, written and read whole."""

    def __init__(self) -> None:
        self._memory = mmap.mmap(-1, mmap.PAGESIZE)  # anonymous: shared with forks

    def reset(self) -> None:
        self.enter(-1)

    def enter(self, position: int) -> None:
        struct.pack_into("=i", self._memory, 0, position)

    def position(self) -> int:
        """The test it is in, by place in its job; -1 before the first."""
        return int(struct.unpack_from("=i", self._memory, 0)[0])


class _Mark(NamedTuple):
    """Where a child's allowance is counted from: its CPU seconds, the runner's clock,
    and the seconds it had waited for a core."""

    cpu: float
    wall: float
    queued: float


class _OriginalRun(NamedTuple):
    """A child that ran tests on the original code, once it ended."""

    child: _Watched
    output: bytes
    past: str | None
    wait_status: int
    usage: Any
    runner_bytes: int

    @property
    def cpu(self) -> float:
        return self.usage.ru_utime + self.usage.ru_stime

    @property
    def peak_mb(self) -> float:
        return self.usage.ru_maxrss / 1024


@dataclass
class _Watched:
    """A child the runner waits for, and what it may use: CPU seconds in each test (a
    hang that computes; `TestBudget`), wall seconds (one that waits: `wall_allowed` of
    the CPU allowance, or `wall`, for the whole child) and memory."""

    pid: int
    budget: TestBudget
    memory: MemoryWatch
    wall: float = 0.0
    memory_limit_mb: int = 0
    started: float = field(default_factory=time.monotonic)
    test: int = -1
    """The test it runs, by its place in the job; -1 before the first."""
    starts: list[float] = field(default_factory=list)
    """Its CPU seconds as each test started."""
    mark: _Mark = field(init=False)
    waited_past: bool = False
    """It was stopped by the wall backstop (waiting), not by its CPU time."""

    def __post_init__(self) -> None:
        self.mark = _Mark(0.0, self.started, 0.0)

    def next_test(self) -> None:
        self.test += 1
        self.starts.append(cpu_seconds(self.pid))
        if self.budget.per_test:
            self.mark = _Mark(self.starts[-1], time.monotonic(), queued_seconds(self.pid))

    def reached(self, position: int) -> None:
        """It is in test number `position` (or a later one). Seen late, the test's start
        is counted from now: its allowance is then a little longer, never shorter."""
        if position > self.test:
            self.test = position - 1
            self.next_test()

    def past_allowance(self) -> str | None:
        """What it ran past of its time, or None."""
        cpu = self.budget.cpu(self.test)
        wall = self.wall or wall_allowed(cpu)
        waited = time.monotonic() - self.mark.wall
        self.waited_past = waited > wall and self._waits_past(wall, waited)
        if self.waited_past:
            return f"no verdict within {wall:.1f}s"
        # Its CPU time grows at most as fast as wall time on every core: /proc is read
        # only once the allowance could be used up, not on every message of a quick test.
        if waited * _CORES > cpu and cpu_seconds(self.pid) - self.mark.cpu > cpu:
            return f"more than {cpu:.2f}s of CPU time"
        return None

    def _waits_past(self, wall: float, waited: float) -> bool:
        """Whether it waits on something other than a core, past `wall`. A child kept
        from a core by the load did not hang: only the time it could have run counts,
        and a child ready to run is left to its CPU allowance."""
        could_run = waited - (queued_seconds(self.pid) - self.mark.queued)
        return could_run > wall and not runnable(self.pid)

    def allow(self, original: OriginalCost) -> bool:
        """Allow what the original code took where that is more; whether the child is
        within its allowances now."""
        self.budget = dataclasses.replace(self.budget, original=original.cpu)
        self.memory.allow(original.growth_limit_mb(self.memory_limit_mb))
        return self.past_allowance() is None and not self.memory.check()


def _read_until(
    fd: int,
    child: _Watched,
    timed_original: Callable[[], OriginalCost | None] | None = None,
    progress: _Progress | None = None,
) -> tuple[bytes, str | None]:
    """A child's output until it closes its end, and what it ran past of its time if it
    did (None when it finished, or grew past its memory: `child.memory.exceeded`). At
    that point `timed_original` may allow it more from the original code's cost, once.
    The test it is in comes from `progress`, when given, else from its messages."""
    chunks: list[bytes] = []
    pending = b""
    while True:
        if progress is not None:
            child.reached(progress.position())
        # What the child has written is read before its time is judged: a runner kept
        # from a core by the load may wake to a verdict that came in time.
        if not _readable(fd, 0.0):
            past = child.past_allowance()
            if past is not None or child.memory.exceeded:
                original = timed_original() if timed_original is not None else None
                timed_original = None
                if original is not None:
                    if child.allow(original):
                        continue
                    past = child.past_allowance()  # what it ran past of the new allowance
                return b"".join(chunks), past
            if not _readable(fd, MEMORY_POLL_SECONDS):
                child.memory.check()
                continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks), None
        chunks.append(chunk)
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            if line.startswith(b'{"start"'):
                child.next_test()


def _readable(fd: int, wait: float) -> bool:
    return bool(select.select([fd], [], [], wait)[0])


def _kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            target()


def _describe(wait_status: int) -> str:
    if os.WIFSIGNALED(wait_status):
        number = os.WTERMSIG(wait_status)
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    return f"exited with code {os.WEXITSTATUS(wait_status)}"


def _verdict(
    job_id: str,
    output: bytes,
    past: str | None,
    wait_status: int,
    duration: float,
    marked: tuple[str, ...] = (),
) -> dict[str, Any]:
    """`past`: what the child ran past of its allowance, when it did; `marked`: the tests
    it started, as its `_Progress` says (else its messages say)."""
    timed_out = past is not None
    messages = [json.loads(line) for line in output.decode(errors="replace").splitlines() if line]
    started = [m["start"] for m in messages if "start" in m] or list(marked)
    result: dict[str, Any] = {"id": job_id, "ran": len(started), "duration": round(duration, 4)}
    final = next((m for m in reversed(messages) if "start" not in m), None)
    kills = [m for m in messages if "killed_by" in m or "also_killed_by" in m]
    if kills:
        # With all killers asked for, a later test may hang or crash after the first
        # kill: the mutant is killed all the same, by the tests that failed.
        first = kills[0]
        result.update(
            status="Killed",
            killed_by=[first["killed_by"]],
            kill_kind=first.get("kill_kind", "error"),
            kills=[
                (
                    m.get("killed_by") or m["also_killed_by"],
                    m.get("kill_kind", "error"),
                    m.get("at", 0),
                )
                for m in kills
            ],
            detail=first.get("detail", ""),
        )
        if timed_out and started and started[-1] != first["killed_by"]:
            result["detail"] = f"a later test ran past its allowance: {past}"
    elif timed_out:
        result.update(status="Timeout", kill_kind="timeout", detail=past)
        if started:
            result["detail"] += f" (running {started[-1]})"
            result["killed_by"] = [started[-1]]
    elif final is None and started:
        # The process died inside a test: the mutant crashed it, which the test detects.
        result.update(
            status="Killed",
            killed_by=[started[-1]],
            kill_kind="crash",
            detail=f"test process {_describe(wait_status)}",
        )
    elif final is None:
        result.update(
            status="RuntimeError", detail=f"child {_describe(wait_status)} before any test"
        )
    elif "compile_error" in final:
        result.update(status="CompileError", detail=final["compile_error"])
    elif "survived" in final:
        result.update(status="Survived")
        if final.get("unreached"):
            result.update(
                subprocess_unreached=True,
                detail="the subprocesses of its tests never imported the mutated file",
            )
    else:
        result.update(status="RuntimeError", detail=final.get("error", "unknown"))
    if final is not None and "tests" in final:
        result["tests_seconds"] = round(final["tests"], 6)
    cpu_limit = os.WIFSIGNALED(wait_status) and os.WTERMSIG(wait_status) == signal.SIGXCPU
    if cpu_limit and not kills:
        result.update(status="Timeout", kill_kind="timeout", detail="CPU time limit reached")
    return result


def main(spec_path: str) -> int:
    from auditor.containment.sandbox import limit_resources, quiet_bytecode

    spec = wire.build(RunnerSpec, Path(spec_path).read_text(encoding="utf-8"))
    limit_resources(spec.memory_limit_mb)
    quiet_bytecode()
    os.chdir(spec.root)
    results = os.fdopen(os.dup(1), "w", buffering=1)
    log = os.open(spec.log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)

    import pytest

    from auditor.containment import guard, rewritten

    plugin = RunnerPlugin(spec, results)
    rewritten.serve(spec.rewritten, spec.root)
    if spec.guard:
        guard.install(spec.allowed_roots, lambda blocked: None, [spec.root])
    args = [*spec.test_paths, "--rootdir", spec.root, "--basetemp", spec.basetemp, *_PYTEST_ARGS]
    args += spec.pytest_args
    status = pytest.main(args, plugins=[plugin])
    results.close()
    return int(status)


if __name__ == "__main__":
    code = main(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
