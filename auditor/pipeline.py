"""The pipeline: discover -> baseline -> smells -> gate, each stage adding to the report.

This is the facade the CLI (and anyone embedding audit) calls.
"""

from __future__ import annotations

import platform
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.baseline.coverage_data import relative
from auditor.baseline.stage import run_baseline
from auditor.config import AuditConfig, load_config
from auditor.discovery import Project, discover, find_rootdir
from auditor.engine.stage import run_mutation
from auditor.errors import DiscoveryError
from auditor.gate import evaluate
from auditor.progress import SilentProgress, StageProgress
from auditor.report import ProjectInfo, Report, ToolInfo
from auditor.smells.analyzer import analyze


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
        return sorted(relative(str(path), project.root) for path in paths)

    return ProjectInfo(
        root=str(project.root),
        inifile=relative(str(project.inifile), project.root) if project.inifile else None,
        ini_options=dict(sorted(project.ini_options.items())),
        test_paths=rel(project.test_paths),
        test_files=rel(project.test_files),
        conftest_files=rel(project.conftest_files),
        source_paths=rel(project.source_paths),
        source_files=rel(project.source_files),
    )


def resolve_config(
    test_paths: list[str], overrides: dict[str, Any], cwd: Path, config_file: Path | None
) -> tuple[AuditConfig, Path]:
    """Find the project root from the test paths and load its `[tool.audit]`."""
    anchor = (cwd / test_paths[0]).resolve() if test_paths else cwd.resolve()
    if not anchor.exists():
        raise DiscoveryError(f"test path '{test_paths[0]}' does not exist")
    root, _, _ = find_rootdir(anchor if anchor.is_dir() else anchor.parent)
    pyproject = config_file or (root / "pyproject.toml")
    return load_config(pyproject if pyproject.is_file() else None, overrides), root


def run_audit(
    test_paths: list[str],
    config: AuditConfig,
    cwd: Path,
    progress: StageProgress | None = None,
) -> Report:
    progress = progress or SilentProgress()
    timings: dict[str, float] = {}

    started = time.perf_counter()
    progress.start("discover")
    project = discover(test_paths or config.tests, config.src, cwd)
    progress.finish(
        "discover",
        f"{len(project.test_files)} test files, {len(project.source_files)} source files",
    )
    timings["discover"] = round(time.perf_counter() - started, 3)

    started = time.perf_counter()
    progress.start("baseline")
    baseline, coverage = run_baseline(project, config, progress.update)
    progress.finish("baseline", f"{baseline.passed} passed, {baseline.excluded} excluded")
    timings["baseline"] = round(time.perf_counter() - started, 3)

    started = time.perf_counter()
    progress.start("smells", total=len(project.test_files))
    smells = analyze(
        project.test_files,
        project.root,
        set(project.source_package_names),
        config.assertion_helpers,
        config.disable_smells,
    )
    progress.finish("smells", f"{len(smells.findings)} findings")
    timings["smells"] = round(time.perf_counter() - started, 3)

    mutation = None
    if config.mutation:
        started = time.perf_counter()
        progress.start("mutate")
        mutation = run_mutation(project, config, baseline, progress.update)
        score = mutation.scores.score
        progress.finish(
            "mutate",
            f"{len(mutation.mutants)} mutants, score {score if score is not None else '-'}%",
        )
        timings["mutate"] = round(time.perf_counter() - started, 3)

    started = time.perf_counter()
    progress.start("gate")
    gate = evaluate(config.gate, baseline, coverage, smells, mutation)
    progress.finish("gate", gate.verdict.upper())
    timings["gate"] = round(time.perf_counter() - started, 3)

    return Report(
        status="complete",
        tool=tool_info(),
        project=_project_info(project),
        config=config.model_dump(mode="json"),
        timings=timings,
        baseline=baseline,
        coverage=coverage,
        smells=smells,
        mutation=mutation,
        gate=gate,
    )
