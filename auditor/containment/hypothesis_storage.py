"""The private Hypothesis storage folder of each child, with Hypothesis's Unicode table.

Every child gets a fresh storage folder (no example database carries over between runs,
so reports stay the same). Hypothesis builds its tables of Unicode categories and of the
UTF-8 codec the first time a test draws text and keeps them in that folder: well under
a second on their own, but 4 s inside a test, under coverage's tracer and the argument
recorder, enough to push a `@given` test past its timeout. The tables depend only on
Hypothesis and Python, so they are built once per machine, in a sandboxed process of
their own away from the project's files, kept in the user's cache folder
(`$XDG_CACHE_HOME/audit`, else `~/.cache/audit`), and copied into each child's folder.
Where that folder cannot be written, they are built once per audit.
"""

from __future__ import annotations

import atexit
import functools
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from auditor.containment.isolation import Isolation

_BUILD = """
from hypothesis.internal import charmap
charmap.charmap()
if hasattr(charmap, "intervals_from_codec"):  # Hypothesis 6.100+: text() draws UTF-8
    charmap.intervals_from_codec("utf-8")
"""
_BUILD_TIMEOUT_SECONDS = 60


def storage_folder(private_tmp: Path, isolation: Isolation, wanted: bool = True) -> Path:
    """The child's storage folder (under its private tmp), with the Unicode table when
    `wanted` (the child runs Hypothesis) and it could be built."""
    storage = private_tmp / "hypothesis"
    table = _unicode_table(isolation) if wanted else None
    if table is not None:
        shutil.copytree(table, storage / table.name, dirs_exist_ok=True)
    return storage


def uses_hypothesis(root: Path, test_paths: Iterable[str]) -> bool:
    """Whether any Python file under the test paths mentions Hypothesis."""
    return _mentions_hypothesis(root, tuple(test_paths))


@functools.cache
def _mentions_hypothesis(root: Path, test_paths: tuple[str, ...]) -> bool:
    for name in test_paths:
        path = root / name.split("::")[0]
        files = [path] if path.is_file() else path.rglob("*.py") if path.is_dir() else []
        for file in files:
            try:
                if b"hypothesis" in file.read_bytes():
                    return True
            except OSError:
                continue
    return False


def _unicode_table(isolation: Isolation) -> Path | None:
    with _BUILDING:  # the measured run and its rerun start side by side
        return _kept_unicode_table(isolation)


_BUILDING = threading.Lock()


@functools.cache
def _kept_unicode_table(isolation: Isolation) -> Path | None:
    """The table from the user's cache folder, built and put there if missing."""
    python = "py{}.{}".format(*sys.version_info)
    version = f"hypothesis-{importlib.metadata.version('hypothesis')}-{python}"
    home = _cache_home()
    if home is None:
        return _built_unicode_table(isolation)
    kept = home / "audit" / version / "unicode_data"
    if kept.is_dir():
        return kept
    built = _built_unicode_table(isolation)
    if built is None:
        return None
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=kept.parent, prefix=".building-"))
    except OSError:
        return built
    try:
        shutil.copytree(built, staging / kept.name)
        (staging / kept.name).rename(kept)  # whole or not at all; another audit may win
    except OSError:
        pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return kept if kept.is_dir() else built


def _cache_home() -> Path | None:
    configured = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(configured):
        return Path(configured)
    try:
        return Path.home() / ".cache"
    except RuntimeError:  # no HOME and no entry in the password database
        return None


def _built_unicode_table(isolation: Isolation) -> Path | None:
    home = Path(tempfile.mkdtemp(prefix="audit-hypothesis-"))
    atexit.register(shutil.rmtree, home, True)
    storage = home / "storage"
    command = isolation.wrap([sys.executable, "-c", _BUILD], home=str(home))
    try:
        done = subprocess.run(
            command,
            cwd=home,  # nothing of the project on its path: the table is shared
            env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(storage)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_BUILD_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    table = storage / "unicode_data"
    return table if done.returncode == 0 and table.is_dir() else None
