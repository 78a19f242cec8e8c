"""A baseline kept between runs, and used again whole when nothing it depends on changed.

What the suite's run gives depends on the project's files (the tests and the files
beside them, the code under test, every Python file importable from the source roots,
the config files), the installed packages, the interpreter, audit's own code and the
run's settings. The kept baseline carries a manifest of all of them; a run whose
manifest is the same reuses the kept sections and starts no test process, and a run
whose manifest differs measures again and says what changed. Environment variables and
files outside the project are not in the manifest (docs/performance.md)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

import auditor
from auditor import __version__
from auditor.discovery.project import Project
from auditor.report import BaselineSection, CoverageSection

_CONFIG_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "pytest.ini")
_NAMED_CHANGES = 3
"""Changed files a reason names before it counts the rest."""


class Manifest(BaseModel):
    """What a baseline depended on, each part as a digest."""

    model_config = ConfigDict(frozen=True)

    audit: str
    python: str
    packages: str
    files: dict[str, str]
    """Each file's digest, by its path relative to the project root."""


class KeptBaseline(BaseModel):
    manifest: Manifest
    baseline: BaselineSection
    coverage: CoverageSection


class BaselineStore(Protocol):
    """Where the kept baselines live (`ResultCache`, `.audit/cache.sqlite`)."""

    def get_baseline(self, scope: str) -> str | None: ...

    def put_baseline(self, scope: str, value: str) -> None: ...


@functools.cache
def _audit_digest() -> str:
    """audit's own code: a baseline measured by other code is measured again."""
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(Path(auditor.__file__).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _packages_digest() -> str:
    """The installed distributions (their metadata folders' names carry the versions)
    and the `.pth` files (editable installs), on every folder of `sys.path`."""
    digest = hashlib.sha256()
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                digest.update(f"{entry}/{name}\n".encode())
            elif name.endswith(".pth"):
                digest.update(f"{entry}/{name}\n".encode())
                digest.update(_read(Path(entry or ".", name)))
    return digest.hexdigest()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _pruned(folder: Path) -> bool:
    return (
        folder.name.startswith(".")
        or folder.name in ("__pycache__", "node_modules")
        or (folder / "pyvenv.cfg").exists()  # a virtual environment: its packages count
    )


def _files_under(path: Path, suffix: str = "") -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    for folder, subfolders, names in os.walk(path):
        subfolders[:] = [name for name in subfolders if not _pruned(Path(folder, name))]
        for name in names:
            if name.endswith(suffix) and not name.endswith(".pyc"):
                yield Path(folder, name)


def depended_on(project: Project) -> list[Path]:
    """The project's files a run of its suite may read: everything under the test paths
    and the code under test, every Python file under the source roots, the conftests and
    the config files."""
    found: set[Path] = set(project.conftest_files)
    for path in (*project.test_paths, *project.source_paths):
        found.update(_files_under(path))
    for source_root in project.source_roots:
        found.update(_files_under(source_root, ".py"))
    found.update(project.root / name for name in _CONFIG_FILES)
    found.update(path for path in (project.pyproject, project.inifile) if path is not None)
    return sorted(path for path in found if path.is_file())


def manifest(project: Project) -> Manifest:
    files = {
        project.relative(path): hashlib.sha256(_read(path)).hexdigest()
        for path in depended_on(project)
    }
    return Manifest(
        audit=_audit_digest(),
        python=f"{sys.version} {sys.executable}",
        packages=_packages_digest(),
        files=files,
    )


def scope(settings: dict[str, Any]) -> str:
    """One kept baseline per set of settings (the test paths, the limits, the sandbox):
    a run with other settings keeps its own."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


def kept(store: BaselineStore | None, scope: str) -> KeptBaseline | None:
    value = None if store is None else store.get_baseline(scope)
    if value is None:
        return None
    try:
        return KeptBaseline.model_validate_json(value)
    except ValidationError:
        return None  # written by another version of the report model: measured again


def keep(store: BaselineStore | None, scope: str, baseline: KeptBaseline) -> None:
    if store is not None:
        store.put_baseline(scope, baseline.model_dump_json())


def changes(before: Manifest, now: Manifest) -> list[str]:
    """What differs between two manifests, in words; empty when nothing does."""
    found = []
    if before.audit != now.audit:
        found.append("audit's code changed")
    if before.python != now.python:
        found.append("the Python interpreter changed")
    if before.packages != now.packages:
        found.append("the installed packages changed")
    files = _changed_files(before.files, now.files)
    if files:
        found.append(_files_reason(files))
    return found


def _changed_files(before: dict[str, str], now: dict[str, str]) -> list[str]:
    return sorted(path for path in before.keys() | now.keys() if before.get(path) != now.get(path))


def _files_reason(paths: Iterable[str]) -> str:
    paths = list(paths)
    named = ", ".join(paths[:_NAMED_CHANGES])
    more = f" and {len(paths) - _NAMED_CHANGES} more" if len(paths) > _NAMED_CHANGES else ""
    noun = "file" if len(paths) == 1 else "files"
    return f"{len(paths)} {noun} changed ({named}{more})"
