"""The trend: each `audit` run over the whole project appends its headline figures to
`.audit/history.jsonl`, and the report carries the last points of the same test paths
for the HTML to draw.

Only complete runs over the whole scope are points (a `--diff`, shard or sampled run
measures something else), and the trend of a suite holds only its own runs (`audit
tests/unit` and `audit tests` are two trends; `audit compare` adds none). A line that
does not parse (a write cut short) is skipped.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

from pydantic import ValidationError

from auditor.report import Report, TrendPoint

HISTORY = Path(".audit") / "history.jsonl"
KEPT = 30
"""Points the report carries (the file keeps every run)."""


def with_trend(report: Report, root: Path) -> list[TrendPoint]:
    """The last points of the history, this run's appended (and written) when it is one."""
    path = root / HISTORY
    tests = report.project.test_paths
    points = [point for point in _read(path) if point.tests == tests]
    point = _point(report, root, len(points) + 1)
    if point is not None:
        points.append(point)
        with contextlib.suppress(OSError):  # `.audit/` read-only or full: the trend misses it
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as history:
                history.write(point.model_dump_json() + "\n")
    return points[-KEPT:]


def _read(path: Path) -> list[TrendPoint]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    points = []
    for line in lines:
        try:
            points.append(TrendPoint.model_validate_json(line))
        except ValidationError:
            continue
    return points


def _point(report: Report, root: Path, run: int) -> TrendPoint | None:
    mutation = report.mutation
    if report.status != "complete" or mutation is None:
        return None
    if mutation.scope.kind != "all" or mutation.estimate is not None:
        return None
    targeted = mutation.targeted.scores.score if mutation.targeted else None
    return TrendPoint(
        run=run,
        tests=report.project.test_paths,
        commit=_commit(root),
        mutation_score=mutation.scores.score,
        targeted_score=targeted,
        assertion_share=mutation.scores.assertion_share,
        line_coverage=report.coverage.totals.line_percent,
        survived=mutation.scores.counts.survived,
        smells_high=report.smells.counts.get("high", 0),
    )


def _commit(root: Path) -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
