"""What the stages of one audit share, built once by the pipeline."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from auditor.config import AuditConfig
from auditor.containment.isolation import Isolation, choose
from auditor.discovery.project import Project
from auditor.progress import Progress
from auditor.report import Report


def _no_progress(done: int, total: int | None = None, summary: str = "") -> None:
    return None


@dataclass(frozen=True)
class RunContext:
    """The project, the effective config, the containment chosen for the run (once: the
    OS sandbox's availability is probed, and every child must be contained alike), how a
    stage reports progress, and when the time budget runs out."""

    project: Project
    config: AuditConfig
    isolation: Isolation
    progress: Progress = _no_progress
    deadline: float | None = None
    """`time.monotonic()` past which a stage stops; None without a time budget."""
    store: str = ""
    """What was wrong with `.audit/cache.sqlite` at the start (`Report.store`)."""
    cache_read_only: bool = False
    """Another process held the cache's write lock at the start: the stages read it."""
    previous: Report | None = None
    """The report `--baseline` names, read before any test ran; the gate compares."""

    @classmethod
    def start(
        cls,
        project: Project,
        config: AuditConfig,
        progress: Progress = _no_progress,
        deadline: float | None = None,
        store: tuple[str, bool] = ("", False),
        previous: Report | None = None,
    ) -> RunContext:
        isolation = choose(config.sandbox)
        return cls(project, config, isolation, progress, deadline, *store, previous)

    def on(self, project: Project | None = None, config: AuditConfig | None = None) -> RunContext:
        """The same run on another project (a copy) or with another config."""
        return dataclasses.replace(
            self, project=project or self.project, config=config or self.config
        )
