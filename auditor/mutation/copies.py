"""The copy path: a mutated file written into a temporary copy of the project, and
tests run there in a fresh process under the guard.

Verdict fidelity checks (`--verify-sample`) use it with the whole suite; it is also the
fallback for code run by Python subprocesses that the import hook cannot reach (a
cleared environment, a process that reads the file itself)."""

from __future__ import annotations

import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from auditor.baseline.runner import BaselineRunner, ChildOutcome
from auditor.config import AuditConfig
from auditor.containment.isolation import Isolation
from auditor.context import RunContext
from auditor.discovery.project import Project
from auditor.errors import AuditError
from auditor.mutation.plan import PlannedMutant
from auditor.mutation.protocol import JobResult

IGNORED = shutil.ignore_patterns(".audit", ".git", "__pycache__", ".benchmarks", ".hypothesis")


@dataclass(frozen=True)
class CopyRun:
    red: bool
    failing: list[str]
    """Tests that passed on the original and did not pass here, in run order."""
    reason: str = ""
    by_check: bool = False
    """The first failing test failed on a check (assert, pytest.raises, pytest.fail)."""


class CopyPool:
    """Copies of the project, made once each and reused: a mutant's file is written into
    a free copy, the tests run there (outcomes only, no coverage), and the file is put
    back. Thread-safe: each of up to `size` callers holds its own copy while it runs."""

    def __init__(self, run: RunContext, size: int = 1) -> None:
        self.project = run.project
        self.config = run.config
        self.isolation = run.isolation
        self.size = max(1, size)
        self._scratch = tempfile.TemporaryDirectory(prefix="audit-copy-")
        self._free: queue.Queue[Path] = queue.Queue()
        self._made = 0
        self._lock = threading.Lock()

    def __enter__(self) -> CopyPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._scratch.cleanup()

    def _take(self) -> Path:
        with self._lock:
            if self._free.empty() and self._made < self.size:
                self._made += 1
                home = Path(self._scratch.name) / f"copy-{self._made}"
                copy = home / self.project.root.name
                shutil.copytree(self.project.root, copy, ignore=IGNORED, symlinks=True)
                return copy
        return self._free.get()

    def run(self, file: str, mutated_source: str, tests: list[str], passing: set[str]) -> CopyRun:
        """Run `tests` (paths or node ids) on a copy where `file` is mutated."""
        copy = self._take()
        target = copy / file
        original = target.read_bytes()
        try:
            target.write_text(mutated_source, encoding="utf-8")
            return self._run(copy, tests, passing)
        finally:
            target.write_bytes(original)
            self._free.put(copy)

    def _run(self, copy: Path, tests: list[str], passing: set[str]) -> CopyRun:
        try:
            outcome = outcome_on_copy(self.project, self.config, self.isolation, copy, tests)
        except AuditError as exc:
            return CopyRun(True, [], f"the suite cannot run: {exc.message}")
        if outcome.collection_errors:
            first = outcome.collection_errors[0]
            return CopyRun(True, [], f"cannot collect {first.path}: {first.message}")
        results = outcome.results + outcome.removed
        failed = [r for r in results if r.nodeid in passing and r.outcome != "passed"]
        first = failed[0].message if failed else ""
        by_check = first.startswith(("assert", "AssertionError", "Failed:"))
        return CopyRun(bool(failed), [r.nodeid for r in failed], by_check=by_check)


def outcome_on_copy(
    project: Project, config: AuditConfig, isolation: Isolation, copy: Path, tests: list[str]
) -> ChildOutcome:
    """`tests` (paths or node ids) run by pytest on a copy of `project`, in a fresh
    process under the sandbox: outcomes only, no coverage. Raises AuditError when the
    suite cannot run."""

    def inside(paths: tuple[Path, ...]) -> list[str]:
        return [str(copy / project.relative(path)) for path in paths]

    work = Path(tempfile.mkdtemp(prefix="run-", dir=copy.parent))
    runner = BaselineRunner(
        copy,
        work,
        test_paths=tests,
        source_dirs=inside(project.source_paths),
        source_roots=inside(project.source_roots),
        allow_write=[*config.allow_write, str(copy)],  # the copy is ours, not the user's
        test_timeout=config.test_timeout,
        memory_limit_mb=config.memory_limit_mb,
        measure=False,
        isolation=isolation,
        pytest_options=project.pytest_options,
    )
    try:
        return runner.run(lambda *_: None)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_in_copy(
    run: RunContext,
    file: str,
    mutated_source: str,
    tests: list[str],
    passing: set[str],
) -> CopyRun:
    """One run on a fresh copy (verify-sample: whole suites, a few mutants)."""
    with CopyPool(run) as pool:
        return pool.run(file, mutated_source, tests, passing)


def suite_paths(project: Project) -> list[str]:
    return [project.relative(path) for path in project.collect_paths]


def _copy_result(
    mutant: PlannedMutant, tests: list[str], outcome: CopyRun, seconds: float
) -> JobResult:
    return JobResult(
        id=mutant.id,
        status="Killed" if outcome.red else "Survived",
        killed_by=outcome.failing[:1],
        kill_kind=("assertion" if outcome.by_check else "error") if outcome.red else "",
        ran=len(tests),
        duration=round(seconds, 4),
        detail=outcome.reason,
        on_copy=True,
    )


def run_on_copies(
    run: RunContext,
    work: list[tuple[PlannedMutant, list[str]]],
    passing: set[str],
    jobs: int,
    on_result: Callable[[JobResult], None],
) -> None:
    """Copy-path mutants, `jobs` at a time, each copy of the project reused."""
    if not work:
        return
    deadline = run.deadline

    def run_on_a_copy(mutant: PlannedMutant, tests: list[str]) -> JobResult | None:
        if deadline is not None and time.monotonic() >= deadline:
            return None
        started = time.perf_counter()
        mutated = mutant.site.apply(mutant.source)
        outcome = copies.run(mutant.file, mutated, tests, passing)
        return _copy_result(mutant, tests, outcome, time.perf_counter() - started)

    with (
        CopyPool(run, size=jobs) as copies,
        ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="audit-copy") as threads,
    ):
        futures = [threads.submit(run_on_a_copy, mutant, tests) for mutant, tests in work]
        try:
            for future in as_completed(futures):
                result = future.result()
                if result is not None:
                    on_result(result)
        except BaseException:
            threads.shutdown(wait=False, cancel_futures=True)
            raise
