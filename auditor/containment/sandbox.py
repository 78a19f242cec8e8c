"""Process set-up shared by every child that runs untrusted code."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import random
import resource
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def child_environment(
    python_path: Sequence[str], private_tmp: Path, hypothesis_storage: Path
) -> dict[str, str]:
    """What every child that runs the code under test starts with: the caller's
    environment, the code's folders first on the path, no bytecode written, a private
    temporary folder, Hypothesis's storage, and one hash seed (unless the user set one):
    the order of a set of strings, and so what the tests run and pass to the code, is
    the same in every run."""
    env = dict(os.environ)
    paths = [*python_path, env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(path for path in paths if path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("PYTHONHASHSEED", "0")
    env["TMPDIR"] = str(private_tmp)
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(hypothesis_storage)
    return env


def limit_resources(memory_limit_mb: int, cpu_seconds: int | None = None) -> None:
    """No core dumps in the user's tree, bounded memory, optionally bounded CPU time."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limit = memory_limit_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    if cpu_seconds is not None:
        _, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
        if cpu_hard == resource.RLIM_INFINITY or cpu_hard > cpu_seconds:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_hard))


def derandomize_hypothesis() -> None:
    """Hypothesis seeded and without a database, in a process about to run tests.

    Called from `pytest_configure`: after pytest has imported its plugins (importing
    Hypothesis earlier defeats assertion rewriting, an error under `filterwarnings =
    error`) and before test modules decorate their tests. Hypothesis is not imported for
    this: a suite that never uses it would carry its memory in every runner and every
    mutant's child. If nothing has imported it yet, the profile is loaded the moment
    something does."""
    if "hypothesis" in sys.modules:
        _load_audit_profile()
    else:
        sys.meta_path.insert(0, _AfterImport("hypothesis", _load_audit_profile))


def seed_random(nodeid: str) -> None:
    """Seed `random` (and NumPy's global generator, if the tests imported NumPy) for the
    test about to run, from its id: in the baseline and in every mutant's child the test
    draws the same numbers, so what it covers and what it kills do not change from run
    to run (a cache that evicts a random key kills a mutant in one run, not the next)."""
    seed = int.from_bytes(hashlib.sha256(nodeid.encode()).digest()[:4], "big")
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        with contextlib.suppress(Exception):  # a NumPy without the legacy global API
            numpy.random.seed(seed)


def benchmarks_run_once(config: Any) -> None:
    """pytest-benchmark's fixture calls the function once instead of thousands of times
    (as under `--benchmark-disable`): the test's checks still run, and a benchmark's
    timing says nothing about what a test catches. Called after every plugin is
    configured (its session is made in its own `pytest_configure`)."""
    session = getattr(config, "_benchmarksession", None)
    if session is not None:
        session.disabled = True


def _load_audit_profile() -> None:
    from hypothesis import core, settings

    settings.register_profile("audit", parent=settings.default, database=None, derandomize=True)
    settings.load_profile("audit")
    # What `--hypothesis-seed=0` does: tests that set `derandomize=False` are seeded too.
    core.global_force_seed = 0


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls `then()` right after the module `name` has been imported by anyone.

    It finds nothing itself: it asks the other finders (pytest's assertion rewriter
    among them: it loads the packages of pytest plugins, Hypothesis's included) and
    hands back their spec with its loader wrapped. It leaves `sys.meta_path` at the
    first lookup."""

    def __init__(self, name: str, then: Callable[[], None]) -> None:
        self.name = name
        self.then = then

    def find_spec(self, fullname: str, path: object, target: object = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenLoader(spec.loader, self.then)
        return spec


class _ThenLoader(importlib.abc.Loader):
    """A module's own loader, then a call; anything else is the loader's."""

    def __init__(self, loader: Any, then: Callable[[], None]) -> None:
        self._loader = loader
        self._then = then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        self._then()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


def quiet_bytecode() -> None:
    sys.dont_write_bytecode = True
