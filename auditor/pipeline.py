"""The facade the CLI (and anyone embedding audit) calls: find the project and its
config, then run the stages of `auditor.stages` in order."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from auditor.config import AuditConfig, load_config, read_pyproject_section
from auditor.context import RunContext
from auditor.discovery import mutmut_config
from auditor.discovery.audit_folder import audit_folder
from auditor.discovery.project import Project, discover, find_rootdir, test_path
from auditor.draft import Draft, assemble
from auditor.errors import ConfigError
from auditor.mutation.cache import store_condition
from auditor.mutation.distributed import check_scheduler
from auditor.mutation.selection import check_ref
from auditor.mutmut_import import result_files
from auditor.progress import SilentProgress, StageProgress
from auditor.report import Report, read_report
from auditor.stages import STAGES, MutationWorkers
from mutators.registry import UnknownFamily, operators


def resolve_config(
    test_paths: list[str], overrides: dict[str, Any], cwd: Path, config_file: Path | None
) -> tuple[AuditConfig, Path, str]:
    """Find the project root from the test paths and load its `[tool.audit]`; without
    one, mutmut's settings (`auditor.discovery.mutmut_config`). Returns the config, the root, and
    where mutmut's settings were read ('' when they were not)."""
    anchor = test_path(cwd, test_paths[0]) if test_paths else cwd.resolve()
    root, _, _ = find_rootdir(anchor if anchor.is_dir() else anchor.parent, cwd.resolve())
    pyproject = config_file or (root / "pyproject.toml")
    has_pyproject = pyproject.is_file()
    origin = ""
    if config_file is None and not (has_pyproject and read_pyproject_section(pyproject)):
        mutmut = mutmut_config.read(root)
        if mutmut is not None and mutmut.values:
            overrides = {**mutmut.values, **overrides}
            origin = mutmut.origin
    return load_config(pyproject if has_pyproject else None, overrides), root, origin


class _StageClock:
    """Starts and finishes each stage's progress bar and records how long it took."""

    def __init__(self, progress: StageProgress) -> None:
        self.progress = progress
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str, total: int | None = None) -> Iterator[Callable[..., None]]:
        """Yields `done(summary, stopped=False)`."""
        started = time.perf_counter()
        self.progress.start(name, total)
        ended: list[tuple[str, bool]] = []

        def done(summary: str, stopped: bool = False) -> None:
            ended.append((summary, stopped))

        yield done
        summary, stopped = ended[-1] if ended else ("", False)
        self.progress.finish(name, summary, stopped)
        self.timings[name] = round(time.perf_counter() - started, 3)


def _check_executor(config: AuditConfig) -> None:
    """A Dask executor needs a scheduler that answers, checked before anything runs."""
    if config.executor == "dask" and config.mutation:
        if not config.scheduler:
            raise ConfigError("executor 'dask' needs a scheduler address (--scheduler)")
        check_scheduler(config.scheduler)


def _check_before_any_test_runs(project: Project, config: AuditConfig) -> Report | None:
    """Arguments that later stages read, checked while a mistake costs nothing; the
    report `--baseline` names, read now for the gate."""
    if config.mutation:
        try:
            operators(config.mutators, config.disable_mutators)
        except UnknownFamily as exc:
            raise ConfigError(str(exc)) from None
        if config.diff:
            check_ref(project.root, config.diff)
        if config.mutation_from == "mutmut":
            result_files(project.root)
    if not config.gate.baseline_report:
        return None
    # A flag arrives absolute; a config value is relative to the project root.
    return read_report(project.root / config.gate.baseline_report, "baseline report")


def run_audit(
    test_paths: list[str],
    config: AuditConfig,
    cwd: Path,
    progress: StageProgress | None = None,
) -> Report:
    """Discover the project, then run every stage of `STAGES` that the config and the
    report so far call for, each adding its section; the finished draft is the report."""
    clock = _StageClock(progress or SilentProgress())
    # The time budget counts from here: the baseline uses it too, and every stage after
    # it (mutation, probes, escalation) stops when it is used up.
    deadline = time.monotonic() + config.time_budget if config.time_budget else None
    _check_executor(config)
    with clock.stage("discover") as done:
        project = discover(test_paths or config.tests, config.src, cwd)
        done(f"{len(project.test_files)} test files, {len(project.source_files)} source files")
    with contextlib.suppress(OSError):  # a read-only project: the cache lives in memory
        audit_folder(project.root)
    previous = _check_before_any_test_runs(project, config)
    store = store_condition(project.root)
    run = RunContext.start(project, config, clock.progress.update, deadline, store, previous)
    runs_mutants = config.mutation and config.mutation_from != "mutmut"
    draft = Draft(workers=MutationWorkers(run) if runs_mutants else None)
    try:
        for stage in STAGES:
            if stage.runs(run, draft):
                with clock.stage(stage.name, stage.total(run)) as done:
                    draft = stage.step(run, draft)
                    done(stage.line(draft), stage.stopped(draft))
    finally:
        if draft.workers is not None:
            draft.workers.close()
        if draft.early_probes is not None:  # a stage between them failed
            draft.early_probes[1].close()
    return assemble(run, draft, clock.timings)
