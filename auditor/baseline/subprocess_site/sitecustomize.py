"""Imported at start-up by every Python process a test starts, in the baseline and in
a mutant's run (this folder is put first on their PYTHONPATH).

In the baseline it measures the process with coverage.py under the running test's
context, so code a test runs in a subprocess (`python -m pkg`) is attributed to the test.
In a mutant's run it serves the mutated file to the process's imports, so the subprocess
runs the mutant without a copy of the project. Then it hands over to the environment's
own sitecustomize, if there is one.

Being in every such process, it imports only modules built into the interpreter (no
json, no contextlib) unless it measures coverage."""

import marshal
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


class _MutantFinder:
    """Finds the mutated file's module as the normal path search would, and loads it
    from the mutated source instead of the file (never from its bytecode cache)."""

    def __init__(self, spec: dict) -> None:
        self.file = spec["file"]
        self.source = spec["source"]
        self.applied = spec["applied"]
        self.compiled = spec.get("compiled")
        folder, name = os.path.split(self.file)
        stem = os.path.splitext(name)[0]
        self.last_name = os.path.basename(folder) if stem == "__init__" else stem

    def code(self, filename):
        # Tells the mutant's child that the mutant reached this process.
        os.close(os.open(self.applied, os.O_WRONLY | os.O_CREAT, 0o600))
        shared = self.compiled if filename == self.file else None
        code = _load_compiled(shared) if shared else None
        if code is None:
            code = compile(self.source, filename, "exec", dont_inherit=True)
            if shared:
                _keep_compiled(code, shared)
        return code

    def find_spec(self, fullname, path=None, target=None):
        if fullname.rpartition(".")[2] != self.last_name:
            return None  # the normal search, not repeated here for every other module
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or os.path.realpath(spec.origin) != self.file:
            return None
        spec.loader = _mutant_loader(fullname, spec.origin, self)
        return spec


def _compiled_header() -> bytes:
    # The interpreter's bytecode version and optimization level: a test may start
    # another Python, or this one with -O, and neither may load the other's code.
    from importlib._bootstrap_external import MAGIC_NUMBER  # loaded at start-up already

    return MAGIC_NUMBER + bytes([sys.flags.optimize])


def _load_compiled(path):
    """The mutant's code as an earlier process of the same mutant's run compiled it:
    loading it is far cheaper than compiling a large file in every process a test
    starts, and a file run as a script has no bytecode cache at all."""
    try:
        with open(path, "rb") as kept:
            data = kept.read()
    except OSError:
        return None
    header = _compiled_header()
    if not data.startswith(header):
        return None
    try:
        return marshal.loads(data[len(header) :])
    except (EOFError, ValueError, TypeError):
        return None


def _keep_compiled(code, path) -> None:
    partial = f"{path}.{os.getpid()}"
    try:
        with open(partial, "wb") as kept:
            kept.write(_compiled_header() + marshal.dumps(code))
        os.replace(partial, path)  # whole or absent, for processes running beside this one
    except OSError:
        try:
            os.unlink(partial)
        except OSError:
            pass


def _mutant_loader(fullname, origin, finder):
    from importlib.machinery import SourceFileLoader

    class MutantLoader(SourceFileLoader):
        def get_source(self, name):
            return finder.source

        def get_code(self, name):
            return finder.code(self.path)

    return MutantLoader(fullname, origin)


def _serve_mutant():
    spec_path = os.environ.get("AUDIT_MUTANT")
    if not spec_path:
        return None
    try:
        with open(spec_path, "rb") as spec_file:
            finder = _MutantFinder(marshal.load(spec_file))
    except (OSError, EOFError, ValueError, TypeError, KeyError):
        return None  # nothing served, nothing marked: the mutant's child falls back to a copy
    sys.meta_path.insert(0, finder)
    return finder


def _exit_status(exit):
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=sys.stderr)
    return 1


def _run_mutated_script(finder) -> None:
    """`python path/to/file.py` on the mutated file: the interpreter would read the file
    itself once start-up ends, so run the mutant as `__main__` here, as it would, and
    leave the process the way it would (threads joined, exit handlers run)."""
    script = sys.argv[0] if sys.argv else ""
    if not script or script in ("-c", "-m") or os.path.realpath(script) != finder.file:
        return
    script = os.path.abspath(script)  # as the interpreter names a script it runs
    code = finder.code(script)
    sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
    main = sys.modules["__main__"].__dict__
    main.update(__file__=script, __cached__=None)
    status = 0
    try:
        exec(code, main)
    except SystemExit as exit:
        status = _exit_status(exit)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        import atexit

        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(status)


_measure()
_served = _serve_mutant()

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [path for path in sys.path if os.path.abspath(path or os.curdir) != _here]
_this = sys.modules.pop(__name__)
try:
    __import__("sitecustomize")
except ImportError:
    # None there: stay registered, or the import system's own bookkeeping for this
    # module fails and the process prints "Error in sitecustomize" on its stderr.
    sys.modules[__name__] = _this
if _served is not None:
    _run_mutated_script(_served)
