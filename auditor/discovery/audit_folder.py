"""`.audit/` in the project: the results cache, the escalation log, generated tests."""

from __future__ import annotations

from pathlib import Path

_IGNORE_ALL = "# made by audit: nothing in here belongs in version control\n*\n"


def audit_folder(root: Path, *parts: str) -> Path:
    """`root/.audit/<parts>`, made on first use. `.audit/` ignores itself (as pytest's
    `.pytest_cache` does), so git status and `--diff` never see audit's own files.
    Raises OSError where the project cannot be written."""
    home = root / ".audit"
    folder = home.joinpath(*parts)
    folder.mkdir(parents=True, exist_ok=True)
    ignore = home / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_IGNORE_ALL, encoding="utf-8")
    return folder
