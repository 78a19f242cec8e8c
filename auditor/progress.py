"""How the pipeline tells the user what it is doing, without knowing about terminals."""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class StageProgress(Protocol):
    def start(self, stage: str, total: int | None = None) -> None: ...

    def update(self, done: int, total: int | None = None, summary: str = "") -> None: ...

    def finish(self, stage: str, summary: str = "") -> None: ...


class SilentProgress:
    def start(self, stage: str, total: int | None = None) -> None:
        pass

    def update(self, done: int, total: int | None = None, summary: str = "") -> None:
        pass

    def finish(self, stage: str, summary: str = "") -> None:
        pass


class RichProgress:
    """One progress bar per stage, on stderr so stdout stays clean for pipes."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[summary]}"),
            console=console,
            transient=False,
        )
        self._task = None

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def start(self, stage: str, total: int | None = None) -> None:
        self._task = self._progress.add_task(stage, total=total, summary="")

    def update(self, done: int, total: int | None = None, summary: str = "") -> None:
        if self._task is not None:
            fields = {"summary": summary} if summary else {}
            self._progress.update(self._task, completed=done, total=total, **fields)

    def finish(self, stage: str, summary: str = "") -> None:
        if self._task is not None:
            task = self._progress.tasks[-1]
            total = task.total if task.total is not None else max(task.completed, 1)
            self._progress.update(self._task, total=total, completed=total, summary=summary)
        self._task = None
