"""The pipeline: discover -> baseline -> smells -> gate, each stage adding to the report.

This is the facade the CLI (and anyone embedding audit) calls.
"""

from __future__ import annotations

import contextlib
import platform
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from auditor import __version__, mutmut_config
from auditor.audit_folder import audit_folder
from auditor.baseline.stage import run_baseline
from auditor.config import AuditConfig, load_config, read_pyproject_section
from auditor.context import RunContext
from auditor.discovery import Project, discover, find_rootdir
from auditor.engine.distributed import check_scheduler
from auditor.engine.early_sites import EarlySites
from auditor.engine.protocol import Job
from auditor.engine.selection import check_ref
from auditor.engine.stage import run_mutation
from auditor.engine.workers import mutation_pool
from auditor.errors import ConfigError, DiscoveryError
from auditor.gate import evaluate, require_escalation
from auditor.memory import release_freed_memory
from auditor.mutmut_import import import_mutmut, result_files
from auditor.probes.stage import run_probes
from auditor.progress import SilentProgress, StageProgress
from auditor.provenance import provenance
from auditor.report import LeftOut, ProjectInfo, Report, SandboxInfo, ToolInfo, read_report
from auditor.smells.analyzer import analyze
from auditor.smells.evidence import with_mutation_evidence
from mutators.registry import UnknownFamily, operators


def _version_of(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def tool_info() -> ToolInfo:
    return ToolInfo(
        audit=__version__,
        python=platform.python_version(),
        pytest=_version_of("pytest"),
        coverage=_version_of("coverage"),
        libcst=_version_of("libcst"),
        hypothesis=_version_of("hypothesis"),
    )


def _project_info(project: Project) -> ProjectInfo:
    def rel(paths: tuple[Path, ...]) -> list[str]:
        return sorted(project.relative(path) for path in paths)

    return ProjectInfo(
        root=str(project.root),
        inifile=project.relative(project.inifile) if project.inifile else None,
        ini_options=dict(sorted(project.ini_options.items())),
        test_paths=rel(project.test_paths),
        test_files=rel(project.test_files),
        conftest_files=rel(project.conftest_files),
        source_paths=rel(project.source_paths),
        source_files=rel(project.source_files),
        scope_reason=project.scope_reason,
        left_out=[
            LeftOut(path=project.relative(path), reason=reason) for path, reason in project.left_out
        ],
    )


def resolve_config(
    test_paths: list[str], overrides: dict[str, Any], cwd: Path, config_file: Path | None
) -> tuple[AuditConfig, Path, str]:
    """Find the project root from the test paths and load its `[tool.audit]`; without
    one, mutmut's settings (`auditor.mutmut_config`). Returns the config, the root, and
    where mutmut's settings were read ('' when they were not)."""
    anchor = (cwd / test_paths[0]).resolve() if test_paths else cwd.resolve()
    if not anchor.exists():
        raise DiscoveryError(f"test path '{test_paths[0]}' does not exist")
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


def _check_before_any_test_runs(project: Project, config: AuditConfig) -> None:
    """Arguments that later stages read, checked while a mistake costs nothing."""
    if config.mutation:
        try:
            operators(config.mutators, config.disable_mutators)
        except UnknownFamily as exc:
            raise ConfigError(str(exc)) from None
        if config.diff:
            check_ref(project.root, config.diff)
        if config.mutation_from == "mutmut":
            result_files(project.root)


def run_audit(
    test_paths: list[str],
    config: AuditConfig,
    cwd: Path,
    progress: StageProgress | None = None,
) -> Report:
    progress = progress or SilentProgress()
    clock = _StageClock(progress)
    # The time budget counts from here: the baseline uses it too, and every stage after
    # it (mutation, probes, escalation) stops when it is used up.
    deadline = time.monotonic() + config.time_budget if config.time_budget else None

    if config.executor == "dask" and config.mutation:
        if not config.scheduler:
            raise ConfigError("executor 'dask' needs a scheduler address (--scheduler)")
        check_scheduler(config.scheduler)
    with clock.stage("discover") as done:
        project = discover(test_paths or config.tests, config.src, cwd)
        done(f"{len(project.test_files)} test files, {len(project.source_files)} source files")
    with contextlib.suppress(OSError):  # a read-only project: the cache lives in memory
        audit_folder(project.root)
    _check_before_any_test_runs(project, config)
    run = RunContext.start(project, config, progress.update, deadline)

    mutation = None
    survivors: Mapping[str, Job] = {}  # each survivor's job, for the witness searches
    with contextlib.ExitStack() as helpers:
        imported = config.mutation and config.mutation_from == "mutmut"
        running = config.mutation and not imported
        # The mutation sites are found during the baseline, on the core it leaves idle.
        early_sites = EarlySites.start(project, config) if running else None
        if early_sites is not None:
            helpers.callback(early_sites.stop)
        with clock.stage("baseline") as done:
            baseline, coverage = run_baseline(run)
            done(f"{baseline.passed} passed, {baseline.excluded} excluded")

        # The mutation runners collect the tests on the other cores during the smells.
        pool = None
        if running:
            pool = helpers.enter_context(mutation_pool(run, baseline))
        with clock.stage("smells", total=len(project.test_files)) as done:
            smells = analyze(
                project.test_files,
                project.root,
                set(project.source_package_names),
                config.assertion_helpers,
                config.disable_smells,
            )
            done(f"{len(smells.findings)} findings")
        release_freed_memory()  # the test modules' syntax trees

        if pool is not None or imported:
            with clock.stage("mutate") as done:
                if imported:
                    mutation = import_mutmut(project, baseline)
                else:
                    if early_sites is not None:
                        early_sites.wait()
                    mutated = run_mutation(run, baseline, pool=pool)
                    mutation, survivors = mutated.section, mutated.survivors
                smells = with_mutation_evidence(
                    smells, mutation, project.root, config.disable_smells
                )
                score = mutation.scores.score
                shown = "-" if score is None else score
                stopped = mutation.stopped_by_budget or mutation.interrupted
                done(f"{len(mutation.mutants)} mutants, score {shown}%", stopped)

    probes = None
    if config.probes:
        with clock.stage("probe") as done:
            probes = run_probes(run, baseline, mutation, survivors)
            found = sum(n for kind, n in probes.counts.items() if not kind.startswith("witness"))
            witnesses = probes.counts.get("witness found", 0)
            done(f"{found} findings, {witnesses} witnesses", probes.stopped_by_budget)

    with clock.stage("gate") as done:
        previous = None
        if config.gate.baseline_report:
            # A flag arrives absolute; a config value is relative to the project root.
            path = project.root / config.gate.baseline_report
            previous = read_report(path, "baseline report")
        tests = [project.relative(file) for file in project.test_files]
        origins = provenance(project.root, tests, config.generators, baseline, smells, mutation)
        gate = evaluate(
            config.gate, baseline, coverage, smells, mutation, previous, probes, origins
        )
        done(gate.verdict.upper())

    cut = []
    if mutation is not None and mutation.stopped_by_budget:
        cut.append("mutate")
    if probes is not None and probes.stopped_by_budget:
        cut.append("probe")
    stopped = mutation is not None and not mutation.finished(sampling=config.sample is not None)
    stopped = stopped or (probes is not None and (probes.interrupted or probes.stopped_by_budget))
    report = Report(
        status="incomplete" if stopped else "complete",
        tool=tool_info(),
        project=_project_info(project),
        config=config.model_dump(mode="json"),
        timings=clock.timings,
        sandbox=SandboxInfo(
            level=run.isolation.level,
            reason=run.isolation.reason,
            processes_bounded=run.isolation.processes_bounded,
        ),
        baseline=baseline,
        coverage=coverage,
        smells=smells,
        sources=_sources(project),
        mutation=mutation,
        probes=probes,
        provenance=origins,
        gate=gate,
        cut_by_budget=cut,
    )
    if config.escalation.enabled and mutation is not None and not stopped:
        # Imported here: the openai client takes ~0.7 s to import, paid only when used.
        from auditor.escalation.stage import TIME_BUDGET_USED_UP, run_escalation

        # The gate judges the suite as the user has it; hardened tests are a proposal.
        try:
            with clock.stage("escalate") as done:
                report.escalation = run_escalation(run, report)
                accepted = sum(module.accepted for module in report.escalation.modules)
                done(f"{accepted} tests accepted ({report.escalation.mode})")
            if report.escalation.budget_exhausted == TIME_BUDGET_USED_UP:
                report.cut_by_budget.append("escalate")
                report.status = "incomplete"
        except KeyboardInterrupt:
            # Ctrl-C while hardening: the audit itself is finished and must not be lost.
            report.status = "incomplete"
            return report
        if config.escalation.require:
            report.gate = require_escalation(report.gate, report.escalation)
        report.timings = clock.timings
    return report


def _sources(project: Project) -> dict[str, str]:
    """The code under test as it was audited; files that do not decode are left out."""
    sources = {}
    for path in project.source_files:
        try:
            sources[project.relative(path)] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return dict(sorted(sources.items()))
