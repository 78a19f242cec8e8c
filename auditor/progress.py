"""How the pipeline tells the user what it is doing, without knowing about terminals."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TextIO

from rich import progress as rich_progress
from rich.console import Console


class Progress(Protocol):
    """How a stage reports its work as it goes: `progress(done, total)`, with a short
    summary where it has one. `StageProgress.update` is one."""

    def __call__(self, done: int, total: int | None = None, summary: str = "") -> None: ...


class StageProgress(Protocol):
    def start(self, stage: str, total: int | None = None) -> None: ...

    def update(self, done: int, total: int | None = None, summary: str = "") -> None: ...

    def finish(self, stage: str, summary: str = "", stopped: bool = False) -> None:
        """`stopped`: the stage ended before its work did (time budget, Ctrl-C)."""


class SilentProgress:
    def start(self, stage: str, total: int | None = None) -> None:
        pass

    def update(self, done: int, total: int | None = None, summary: str = "") -> None:
        pass

    def finish(self, stage: str, summary: str = "", stopped: bool = False) -> None:
        pass


class RichProgress:
    """One progress bar per stage, on stderr so stdout stays clean for pipes."""

    def __init__(self, console: Console) -> None:
        self._progress = rich_progress.Progress(
            rich_progress.TextColumn("[bold]{task.description:<10}"),
            rich_progress.BarColumn(),
            rich_progress.MofNCompleteColumn(),
            rich_progress.TimeElapsedColumn(),
            rich_progress.TimeRemainingColumn(),
            rich_progress.TextColumn("{task.fields[summary]}"),
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

    def finish(self, stage: str, summary: str = "", stopped: bool = False) -> None:
        if self._task is not None:
            task = self._progress.tasks[-1]
            if stopped:  # the bar shows how far it got
                self._progress.update(self._task, summary=summary)
            else:
                total = task.total if task.total is not None else max(task.completed, 1)
                self._progress.update(self._task, total=total, completed=total, summary=summary)
        self._task = None


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class PlainProgress:
    """Plain lines for a log that is not a terminal (CI): a line when a stage starts and
    when it ends, and about every `interval` seconds in between, what is done, the rate
    and the time left. No control characters."""

    def __init__(
        self,
        stream: TextIO,
        interval: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._interval = interval
        self._clock = clock
        self._stage = ""
        self._started = 0.0
        self._last_line = 0.0
        self._first: tuple[float, int] | None = None
        """When the stage's first count came in, and that count (cached results)."""
        self._done = 0
        self._total: int | None = None

    def _print(self, text: str) -> None:
        self._stream.write(f"audit: {text}\n")
        self._stream.flush()

    def start(self, stage: str, total: int | None = None) -> None:
        self._stage, self._total, self._done, self._first = stage, total, 0, None
        self._started = self._last_line = self._clock()
        self._print(f"{stage} started")

    def update(self, done: int, total: int | None = None, summary: str = "") -> None:
        now = self._clock()
        if self._first is None:
            self._first = (now, done)
        self._done, self._total = done, total if total is not None else self._total
        if now - self._last_line < self._interval:
            return
        self._last_line = now
        parts = [f"{self._stage}: {done}" + (f"/{self._total}" if self._total else "")]
        since, first_done = self._first
        if done > first_done and now > since:
            rate = (done - first_done) / (now - since)
            parts.append(f"{rate:.1f}/s")
            if self._total:
                parts.append(f"about {_duration(max(0, self._total - done) / rate)} left")
        if summary:
            parts.append(summary)
        self._print(", ".join(parts))

    def finish(self, stage: str, summary: str = "", stopped: bool = False) -> None:
        took = _duration(self._clock() - self._started)
        if stopped:
            done = f"{self._done}/{self._total}" if self._total else str(self._done)
            ended = f"stopped after {took} at {done}"
        else:
            ended = f"finished in {took}"
        self._print(f"{stage} {ended}" + (f": {summary}" if summary else ""))
