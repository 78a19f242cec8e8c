"""Process set-up shared by every child that runs untrusted code."""

from __future__ import annotations

import resource
import sys


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
    """The current Hypothesis settings, seeded and without a database.

    Called from `pytest_configure`: after pytest has imported its plugins (importing
    Hypothesis earlier defeats assertion rewriting, an error under `filterwarnings =
    error`) and before test modules decorate their tests."""
    try:
        from hypothesis import settings
    except ImportError:
        return
    settings.register_profile("audit", parent=settings.default, database=None, derandomize=True)
    settings.load_profile("audit")


def quiet_bytecode() -> None:
    sys.dont_write_bytecode = True
