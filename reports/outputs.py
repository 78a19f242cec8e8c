"""Write the configured outputs of a report: each renderer is a pure function of it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from auditor.agent import feedback
from auditor.errors import ReportError
from auditor.report import Report
from reports import badge, html, junit, markdown, pr_comment, sarif, sonarqube, stryker

FORMATS: dict[str, Callable[[Report, Report | None], str]] = {
    "html": html.render,
    "markdown": markdown.render,
    "sarif": sarif.render,
    "stryker": stryker.render,
    "junit": junit.render,
    "feedback": feedback.render_report,
    "pr_comment": pr_comment.render,
    "badge": badge.render,
    "sonarqube": sonarqube.render,
}
"""Format name -> renderer(report, previous report or None)."""


def check_writable(path: Path) -> None:
    """Fail before the audit, not after it, when `path` cannot be written."""
    if path.is_dir():
        raise ReportError(f"cannot write {path}: it is a folder")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ReportError(f"cannot write {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK):
        raise ReportError(f"cannot write {path}: {folder} is not writable")


def write_outputs(
    report: Report, targets: dict[str, Path], previous: Report | None = None
) -> list[Path]:
    """Render every requested format; each file is written whole or not at all."""
    written = []
    for name, path in sorted(targets.items()):
        text = FORMATS[name](report, previous)
        partial = path.with_name(path.name + ".partial")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(text, encoding="utf-8")
            partial.replace(path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None
        written.append(path)
    return written
