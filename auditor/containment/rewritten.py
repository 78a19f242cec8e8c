"""Test modules as pytest's assertion rewriting makes them, kept between runs.

Every process that collects the suite (the baseline's, each runner) rewrote the asserts
of every test module again: the children write no bytecode into the user's tree, so
pytest's own cache of rewritten modules is never made. The audit process rewrites the
modules it has not seen in this content (pytest's own function, on the source text:
nothing of the project runs) into `.audit/rewritten/`, one file per module and content;
the children take their code from there and rewrite only what is missing. As with the
results cache, only the audit process writes there.

pytest also rewrites every module of each installed distribution that provides a
plugin (Hypothesis, anyio: about a hundred modules, imported by their plugins or at the
end of the session), again in every child for the same reason. Their asserts are not
the project's checks: a child imports them as Python does, from the bytecode installed
with them (`serve`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import marshal
import os
import site
import sysconfig
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from auditor.discovery.audit_folder import audit_folder

_FOLDER = "rewritten"


def folder(root: Path) -> Path:
    """Where the rewritten modules of the project at `root` are kept."""
    return root / ".audit" / _FOLDER


def prepare(root: Path, modules: Iterable[Path]) -> None:
    """Rewrite the modules whose content has no entry yet, and drop the entries of
    contents that are gone. Anything that fails leaves that module to the children."""
    try:
        pytest_version = importlib.metadata.version("pytest")
        kept = audit_folder(root, _FOLDER)
    except (importlib.metadata.PackageNotFoundError, OSError):
        return
    wanted = set()
    for module in sorted(set(modules)):
        try:
            source = module.read_bytes()
        except OSError:
            continue
        name = entry_name(pytest_version, module, source)
        wanted.add(name)
        if not (kept / name).exists():
            _write(kept / name, module)
    for entry in kept.iterdir():
        if entry.name not in wanted:
            with contextlib.suppress(OSError):
                entry.unlink()


def entry_name(pytest_version: str, module: Path, source: bytes) -> str:
    """The entry of one content of one module for this pytest and this Python."""
    key = hashlib.sha256()
    for part in (pytest_version.encode(), importlib.util.MAGIC_NUMBER, os.fsencode(module)):
        key.update(part)
        key.update(b"\0")
    key.update(source)
    return key.hexdigest()


def _write(entry: Path, module: Path) -> None:
    # Imported here: a run whose test modules are all kept does not load pytest.
    from _pytest.assertion.rewrite import _rewrite_test

    try:
        # No config: the assertion pass hook is off (`serve` leaves that case to pytest).
        _, code = _rewrite_test(module, None)
    except (SyntaxError, ValueError, OSError):
        return  # collection reports it, as it would without audit
    partial = entry.with_name(f"{entry.name}.{os.getpid()}")
    try:
        partial.write_bytes(marshal.dumps(code))
        os.replace(partial, entry)  # another audit of the project may read it now
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()


def serve(kept: str, root: str) -> None:
    """In a child about to collect: pytest takes a test module's code from its entry in
    `kept` when there is one, and leaves installed packages outside the project at
    `root` to Python's own import."""
    try:
        from _pytest.assertion import rewrite
        from pytest import __version__ as pytest_version
    except ImportError:
        return
    _leave_installed_packages(rewrite.AssertionRewritingHook, Path(root))
    rewrite_anew = rewrite._rewrite_test

    def rewrite_test(module: Path, config: Any) -> tuple[Any, types.CodeType]:
        if config is not None and config.getini("enable_assertion_pass_hook"):
            return rewrite_anew(module, config)
        source = module.read_bytes()
        code = _read(Path(kept) / entry_name(pytest_version, module, source))
        if code is None:
            return rewrite_anew(module, config)
        # The first item is what pytest writes its own cache with: never, in a child.
        return importlib.util.source_hash(source), code

    rewrite._rewrite_test = rewrite_test


def _leave_installed_packages(hook: Any, root: Path) -> None:
    """Turn pytest's rewriting away from modules in an installed-packages folder that
    does not hold the project (which may itself be an installed package, audited in
    place). With the assertion pass hook on, every rewritten assert counts: pytest
    decides as it would."""
    root = Path(os.path.realpath(root))
    folders = [folder for folder in _installed_folders() if folder not in (root, *root.parents)]
    should_rewrite = hook._should_rewrite

    def own_code_only(self: Any, name: str, fn: str, state: Any) -> bool:
        if not should_rewrite(self, name, fn, state):
            return False
        if self.config.getini("enable_assertion_pass_hook"):
            return True
        installed = Path(os.path.realpath(fn)).parents
        return not any(folder in installed for folder in folders)

    hook._should_rewrite = own_code_only


def _installed_folders() -> list[Path]:
    paths = {sysconfig.get_paths()[name] for name in ("purelib", "platlib")}
    paths.update(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        paths.add(site.getusersitepackages())
    return sorted({Path(os.path.realpath(path)) for path in paths})


def _read(entry: Path) -> types.CodeType | None:
    try:
        code = marshal.loads(entry.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None
