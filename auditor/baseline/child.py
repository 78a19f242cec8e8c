"""Entry point of the baseline child: `python -m auditor.baseline.child SPEC.json`.

Order matters: resource limits first, then coverage (before any user code is imported),
then the guard (after our own files are open), then pytest.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.containment import wire
from auditor.containment.sandbox import limit_resources, quiet_bytecode

if TYPE_CHECKING:
    from auditor.baseline.protocol import ChildSpec


def measure(paths: list[str], omit: Sequence[str] = ()) -> dict[str, list[str]]:
    """coverage.py's `source` takes folders; single files need `include` patterns."""
    if all(os.path.isdir(path) for path in paths):
        return {"source": paths, "omit": list(omit)}
    include = [os.path.join(p, "*") if os.path.isdir(p) else p for p in paths]
    return {"include": include, "omit": list(omit)}


SUBPROCESS_SITE = Path(__file__).with_name("subprocess_site")
"""Put first on the PYTHONPATH of the processes tests start (see its sitecustomize)."""


class _Unmeasured:
    """Stands in for coverage.Coverage when only the outcomes are wanted."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def switch_context(self, name: str) -> None: ...


def measure_subprocesses(data_file: str, source_dirs: list[str], omit: list[str]) -> None:
    """Python processes the tests start import our sitecustomize, which measures them
    into `data_file.<suffix>` files (combined at the end) under the test's context."""
    for stale in Path(data_file).parent.glob(Path(data_file).name + ".*"):
        stale.unlink()  # left by an attempt that crashed: not this run's data
    os.environ["AUDIT_SUBPROCESS_COVERAGE"] = json.dumps(
        {"data_file": data_file, "measure": measure(source_dirs, omit)}
    )
    paths = [str(SUBPROCESS_SITE), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(path for path in paths if path)


def main(spec_path: str) -> int:
    from auditor.baseline.protocol import ChildSpec

    spec = wire.build(ChildSpec, Path(spec_path).read_text(encoding="utf-8"))
    limit_resources(spec.memory_limit_mb)
    quiet_bytecode()
    os.chdir(spec.root)

    if spec.measure:
        import coverage

        # In memory until the end: coverage.py writes its data out at every context
        # switch, three per test (`_save` writes it once).
        cov: Any = coverage.Coverage(
            data_file=None,
            branch=True,
            config_file=False,
            **measure(spec.source_dirs, spec.omit),
        )
        measure_subprocesses(spec.data_file, spec.source_dirs, spec.omit)
    else:
        cov = _Unmeasured()
    cov.start()
    import pytest

    from auditor.baseline import protocol
    from auditor.baseline.observe import CallRecorder
    from auditor.baseline.plugin import BaselinePlugin
    from auditor.containment import guard, rewritten

    events = open(spec.events_file, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
    recorder = CallRecorder(spec.source_dirs, spec.omit, spec.scratch) if spec.measure else None

    def stop_after_timeout() -> None:
        """A timed-out test may leave threads or processes running: save what the run
        measured and end the process; the parent resumes after this test."""
        _save(cov, spec)
        plugin.emit(protocol.Resume())
        events.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    plugin = BaselinePlugin(
        cov,
        events,
        spec.test_timeout,
        spec.shuffle_seed,
        recorder,
        stop_after_timeout,
        deselect=frozenset(spec.deselect),
        uncollected=frozenset(
            os.path.realpath(os.path.join(spec.root, path)) for path in spec.uncollected
        ),
    )
    signal.signal(signal.SIGALRM, plugin.on_alarm)
    rewritten.serve(spec.rewritten, spec.root)
    if spec.guard:
        guard.install(spec.allowed_roots, plugin.record_blocked, [spec.root])
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
        *spec.pytest_args,
    ]
    try:
        status = pytest.main(args, plugins=[plugin])
    finally:
        _save(cov, spec)
        events.close()
    return int(status)


def _save(cov: Any, spec: ChildSpec) -> None:
    cov.stop()
    if not spec.measure:
        return
    # What tests ran in Python subprocesses, under their `nodeid|subprocess` context.
    subprocesses = [
        str(path) for path in Path(spec.data_file).parent.glob(Path(spec.data_file).name + ".*")
    ]
    if subprocesses:
        cov.combine(data_paths=subprocesses, keep=False)
    from coverage import CoverageData

    saved = CoverageData(spec.data_file)
    saved.update(cov.get_data())
    saved.write()


if __name__ == "__main__":
    sys.stdout.flush()
    code = main(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
