"""The report while it is being built: each stage returns the draft with its section
added, and the finished draft becomes the `Report` every output is rendered from."""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from auditor import __version__
from auditor.context import RunContext
from auditor.discovery.project import Project
from auditor.mutation.protocol import Job
from auditor.report import (
    TIME_BUDGET_USED_UP,
    BaselineSection,
    CoverageSection,
    EscalationSection,
    GateSection,
    LeftOut,
    MutationSection,
    ProbesSection,
    ProjectInfo,
    ProvenanceSection,
    Report,
    SandboxInfo,
    SmellsSection,
    ToolInfo,
)

if TYPE_CHECKING:
    from auditor.probes.stage import EarlyProbes
    from auditor.stages import MutationWorkers


@dataclass(frozen=True)
class Draft:
    """The report's sections so far; the survivors' jobs (the probes run them again) and
    the workers started early for the mutation and probe stages travel with them."""

    baseline: BaselineSection | None = None
    coverage: CoverageSection | None = None
    smells: SmellsSection | None = None
    mutation: MutationSection | None = None
    survivors: Mapping[str, Job] = field(default_factory=dict)
    probes: ProbesSection | None = None
    provenance: ProvenanceSection | None = None
    gate: GateSection | None = None
    escalation: EscalationSection | None = None
    interrupted: bool = False
    """Ctrl-C in a stage that keeps what came before (escalation)."""
    workers: MutationWorkers | None = None
    early_probes: EarlyProbes | None = None
    """The probe process started after a change's baseline, for the probe stage to use."""

    def add(self, **sections: object) -> Draft:
        return dataclasses.replace(self, **sections)

    def cut_by_budget(self) -> list[str]:
        """The stages the time budget stopped, in run order."""
        cut = [
            name
            for name, section in (("mutate", self.mutation), ("probe", self.probes))
            if section is not None and section.stopped_by_budget
        ]
        if self.escalation is not None and self.escalation.budget_exhausted == TIME_BUDGET_USED_UP:
            cut.append("escalate")
        return cut

    def stopped(self, sampling: bool) -> bool:
        """Interrupted, or cut by the time budget before a stage had its answer."""
        mutation, probes = self.mutation, self.probes
        if self.interrupted or "escalate" in self.cut_by_budget():
            return True
        if mutation is not None and not mutation.finished(sampling=sampling):
            return True
        return probes is not None and (probes.interrupted or probes.stopped_by_budget)


def assemble(run: RunContext, draft: Draft, timings: dict[str, float]) -> Report:
    """The report of a run whose stages up to the gate have added their sections."""
    assert draft.baseline and draft.coverage and draft.smells and draft.gate
    isolation = run.isolation
    return Report(
        status="incomplete" if draft.stopped(run.config.sample is not None) else "complete",
        tool=tool_info(),
        project=project_info(run.project),
        config=run.config.model_dump(mode="json"),
        timings=dict(timings),
        sandbox=SandboxInfo(
            level=isolation.level,
            reason=isolation.reason,
            processes_bounded=isolation.processes_bounded,
        ),
        baseline=draft.baseline,
        coverage=draft.coverage,
        smells=draft.smells,
        sources=sources(run.project),
        mutation=draft.mutation,
        probes=draft.probes,
        escalation=draft.escalation,
        provenance=draft.provenance,
        gate=draft.gate,
        cut_by_budget=draft.cut_by_budget(),
        store=run.store,
    )


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


def project_info(project: Project) -> ProjectInfo:
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
        set_aside=list(project.pytest_options.set_aside),
    )


def sources(project: Project) -> dict[str, str]:
    """The code under test as it was audited; files that do not decode are left out."""
    found = {}
    for path in project.source_files:
        try:
            found[project.relative(path)] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return dict(sorted(found.items()))
