"""Run the suite in a child process, watch it, and restart it past tests that kill it.

The child streams events; if it dies or hangs inside a test, that test is recorded as
crashed or timed out and the suite is run again without it, so one hostile test never
costs the audit of the others.
"""

from __future__ import annotations

import dataclasses
import itertools
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from coverage import CoverageData

from auditor.baseline import protocol
from auditor.baseline.observe import MAX_CALLS
from auditor.baseline.patterns import Pattern, merged
from auditor.baseline.protocol import ChildSpec
from auditor.containment import rewritten, wire
from auditor.containment.hypothesis_storage import storage_folder, uses_hypothesis
from auditor.containment.isolation import NO_ISOLATION, Isolation
from auditor.containment.sandbox import child_environment
from auditor.discovery.pytest_options import AUDIT_DEFAULTS, PytestOptions
from auditor.errors import AuditError, IncompleteRunError, SuiteUnusableError
from auditor.progress import Progress

MAX_RESTARTS = 20
_FATAL_ERROR = "Fatal Python error"
"""What faulthandler (on in every pytest process) writes when the process crashes."""
_HANG_GRACE_SECONDS = 5.0


@dataclass
class ChildOutcome:
    """What the last (complete) child run produced, plus tests removed along the way."""

    results: list[protocol.Result]
    collection_errors: list[protocol.CollectError]
    removed: list[protocol.Result]
    data_file: Path
    restarts: int
    exitstatus: int = 0
    internal_error: str = ""
    """The last INTERNALERROR line pytest printed, when it printed one."""
    last_collected_file: str = ""
    observed: list[protocol.Observed] = field(default_factory=list)
    """Argument values the tests passed to functions under test (see baseline.observe)."""
    memory_growth_mb: float = 0.0
    """How much the child grew while its tests ran: its peak beyond its size once the
    tests were collected."""
    kept: list[str] = field(default_factory=list)
    """The tests of `BaselineRunner.keep` this collection has (left out of the run)."""
    patterns: list[Pattern] = field(default_factory=list)
    """The regular expressions the suite compiled (`baseline.patterns`)."""


@dataclass
class _Attempt:
    events: list[protocol.Event] = field(default_factory=list)
    returncode: int | None = None
    hung: bool = False


"""Called with (tests finished, tests collected or None)."""


def _running(attempt: _Attempt) -> list[str]:
    """The tests an attempt started and gave no result for, in order."""
    done = {e.nodeid for e in attempt.events if isinstance(e, protocol.Result)}
    return [
        e.nodeid for e in attempt.events if isinstance(e, protocol.Start) and e.nodeid not in done
    ]


def _describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the test process was killed by {name}"
    return f"the test process exited with code {returncode}"


def _read_events(path: Path, offset: int) -> tuple[list[protocol.Event], int]:
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            chunk = handle.read()
    except FileNotFoundError:
        return [], offset
    complete = chunk[: chunk.rfind(b"\n") + 1]
    try:
        events = [
            wire.decode(protocol.Event, line) for line in complete.splitlines() if line.strip()
        ]
    except ValueError:
        # Only the test process writes there: its code under test, or a test, wrote too.
        raise SuiteUnusableError(
            f"the test process wrote a line that is not one of audit's events to {path}"
        ) from None
    return events, offset + len(complete)


def _memory_growth_mb(events: list[protocol.Event]) -> float:
    collected = next((e for e in events if isinstance(e, protocol.Collected)), None)
    finish = next((e for e in events if isinstance(e, protocol.Finish)), None)
    if collected is None or finish is None:
        return 0.0
    return max(0.0, finish.peak_mb - collected.resident_mb)


@dataclass
class _Resumed:
    """What the children that stopped after a timed-out test saved."""

    results: list[protocol.Result] = field(default_factory=list)
    observed: list[protocol.Observed] = field(default_factory=list)
    data_files: list[Path] = field(default_factory=list)

    def add(self, events: list[protocol.Event], data_file: Path) -> None:
        self.results += [e for e in events if isinstance(e, protocol.Result)]
        self.observed += [e for e in events if isinstance(e, protocol.Observed)]
        self.data_files.append(data_file)


def merge_coverage(data_file: Path, others: list[Path]) -> None:
    """Add the coverage data of `others` to `data_file`'s. Each test's lines are under its
    own contexts: a union is what all the children saw of it."""
    target = CoverageData(str(data_file))
    target.read()
    for saved in others:
        other = CoverageData(str(saved))
        other.read()
        target.update(other)
    target.write()


def merge_observed(events: list[protocol.Event]) -> list[protocol.Observed]:
    """The `Observed` events of several children, one per function, calls deduplicated."""
    merged: dict[tuple[str, str], protocol.Observed] = {}
    for event in events:
        if not isinstance(event, protocol.Observed):
            continue
        key = (event.file, event.qualname)
        entry = merged.setdefault(key, dataclasses.replace(event, calls=[]))
        entry.calls += [call for call in event.calls if call not in entry.calls]
        del entry.calls[MAX_CALLS:]
    return [merged[key] for key in sorted(merged)]


_PLUGIN_OF_OPTION = {
    "--timeout": "pytest-timeout",
    "--reruns": "pytest-rerunfailures",
    "--asyncio-mode": "pytest-asyncio",
    "--benchmark": "pytest-benchmark",
    "--numprocesses": "pytest-xdist",
    "--dist": "pytest-xdist",
    "-n": "pytest-xdist",
    "--randomly": "pytest-randomly",
    "--mypy": "pytest-mypy",
    "--doctest-rst": "pytest-doctestplus",
    "--doctest-plus": "pytest-doctestplus",
    "--django": "pytest-django",
    "--ds": "pytest-django",
    "--env": "pytest-env",
    "--mock": "pytest-mock",
    "--html": "pytest-html",
}
"""Options of common plugins, by prefix: what to install when pytest does not know one."""


def pytest_usage_error(output: str) -> str | None:
    """pytest's own message when it refused its command line (an option of a plugin
    that is not installed, usually, named in the project's `addopts`), with what to
    install where the option is a known plugin's; None for any other failure."""
    message = next(
        (line.strip() for line in output.splitlines() if "error: unrecognized arguments" in line),
        None,
    )
    if message is None:
        return None
    unknown = message.split("unrecognized arguments:", 1)[1].split()
    plugins = sorted(
        {
            plugin
            for option in unknown
            for prefix, plugin in _PLUGIN_OF_OPTION.items()
            if option.split("=", 1)[0].startswith(prefix)
        }
    )
    advice = (
        f"; install {' and '.join(plugins)} in this environment"
        if plugins
        else "; install the pytest plugin they belong to in this environment"
    )
    return "pytest refused the project's options: unrecognized arguments: " + (
        " ".join(unknown) + advice
    )


def conftest_import_error(output: str, root: Path) -> str | None:
    """The conftest pytest could not import, and why, from pytest's own report of it;
    None for any other failure."""
    lines = output.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("ImportError while loading conftest '"):
            path = Path(line.split("'", 2)[1])
            shown = path.relative_to(root) if path.is_relative_to(root) else path
            errors = [text[1:].strip() for text in lines[number + 1 :] if text.startswith("E ")]
            why = errors[-1] if errors else "see its traceback under pytest"
            return f"cannot import {shown}: {why}; install what the tests need here"
    return None


class BaselineRunner:
    def __init__(
        self,
        root: Path,
        workdir: Path,
        *,
        test_paths: list[str],
        source_dirs: list[str],
        source_roots: list[str],
        allow_write: list[str],
        test_timeout: float,
        memory_limit_mb: int,
        measure: bool = True,
        shuffle_seed: int | None = None,
        isolation: Isolation = NO_ISOLATION,
        omit: tuple[str, ...] = (),
        deadline: float | None = None,
        pytest_options: PytestOptions = AUDIT_DEFAULTS,
        keep: list[str] | None = None,
        uncollected: list[str] | None = None,
    ) -> None:
        """`keep`: tests whose results an earlier baseline holds; they are not run, and
        the files of `uncollected` (those all of whose tests are kept) not collected."""
        self.root = root
        self.test_paths = test_paths
        self.source_dirs = source_dirs
        self.source_roots = source_roots
        self.allow_write = allow_write
        self.test_timeout = test_timeout
        self.memory_limit_mb = memory_limit_mb
        self.workdir = workdir
        self.measure = measure
        self.shuffle_seed = shuffle_seed
        self.isolation = isolation
        self.omit = omit
        self.deadline = deadline
        """`time.monotonic()` (the audit's time budget) past which a suite that crashed
        or hung is not run again from its start: the first run and resumes after a
        timeout always go on (the report needs the baseline; a resume makes progress)."""
        self.pytest_options = pytest_options
        self.keep = keep or []
        self.uncollected = uncollected or []
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        """Stop a run going on in another thread: its child is killed, `run` raises."""
        self._cancelled.set()

    def _environment(self, private_tmp: Path) -> dict[str, str]:
        wanted = uses_hypothesis(self.root, self.test_paths)
        storage = storage_folder(private_tmp, self.isolation, wanted)
        env = child_environment(self.source_roots, private_tmp, storage)
        env["COVERAGE_CORE"] = "ctrace"
        env.pop("COVERAGE_PROCESS_START", None)
        env.update(self.pytest_options.environment)
        return env

    def _spec(self, attempt_dir: Path, deselect: list[str]) -> ChildSpec:
        private_tmp = attempt_dir / "tmp"
        private_tmp.mkdir(parents=True, exist_ok=True)
        allowed = [str(attempt_dir), *self.allow_write]
        return ChildSpec(
            root=str(self.root),
            test_paths=self.test_paths,
            source_dirs=self.source_dirs,
            omit=list(self.omit),
            data_file=str(attempt_dir / "coverage.sqlite"),
            events_file=str(attempt_dir / "events.jsonl"),
            basetemp=str(private_tmp / "basetemp"),
            allowed_roots=allowed,
            deselect=deselect,
            test_timeout=self.test_timeout,
            memory_limit_mb=self.memory_limit_mb,
            measure=self.measure,
            shuffle_seed=self.shuffle_seed,
            guard=self.isolation.level != "none",
            pytest_args=list(self.pytest_options.args),
            rewritten=str(rewritten.folder(self.root)),
            uncollected=self.uncollected,
            scratch=str(attempt_dir),
        )

    def _run_once(
        self, spec: ChildSpec, attempt_dir: Path, progress: Progress, done_before: int = 0
    ) -> _Attempt:
        """One child; `done_before` tests finished in the children it resumes from."""
        spec_path = attempt_dir / "spec.json"
        wire.write(spec_path, spec)
        log = (attempt_dir / "output.log").open("wb")
        attempt = _Attempt()
        process = subprocess.Popen(
            self.isolation.wrap(
                [sys.executable, "-m", "auditor.baseline.child", str(spec_path)],
                home=str(attempt_dir),
                overlaid=self.allow_write,
            ),
            cwd=self.root,
            env=self._environment(Path(spec.basetemp).parent),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        events_path = Path(spec.events_file)
        offset = 0
        last_activity = time.monotonic()
        finished = collected = 0
        total: int | None = None
        try:
            while True:
                returncode = process.poll()
                new, offset = _read_events(events_path, offset)
                if new:
                    last_activity = time.monotonic()
                for event in new:
                    attempt.events.append(event)
                    if isinstance(event, protocol.Collected):
                        total = collected = event.count
                    elif isinstance(event, protocol.Result):
                        finished += 1
                if new:
                    progress(done_before + finished, done_before + total if collected else None)
                if returncode is not None:
                    attempt.returncode = returncode
                    break
                if self._cancelled.is_set():
                    self.isolation.kill(process)
                    process.wait()
                    raise IncompleteRunError("baseline", "cancelled")
                silent_for = time.monotonic() - last_activity
                if silent_for > 3 * self.test_timeout + _HANG_GRACE_SECONDS:
                    attempt.hung = True
                    self.isolation.kill(process)
                    attempt.returncode = process.wait()
                    break
                time.sleep(0.05)
        except KeyboardInterrupt:
            self.isolation.kill(process)
            process.wait()
            raise IncompleteRunError("baseline", "interrupted; no report written") from None
        finally:
            log.close()
        return attempt

    def run(self, progress: Progress) -> ChildOutcome:
        """Run the suite to its end. A child that stops after a timed-out test is
        resumed from the next test, its results kept; one that dies or hangs inside a
        test saved nothing: the suite runs again without that test, the tests of the
        stopped children left out."""
        removed: list[protocol.Result] = []
        resumed = _Resumed()
        restart = 0
        retried: set[str] = set()
        for number in itertools.count():
            attempt_dir = self.workdir / f"attempt-{number}"
            attempt_dir.mkdir(parents=True)
            deselect = [*self.keep, *(entry.nodeid for entry in (*removed, *resumed.results))]
            spec = self._spec(attempt_dir, deselect)
            attempt = self._run_once(spec, attempt_dir, progress, len(resumed.results))
            output = (attempt_dir / "output.log").read_text(encoding="utf-8", errors="replace")
            if any(isinstance(event, protocol.Resume) for event in attempt.events):
                resumed.add(attempt.events, attempt_dir / "coverage.sqlite")
                continue
            finishes = [e for e in attempt.events if isinstance(e, protocol.Finish)]
            if finishes and not attempt.hung:
                collecting = [e for e in attempt.events if isinstance(e, protocol.Collecting)]
                internal = [
                    line.removeprefix("INTERNALERROR>").strip()
                    for line in output.splitlines()
                    if line.startswith("INTERNALERROR>")
                ]
                data_file = attempt_dir / "coverage.sqlite"
                if self.measure:
                    merge_coverage(data_file, resumed.data_files)
                return ChildOutcome(
                    results=[
                        *resumed.results,
                        *(e for e in attempt.events if isinstance(e, protocol.Result)),
                    ],
                    collection_errors=[
                        e for e in attempt.events if isinstance(e, protocol.CollectError)
                    ],
                    removed=removed,
                    data_file=data_file,
                    restarts=restart + len(resumed.data_files),
                    exitstatus=finishes[0].exitstatus,
                    internal_error=internal[-1] if internal else "",
                    last_collected_file=collecting[-1].path if collecting else "",
                    observed=merge_observed([*resumed.observed, *attempt.events]),
                    memory_growth_mb=_memory_growth_mb(attempt.events),
                    kept=self._kept_in(attempt.events),
                    patterns=merged(*(finish.patterns for finish in finishes)),
                )
            if not attempt.hung and _FATAL_ERROR not in output:
                # No crash Python saw: killed from outside (SIGKILL, the OOM killer) or
                # an exit the test made. Once more as it was before the test it was in
                # counts as the culprit: an innocent test's kills are not lost.
                where = (_running(attempt) or ["collection"])[-1]
                if where not in retried:
                    retried.add(where)
                    continue
            removed.append(self._culprit(attempt, output))
            restart += 1
            if restart > MAX_RESTARTS:
                raise SuiteUnusableError(
                    f"the test process died or hung {MAX_RESTARTS + 1} times; giving up"
                )
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise IncompleteRunError(
                    "baseline",
                    f"the time budget ran out; the suite would run again without "
                    f"{len(removed)} test(s) that crashed or hung ({removed[-1].nodeid})",
                )
        raise AssertionError("unreachable")

    def _kept_in(self, events: list[protocol.Event]) -> list[str]:
        keep = set(self.keep)
        return sorted(
            nodeid
            for event in events
            if isinstance(event, protocol.Deselected)
            for nodeid in event.nodeids
            if nodeid in keep
        )

    def _culprit(self, attempt: _Attempt, output: str) -> protocol.Result:
        """The test that was running when the child died or hung, as a result entry."""
        results = [e for e in attempt.events if isinstance(e, protocol.Result)]
        running = _running(attempt)
        if not running and results and results[-1].outcome == "timeout":
            # It hung while stopping after a timed-out test (what that test left running
            # held the interpreter): nothing was saved; run again without that test.
            return results[-1]
        if not running:
            collecting = [e.path for e in attempt.events if isinstance(e, protocol.Collecting)]
            where = f" while collecting {collecting[-1]}" if collecting else " before any test"
            reason = "hung" if attempt.hung else _describe_exit(attempt.returncode or 0)
            refused = pytest_usage_error(output) or conftest_import_error(output, self.root)
            if refused is not None:
                raise SuiteUnusableError(refused)
            last_line = next((line for line in reversed(output.splitlines()) if line.strip()), "")
            detail = f" ({last_line.strip()})" if last_line else ""
            raise SuiteUnusableError(f"{reason}{where}{detail}")
        nodeid = running[-1]
        if attempt.hung:
            outcome = "timeout"
            message = (
                f"hung beyond {3 * self.test_timeout + _HANG_GRACE_SECONDS:g}s "
                "and was killed (the per-test timeout could not interrupt it)"
            )
        else:
            outcome = "crashed"
            message = _describe_exit(attempt.returncode or 0)
        return protocol.Result(
            nodeid=nodeid, file="", outcome=outcome, duration=0.0, message=message
        )


def checked_run(runner: BaselineRunner) -> ChildOutcome | None:
    """A run that checks the measured one (a rerun in another order, tests measured
    again), without progress; None where it failed: the measured run stands."""
    try:
        return runner.run(lambda *_: None)
    except AuditError:
        return None
