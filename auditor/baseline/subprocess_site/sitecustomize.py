"""Imported at start-up by every Python process a baseline test starts (this folder is
put first on their PYTHONPATH): measures that process with coverage.py under the running
test's context, so code a test runs in a subprocess (`python -m pkg`) is attributed to
the test. Then hands over to the environment's own sitecustomize, if there is one."""

import contextlib
import importlib
import os
import sys


def _measure() -> None:
    settings = os.environ.get("AUDIT_SUBPROCESS_COVERAGE")
    context = os.environ.get("AUDIT_SUBPROCESS_CONTEXT")
    if not settings or not context:
        return
    import atexit
    import json

    try:
        import coverage
    except ImportError:
        return
    spec = json.loads(settings)
    cov = coverage.Coverage(
        data_file=spec["data_file"],
        data_suffix=True,
        branch=True,
        config_file=False,
        context=context,
        **spec["measure"],
    )
    cov.start()

    def save() -> None:
        cov.stop()
        cov.save()

    atexit.register(save)


_measure()

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [path for path in sys.path if os.path.abspath(path or os.curdir) != _here]
del sys.modules[__name__]
with contextlib.suppress(ImportError):
    importlib.import_module("sitecustomize")
