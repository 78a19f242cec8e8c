"""Entry point of the baseline child: `python -m auditor.baseline.child SPEC.json`.

Order matters: resource limits first, then coverage (before any user code is imported),
then the guard (after our own files are open), then pytest.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from pathlib import Path


def _limit_resources(memory_limit_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limit = memory_limit_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _derandomize_hypothesis() -> None:
    """Seeded and without a database, loaded before test modules decorate their tests.

    A conftest that loads its own profile wins; `--hypothesis-seed` still fixes the seed.
    """
    from hypothesis import settings

    settings.register_profile("audit", database=None, derandomize=True)
    settings.load_profile("audit")


def main(spec_path: str) -> int:
    from auditor.baseline.protocol import ChildSpec

    spec = ChildSpec.read(Path(spec_path))
    _limit_resources(spec.memory_limit_mb)
    sys.dont_write_bytecode = True
    os.chdir(spec.root)

    import coverage

    cov = coverage.Coverage(
        data_file=spec.data_file, branch=True, source=spec.source_dirs, config_file=False
    )
    cov.start()
    import pytest

    from auditor import guard
    from auditor.baseline.plugin import BaselinePlugin, raise_timeout

    _derandomize_hypothesis()
    signal.signal(signal.SIGALRM, raise_timeout)
    events = open(spec.events_file, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
    plugin = BaselinePlugin(cov, events, spec.test_timeout)
    guard.install(spec.allowed_roots, plugin.record_blocked)
    args = [
        *spec.test_paths,
        "--rootdir",
        spec.root,
        "--basetemp",
        spec.basetemp,
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
        "-q",
        "--tb=short",
        "--hypothesis-seed=0",
    ]
    for nodeid in spec.deselect:
        args += ["--deselect", nodeid]
    try:
        status = pytest.main(args, plugins=[plugin])
    finally:
        cov.stop()
        cov.save()
        events.close()
    return int(status)


if __name__ == "__main__":
    sys.stdout.flush()
    code = main(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
