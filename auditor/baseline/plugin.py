"""The pytest plugin loaded into the baseline child.

One concern per hook: switch the coverage context per test phase, arm a per-phase
timeout, and stream one event per collected file, test start and test result to the
parent, so the parent knows which test was running if the child dies.
"""

from __future__ import annotations

import os
import random
import re
import resource
import signal
import sys
from collections.abc import Callable, Generator
from pathlib import Path
from typing import IO, Any

import pytest

from auditor.baseline import protocol
from auditor.baseline.observe import CallRecorder
from auditor.baseline.patterns import compiled_patterns
from auditor.containment import wire
from auditor.containment.guard import Blocked
from auditor.containment.memory import resident_bytes
from auditor.containment.sandbox import (
    benchmarks_run_once,
    derandomize_hypothesis,
    seed_random,
)

_SUBPROCESS_CONTEXT = "AUDIT_SUBPROCESS_CONTEXT"
"""Read by subprocess_site/sitecustomize.py in the Python processes a test starts."""
_PHASE_CONTEXT = {"setup": "setup", "call": "run", "teardown": "teardown"}


class TestTimeout(BaseException):
    """Raised by the timer in a test phase; a BaseException so `except Exception` misses it."""


def _short_message(report: pytest.TestReport | pytest.CollectReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message).strip().splitlines()[0] if crash.message else ""
    text = str(report.longrepr or "").strip()
    lines = [line for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("E ")]
    return (errors or lines or [""])[-1].lstrip("E ").strip()


_TRACEBACK_LINE = re.compile(
    r'File "(?P<file>[^"]+)", line (?P<line>\d+)|(?P<short>\S+\.py):(?P<n>\d+): '
)


def _line_in(traceback: str, path: str) -> int | None:
    """The last line of `path` a collection error's traceback names (a syntax error's
    position, the failing import)."""
    found = None
    wanted = os.path.realpath(path)
    for match in _TRACEBACK_LINE.finditer(traceback):
        if os.path.realpath(match["file"] or match["short"]) == wanted:
            found = int(match["line"] or match["n"])
    return found


class BaselinePlugin:
    def __init__(
        self,
        coverage: Any,
        events: IO[str],
        timeout: float,
        shuffle_seed: int | None = None,
        recorder: CallRecorder | None = None,
        after_timeout: Callable[[], None] | None = None,
        *,
        deselect: frozenset[str] = frozenset(),
        uncollected: frozenset[str] = frozenset(),
    ) -> None:
        self._coverage = coverage
        self._deselect = deselect
        self._uncollected = uncollected
        self._recorder = recorder
        self._after_timeout = after_timeout
        """Ends the process once a timed-out test's result is out (`protocol.Resume`)."""
        self._shuffle_seed = shuffle_seed
        self._events = events
        self._timeout = timeout
        self._current: str | None = None
        self._current_file = ""
        self._timed_out = False
        """The running phase's timer fired: a second alarm means the test caught the
        `TestTimeout` and ran on (`unittest`'s `subTest` does, once per subtest)."""
        self._blocked: list[Blocked] = []
        self._phases: dict[str, dict[str, Any]] = {}
        self._spawns = False
        self._pid = os.getpid()

    def emit(self, event: protocol.Event) -> None:
        self._events.write(wire.encode(event) + "\n")
        self._events.flush()

    def watch_subprocesses(self, event: str, args: tuple) -> None:
        """Audit hook: note tests that start another Python (their code runs unmeasured)."""
        if event == "subprocess.Popen" and self._current is not None:
            executable = str(args[0] or (args[1][0] if args[1] else ""))
            if "python" in os.path.basename(executable) or executable == sys.executable:
                self._spawns = True

    def record_blocked(self, blocked: Blocked) -> None:
        if self._current is not None:
            self._blocked.append(blocked)

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        derandomize_hypothesis()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        benchmarks_run_once(session.config)

    # collection -------------------------------------------------------------

    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        """A file of `ChildSpec.uncollected` is not imported; pytest's own rules decide
        the rest (its config's ignores, the files a later test file adds)."""
        if not self._uncollected:  # a whole run: no path to resolve
            return None
        return True if os.path.realpath(collection_path) in self._uncollected else None

    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        path = getattr(collector, "path", None)
        if path is not None and path.suffix == ".py":
            self.emit(protocol.Collecting(path=str(path)))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            path = str(report.fspath) if getattr(report, "fspath", None) else report.nodeid
            line = _line_in(str(report.longrepr or ""), path)
            message = _short_message(report)
            self.emit(protocol.CollectError(path=path, message=message, line=line))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """The tests of `ChildSpec.deselect` left out, by their exact ids (pytest's
        `--deselect` takes prefixes: `test_plain` would take `test_plain_headerless`
        along). Then, in the flaky reruns, another order: seed 0 reverses it, so every
        pair of tests runs the other way round (what catches a test that needs another
        to run first); later seeds shuffle. Never the original order."""
        left_out = [item for item in items if item.nodeid in self._deselect]
        if left_out:
            items[:] = [item for item in items if item.nodeid not in self._deselect]
            config.hook.pytest_deselected(items=left_out)
        if self._shuffle_seed is None or len(items) < 2:
            return
        reordered = list(reversed(items))
        if self._shuffle_seed:
            random.Random(self._shuffle_seed).shuffle(reordered)
            if reordered == items:
                reordered.reverse()
        items[:] = reordered

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        """What was left out, by this plugin or by the project's own options."""
        self.emit(protocol.Deselected(nodeids=[item.nodeid for item in items]))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        resident_mb = resident_bytes(os.getpid()) / 2**20
        self.emit(protocol.Collected(count=len(session.items), resident_mb=resident_mb))

    # running ----------------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        self._current = item.nodeid
        self._current_file = str(item.path)
        self._blocked = []
        self._spawns = False
        self._phases[item.nodeid] = {"outcomes": {}, "duration": 0.0, "message": ""}
        self.emit(protocol.Start(nodeid=item.nodeid))
        os.environ[_SUBPROCESS_CONTEXT] = protocol.context_name(item.nodeid, protocol.SUBPROCESS)
        seed_random(item.nodeid)
        yield
        os.environ.pop(_SUBPROCESS_CONTEXT, None)
        outcome = self._finish(item)
        self._current = None
        self._coverage.switch_context(protocol.OUTSIDE_TESTS)
        if outcome == "timeout" and self._after_timeout is not None:
            self.emit_observations()
            self._after_timeout()

    def on_alarm(self, signum: int, frame: object) -> None:
        """SIGALRM: the phase ran out of time. The first alarm raises `TestTimeout` in
        the test; if the test is still running `_CAUGHT_TIMEOUT_GRACE` seconds later, it
        caught it, and the process ends here (`after_timeout`)."""
        if not self._timed_out:
            self._timed_out = True
            signal.setitimer(signal.ITIMER_REAL, _CAUGHT_TIMEOUT_GRACE)
            raise TestTimeout("test timed out")
        if self._current is None or self._after_timeout is None:
            raise TestTimeout("test timed out")
        state = self._phases.pop(self._current, {"duration": 0.0})
        self._emit_result(
            self._current,
            self._current_file,
            "timeout",
            state["duration"] + self._timeout,
            f"timed out after {self._timeout:g}s, and caught the timeout and ran on",
        )
        self.emit_observations()
        self._after_timeout()

    def _phase(self, item: pytest.Item, phase: str) -> Generator[None, None, None]:
        self._coverage.switch_context(protocol.context_name(item.nodeid, _PHASE_CONTEXT[phase]))
        self._timed_out = False
        signal.setitimer(signal.ITIMER_REAL, self._timeout)
        if self._recorder is not None:
            self._recorder.start()
        try:
            yield
        finally:
            if os.getpid() != self._pid:
                os._exit(0)  # a copy a test forked and left running: it reports nothing
            if self._recorder is not None:
                self._recorder.stop()
            signal.setitimer(signal.ITIMER_REAL, 0)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._phase(item, "setup")

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._phase(item, "call")

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._phase(item, "teardown")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        state = self._phases.get(report.nodeid)
        if state is None:
            return
        state["duration"] += report.duration
        outcome = report.outcome
        if report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = _short_message(report)
            if crash is not None and "TestTimeout" in str(crash.message):
                outcome = "timeout"
                message = f"timed out after {self._timeout:g}s in {report.when}"
            elif report.when != "call":
                outcome = "error"
            if not state["message"]:
                state["message"] = message
        previous = state["outcomes"].get(report.when)
        if previous in (None, "passed"):
            state["outcomes"][report.when] = outcome

    def _finish(self, item: pytest.Item) -> str:
        state = self._phases.pop(item.nodeid)
        outcomes = list(state["outcomes"].values())
        outcome = "passed"
        for candidate in ("timeout", "error", "failed", "skipped"):
            if candidate in outcomes:
                outcome = candidate
                break
        message = state["message"]
        if self._blocked:
            outcome = "blocked"
            first = self._blocked[0]
            message = f"blocked by audit guard: {first.event} {first.target}"
        self._emit_result(item.nodeid, str(item.path), outcome, state["duration"], message)
        return outcome

    def _emit_result(
        self, nodeid: str, file: str, outcome: str, duration: float, message: str
    ) -> None:
        self.emit(
            protocol.Result(
                nodeid=nodeid,
                file=file,
                outcome=outcome,
                duration=duration,
                message=message,
                blocked=[{"event": b.event, "target": b.target} for b in self._blocked],
                spawns_python=self._spawns,
            )
        )

    def emit_observations(self) -> None:
        if self._recorder is not None:
            self._recorder.close()
            for observed in self._recorder.observations():
                self.emit(observed)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.emit_observations()
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        finish = protocol.Finish(int(exitstatus), peak_mb, patterns=compiled_patterns())
        self.emit(finish)
        _skip_unused_hypothesis_summary(session.config)
        _skip_final_collections(session.config)


def _skip_unused_hypothesis_summary(config: pytest.Config) -> None:
    """Hypothesis's terminal summary imports all of Hypothesis, under coverage, even
    when no test used it; no test did when it was never imported, so there is nothing
    to summarize."""
    plugin = config.pluginmanager.get_plugin("hypothesispytest")
    if plugin is not None and "hypothesis" not in sys.modules:
        config.pluginmanager.unregister(plugin)


def _skip_final_collections(config: pytest.Config) -> None:
    """pytest (8.4 on) ends a session with five full garbage collections, to report
    objects whose finalizers raised; on a large collected suite they take a noticeable
    part of a change's baseline. The results are out by now and the process ends without
    running finalizers, so they would only add warnings nobody reads. pytest's own
    `pytester` sets the same count to 0 for its in-process runs."""
    try:
        from _pytest.unraisableexception import gc_collect_iterations_key
    except ImportError:  # before 8.4: no collections at the end
        return
    config.stash[gc_collect_iterations_key] = 0


_CAUGHT_TIMEOUT_GRACE = 2.0
"""Seconds a test may run on after its timeout was raised before it counts as caught."""
