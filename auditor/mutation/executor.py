"""Run planned mutants on a pool of runner processes and stream results back.

Each runner collects the tests once and forks a child per mutant. The executor keeps
every runner supplied with its next job while it runs one, reads results as they come,
and restarts a runner that dies: the job it ran goes to the runner replacing it, once
(a second death is that mutant's RuntimeError verdict), and the job waiting behind it
to whichever runner is free. Runners beyond the first start only when the work left
would outlast a runner's start-up."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import selectors
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from auditor.baseline.child import SUBPROCESS_SITE
from auditor.containment import rewritten, wire
from auditor.containment.hypothesis_storage import storage_folder, uses_hypothesis
from auditor.containment.isolation import NO_ISOLATION, Isolation
from auditor.containment.sandbox import child_environment
from auditor.discovery.pytest_options import AUDIT_DEFAULTS, PytestOptions
from auditor.errors import IncompleteRunError, RunnerStartError
from auditor.mutation.protocol import BaselineFacts, Job, JobResult, RunnerSpec

_STARTUP_TIMEOUT = 120.0
_QUEUED_PER_RUNNER = 2
"""A runner has its next job at hand when a child ends: it forks again at once instead
of waiting for the audit process to take the result in and answer, a wait that adds up
over thousands of mutants on busy cores."""
_FORK_SECONDS = 0.02
"""What a mutant costs besides its tests' time, in the work estimate that decides whether
another runner pays: forking the child and applying the mutant."""


@dataclass
class _Runner:
    number: int
    process: subprocess.Popen[bytes]
    log: Path
    buffer: bytes = b""
    jobs: deque[Job] = field(default_factory=deque)
    """Sent and not answered yet: the running job first, then the one queued behind it."""
    ready: bool = False
    startup: float = 0.0
    """Seconds from its start to collected tests, once ready."""
    dead: bool = False
    """Its stdin is closed: it died after its last answer; its end of output follows."""
    outgoing: bytearray = field(default_factory=bytearray)
    """Jobs sent that its pipe could not take yet: written as the runner reads."""
    writing: bool = False
    """The pool waits for its pipe to take more (`outgoing` is not empty)."""
    started: float = field(default_factory=time.monotonic)
    deadline: float = 0.0
    overdue: bool = False
    """Killed by the pool for running past its job's deadline: the job is not run again."""
    measured_at: float | None = None
    """When it was sent the baseline's facts; until then it cannot get ready."""


@dataclass(frozen=True)
class PoolSettings:
    """What runners need besides the project's location; paths relative to its root, so
    the same settings serve a copy of the project on a Dask worker."""

    test_paths: list[str]
    source_files: list[str]
    source_roots: list[str]
    allow_write: list[str]
    memory_limit_mb: int
    isolation: Isolation = NO_ISOLATION
    pytest_options: PytestOptions = AUDIT_DEFAULTS
    facts: BaselineFacts | None = None
    """The baseline's; None until it is measured (`RunnerPool.measured`): runners
    started before then collect the tests and wait for them."""


@dataclass
class RunnerPool:
    """Starts `jobs` runners over a project; `run` feeds them jobs until all are done
    (call it once per batch: the runners stay up between batches); `close` stops them."""

    root: Path
    settings: PoolSettings
    workdir: Path
    jobs: int
    runners: list[_Runner] = field(default_factory=list)
    started_runners: int = 0
    run_again: set[str] = field(default_factory=set)
    """Jobs whose runner died under them once, and that went to another runner."""

    def _environment(self, private_tmp: Path) -> dict[str, str]:
        roots = [str(self.root / path) for path in self.settings.source_roots]
        isolation, test_paths = self.settings.isolation, self.settings.test_paths
        storage = storage_folder(private_tmp, isolation, uses_hypothesis(self.root, test_paths))
        # Python processes the tests start import our sitecustomize: it serves the mutant.
        env = child_environment([str(SUBPROCESS_SITE), *roots], private_tmp, storage)
        env.update(self.settings.pytest_options.environment)
        return env

    def _start(self, number: int) -> _Runner:
        self.started_runners += 1
        home = self.workdir / f"runner-{number}-{self.started_runners}"
        private_tmp = home / "tmp"
        private_tmp.mkdir(parents=True)
        spec = RunnerSpec(
            root=str(self.root),
            test_paths=self.settings.test_paths,
            source_files=[
                os.path.realpath(self.root / path) for path in self.settings.source_files
            ],
            allowed_roots=[str(home), *self.settings.allow_write],
            memory_limit_mb=self.settings.memory_limit_mb,
            guard=self.settings.isolation.level != "none",
            log_file=str(home / "output.log"),
            scratch=str(home),
            basetemp=str(private_tmp / "basetemp"),
            pytest_args=list(self.settings.pytest_options.args),
            rewritten=str(rewritten.folder(self.root)),
        )
        spec_path = home / "spec.json"
        wire.write(spec_path, spec)
        process = subprocess.Popen(
            self.settings.isolation.wrap(
                [sys.executable, "-m", "auditor.mutation.runner", str(spec_path)],
                home=str(home),
                overlaid=self.settings.allow_write,
            ),
            cwd=self.root,
            env=self._environment(private_tmp),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        # A job can be larger than a pipe (a module mutant's thousand tests): written
        # whole, it would hold the pool until this runner reads it, while the others'
        # results wait and they idle.
        os.set_blocking(process.stdin.fileno(), False)
        runner = _Runner(number, process, home / "output.log")
        if self.settings.facts is not None:
            self._send_facts(runner, self.settings.facts)
        return runner

    def measured(self, facts: BaselineFacts) -> None:
        """The baseline is measured: runners started before it get its facts, and get
        ready; those started from now on get them at once."""
        self.settings = dataclasses.replace(self.settings, facts=facts)
        for runner in self.runners:
            if runner.measured_at is None:
                self._send_facts(runner, facts)

    def _send_facts(self, runner: _Runner, facts: BaselineFacts) -> None:
        """In a file of the runner's folder, named on its stdin: the facts may be larger
        than a pipe, whose end the runner reads only once it has collected the tests."""
        path = runner.log.parent / "facts.json"
        wire.write(path, facts)
        runner.measured_at = time.monotonic()
        runner.outgoing += f"{path}\n".encode()
        self._write(runner)

    def start(self, count: int | None = None) -> None:
        """Start runners up to `count` (all `jobs` by default) without waiting for them:
        they start up while the caller goes on, e.g. planning. `run` starts one if
        nobody did, and more when the work calls for them."""
        wanted = self.jobs if count is None else min(count, self.jobs)
        while len(self.runners) < wanted:
            self.runners.append(self._start(len(self.runners)))

    def _job_seconds(self, job: Job) -> float:
        seconds = self.settings.facts.test_seconds if self.settings.facts else {}
        tests = [*job.tests, *job.subprocess_tests]
        return _FORK_SECONDS + sum(seconds.get(test, 0.0) for test in tests)

    def _add_runners(self, pending: _Lookahead, selector: selectors.BaseSelector) -> None:
        """Another runner starts when the work left, shared among the runners there are,
        would outlast a runner's start-up (the first one's, measured): a change's few
        quick mutants are done by one runner before a second has collected the tests,
        and the second would only take CPU from it."""
        startups = [runner.startup for runner in self.runners if runner.ready]
        while startups and len(self.runners) < self.jobs:
            held = sum(self._job_seconds(job) for runner in self.runners for job in runner.jobs)
            enough = startups[0] * len(self.runners) - held
            if not pending.more_work_than(enough, self._job_seconds):
                return
            runner = self._start(len(self.runners))
            self.runners.append(runner)
            selector.register(runner.process.stdout, selectors.EVENT_READ, runner)

    def run(
        self,
        jobs: Iterable[Job],
        on_result: Callable[[JobResult], None],
        stop_at: float | None = None,
    ) -> None:
        """`stop_at` (`time.monotonic()`): stop waiting then; the jobs still running get
        no result (the caller closes the pool, which kills them)."""
        pending = _Lookahead(iter(jobs))
        if not pending:
            return
        self.start(1)
        selector = selectors.DefaultSelector()
        for runner in self.runners:
            selector.register(runner.process.stdout, selectors.EVENT_READ, runner)
        try:
            while pending or any(runner.jobs for runner in self.runners):
                if stop_at is not None and time.monotonic() >= stop_at:
                    return
                for runner in self.runners:
                    while runner.ready and len(runner.jobs) < _QUEUED_PER_RUNNER and pending:
                        job = pending.popleft()
                        if not self._send(runner, job):
                            pending.put_back([job])
                            break
                self._add_runners(pending, selector)
                self._enforce_deadlines()
                self._watch_writes(selector)
                events = selector.select(timeout=1.0)
                for key, mask in events:
                    runner = key.data
                    if mask & selectors.EVENT_WRITE:
                        self._write(runner)
                        continue
                    chunk = os.read(runner.process.stdout.fileno(), 65536)
                    if not chunk:
                        selector.unregister(runner.process.stdout)
                        lost, waiting = self._replace(runner, selector)
                        pending.put_back(waiting)
                        if lost is not None:
                            on_result(lost)
                        continue
                    runner.buffer += chunk
                    while b"\n" in runner.buffer:
                        line, runner.buffer = runner.buffer.split(b"\n", 1)
                        message = json.loads(line)
                        if "ready" in message:
                            runner.ready = True
                            ready_at = message.get("at", time.monotonic())
                            waited = message.get("waited", 0.0)
                            runner.startup = ready_at - runner.started - waited
                        else:
                            runner.jobs.popleft()
                            if runner.jobs:  # the queued job starts now
                                runner.deadline = _deadline(runner.jobs[0])
                            on_result(wire.check(JobResult, message))
        except KeyboardInterrupt:
            self.close()
            raise IncompleteRunError("mutate", "interrupted; finished results are cached") from None
        finally:
            selector.close()

    def _enforce_deadlines(self) -> None:
        """A runner stuck in start-up or past a job's timeout is killed (and replaced)."""
        now = time.monotonic()
        for runner in self.runners:
            waiting_since = max(runner.started, runner.measured_at or now)
            stuck_starting = not runner.ready and now - waiting_since > _STARTUP_TIMEOUT
            stuck_in_job = bool(runner.jobs) and now > runner.deadline
            if stuck_starting or stuck_in_job:
                runner.overdue = stuck_in_job
                self.settings.isolation.kill(runner.process)

    def _send(self, runner: _Runner, job: Job) -> bool:
        """Give `job` to `runner`; False when the runner is gone (a mutant's test can kill
        it right after its last answer), and its end of output will replace it."""
        if runner.dead:
            return False
        runner.outgoing += (wire.encode(job) + "\n").encode()
        self._write(runner)
        if runner.dead:
            return False
        if not runner.jobs:
            runner.deadline = _deadline(job)
        runner.jobs.append(job)
        return True

    def _write(self, runner: _Runner) -> None:
        """As much of the jobs sent to `runner` as its pipe takes now."""
        while runner.outgoing:
            try:
                written = os.write(runner.process.stdin.fileno(), runner.outgoing)
            except BlockingIOError:
                return
            except BrokenPipeError:
                runner.dead = True
                runner.outgoing.clear()
                return
            del runner.outgoing[:written]

    def _watch_writes(self, selector: selectors.BaseSelector) -> None:
        """Wait for a runner's pipe to take more only while it holds jobs not written."""
        for runner in self.runners:
            wanted = bool(runner.outgoing)
            if wanted and not runner.writing:
                selector.register(runner.process.stdin, selectors.EVENT_WRITE, runner)
            elif runner.writing and not wanted:
                selector.unregister(runner.process.stdin)
            runner.writing = wanted

    def _replace(
        self, runner: _Runner, selector: selectors.BaseSelector
    ) -> tuple[JobResult | None, list[Job]]:
        """A runner died: start another in its place. Returns the result of the job it
        ran when that job ends here (it was killed for its deadline, or had a runner die
        under it before), and the jobs to send again: that job the first time (a runner
        killed from outside costs the job's time, not its verdict), and those that were
        waiting behind it."""
        runner.process.wait()
        if runner.writing:
            selector.unregister(runner.process.stdin)
        log_tail = _tail(runner.log)
        if not runner.ready:
            raise RunnerStartError(f"a test runner failed to start: {log_tail}")
        lost = None
        again = list(runner.jobs)
        if again and (runner.overdue or again[0].id in self.run_again):
            lost = JobResult(
                id=again.pop(0).id,
                status="RuntimeError",
                detail=f"the runner process died ({log_tail})",
            )
        elif again:
            self.run_again.add(again[0].id)
        index = self.runners.index(runner)
        replacement = self._start(runner.number)
        self.runners[index] = replacement
        selector.register(replacement.process.stdout, selectors.EVENT_READ, replacement)
        return lost, again

    def close(self) -> None:
        for runner in self.runners:
            with contextlib.suppress(BrokenPipeError, OSError):
                runner.process.stdin.close()
            self.settings.isolation.kill(runner.process)
            runner.process.wait()
        self.runners = []


class _Lookahead:
    """An iterator that can say whether it has more, and how much work, so jobs are built
    only when sent or weighed."""

    def __init__(self, items: Iterator[Job]) -> None:
        self._items = items
        self._next: deque[Job] = deque()

    def __bool__(self) -> bool:
        if not self._next:
            self._next.extend(itertools.islice(self._items, 1))
        return bool(self._next)

    def popleft(self) -> Job:
        if not self:
            raise IndexError("no more jobs")
        return self._next.popleft()

    def put_back(self, jobs: list[Job]) -> None:
        """Jobs a runner took and never started: they go out again first, in order."""
        self._next.extendleft(reversed(jobs))

    def more_work_than(self, seconds: float, weigh: Callable[[Job], float]) -> bool:
        """Whether the jobs left weigh more than `seconds`; builds only as many as that
        takes."""
        total = sum(weigh(job) for job in self._next)
        while total <= seconds:
            more = next(self._items, None)
            if more is None:
                return False
            self._next.append(more)
            total += weigh(more)
        return True


def _deadline(job: Job) -> float:
    """When a runner running `job` is stuck: its children enforce the job's timeout
    themselves, so this is a backstop for a runner that stopped answering."""
    return time.monotonic() + job.longest() + 30.0


def _tail(log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no output"
    return lines[-1][:200] if lines else "no output"
