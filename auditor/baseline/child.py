"""Entry point of the baseline child: `python -m auditor.baseline.child SPEC.json`.

Order matters: resource limits first, then coverage (before any user code is imported),
then the guard (after our own files are open), then pytest.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from auditor.sandbox import limit_resources, quiet_bytecode


def measure(paths: list[str]) -> dict[str, list[str]]:
    """coverage.py's `source` takes folders; single files need `include` patterns."""
    if all(os.path.isdir(path) for path in paths):
        return {"source": paths}
    return {"include": [os.path.join(p, "*") if os.path.isdir(p) else p for p in paths]}


def main(spec_path: str) -> int:
    from auditor.baseline.protocol import ChildSpec

    spec = ChildSpec.read(Path(spec_path))
    limit_resources(spec.memory_limit_mb)
    quiet_bytecode()
    os.chdir(spec.root)

    import coverage

    cov = coverage.Coverage(
        data_file=spec.data_file, branch=True, config_file=False, **measure(spec.source_dirs)
    )
    cov.start()
    import pytest

    from auditor import guard
    from auditor.baseline.plugin import BaselinePlugin, raise_timeout

    signal.signal(signal.SIGALRM, raise_timeout)
    events = open(spec.events_file, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
    plugin = BaselinePlugin(cov, events, spec.test_timeout)
    guard.install(spec.allowed_roots, plugin.record_blocked)
    sys.addaudithook(plugin.watch_subprocesses)
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
