"""What can be probed: the public functions and methods of the code under test, read
statically (ast), with the facts the probes need about each (raises, documented raises,
literals in the docstring, and whether it looks like it touches the outside world)."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from auditor.discovery.test_source import dotted, read_test_source

_OUTSIDE_MODULES = {
    "os": "processes or files",
    "shutil": "files",
    "pathlib": "files",
    "tempfile": "files",
    "socket": "network",
    "ssl": "network",
    "http": "network",
    "urllib": "network",
    "requests": "network",
    "httpx": "network",
    "aiohttp": "network",
    "smtplib": "network",
    "ftplib": "network",
    "subprocess": "processes",
    "multiprocessing": "processes",
    "signal": "processes",
    "random": "randomness",
    "uuid": "randomness",
    "secrets": "randomness",
}
_OUTSIDE_CALLS = {
    "open": "files",
    "Path": "files",
    "input": "the terminal",
    "exit": "processes",
    "sleep": "clocks",
    "now": "clocks",
    "time": "clocks",
    "monotonic": "clocks",
    "perf_counter": "clocks",
    "today": "clocks",
    "utcnow": "clocks",
    "unlink": "files",
    "rmdir": "files",
    "rmtree": "files",
    "write_text": "files",
    "write_bytes": "files",
    "mkdir": "files",
    "connect": "network",
    "urlopen": "network",
    "system": "processes",
    "kill": "processes",
}
_OUTSIDE_NAMES = re.compile(
    r"(^|_)(delete|unlink|rmtree|purge|wipe|download|upload|fetch|connect|socket|serve|"
    r"sleep|spawn|shell|exec)(_|$)"
)
_RAISES_SECTION = re.compile(r"^\s*(Raises|:raises)\b", re.MULTILINE)
_EXCEPTION_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Warning)|[A-Z]\w+)\b")


@dataclass(frozen=True)
class Raise:
    line: int
    exception: str
    """The raised class's name as written (`ValueError`, `errors.Bad`, `T` of
    `cast(T, error)`); '' when the statement does not name one: a bare `raise`, or an
    exception held in a variable of the function (`raise last_error`: caught earlier,
    whatever its class)."""
    written: str = ""
    """What follows `raise` ('' for a bare `raise`, a re-raise, which is on purpose)."""


@dataclass(frozen=True)
class Target:
    file: str
    """Relative to the project root."""
    module: str
    qualname: str
    line: int
    end_line: int
    class_name: str = ""
    kind: str = "function"
    """`function`, `method`, `staticmethod`, `classmethod` (called through its class,
    which the call binds), or `constructor` (a public class's `__init__`, called through
    the class: what it builds is what a test sees)."""
    raises: tuple[Raise, ...] = ()
    documented_raises: tuple[str, ...] = ()
    doc_literals: tuple[str, ...] = ()
    """Literals in the docstring (doctest inputs, quoted examples): example values."""
    outside: str = ""
    """Why it looks like it touches the outside world ('' when it does not)."""

    @property
    def key(self) -> str:
        return f"{self.file}::{self.qualname}"


@dataclass
class _Scope:
    names: list[str] = field(default_factory=list)


def _outside_reason(
    function: ast.FunctionDef | ast.AsyncFunctionDef, imported: dict[str, str]
) -> str:
    if _OUTSIDE_NAMES.search(function.name.lower()):
        return f"its name ({function.name}) suggests it acts on the outside world"
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            called = dotted(node.func)
            last = called.rsplit(".", 1)[-1]
            head = called.split(".", 1)[0]
            module = imported.get(head, "")
            if called.startswith("os.path."):
                continue
            if module.split(".")[0] in _OUTSIDE_MODULES:
                what = _OUTSIDE_MODULES[module.split(".")[0]]
                return f"it calls {called} ({what})"
            if last in _OUTSIDE_CALLS:
                return f"it calls {called} ({_OUTSIDE_CALLS[last]})"
    return ""


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the module it comes from, for every module-level import."""
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = node.module
    return names


def _raises(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[Raise, ...]:
    found = []
    bound = _bound_names(function)
    for node in ast.walk(function):
        if isinstance(node, ast.Raise):
            if node.exc is None:
                found.append(Raise(node.lineno, ""))
                continue
            name = _raised_class(node.exc)
            if name.split(".")[0] in bound:
                name = ""  # `raise error`: an object of any class, not a class named here
            found.append(Raise(node.lineno, name, ast.unparse(node.exc)[:80]))
    return tuple(sorted(found, key=lambda r: r.line))


def _raised_class(raised: ast.expr) -> str:
    """The class a `raise` names: `ValueError` of `ValueError(...)`, and `T` of
    `cast(T, error)` (`typing.cast` tells the type checker, not the reader, what is
    raised)."""
    if not (
        isinstance(raised, ast.Call)
        and raised.args
        and dotted(raised.func).rsplit(".", 1)[-1] == "cast"
    ):
        return dotted(raised)
    target = raised.args[0]
    if isinstance(target, ast.Constant) and isinstance(target.value, str):
        return target.value
    return dotted(target)


def _bound_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names the function binds: its parameters, assignments, `except ... as` names."""
    arguments = function.args
    bound = {
        argument.arg
        for argument in [
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            *filter(None, [arguments.vararg, arguments.kwarg]),
        ]
    }
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _documented_raises(docstring: str) -> tuple[str, ...]:
    match = _RAISES_SECTION.search(docstring)
    if not match:
        return ()
    return tuple(sorted(set(_EXCEPTION_NAME.findall(docstring[match.end() :]))))


def _doc_literals(docstring: str) -> tuple[str, ...]:
    """Python literals quoted in the docstring: `'1,234.5'`, `>>> f(3)` arguments."""
    literals = set()
    for chunk in re.findall(r"'[^'\n]*'|\"[^\"\n]*\"|-?\d+(?:\.\d+)?", docstring):
        try:
            ast.literal_eval(chunk)
        except (ValueError, SyntaxError):
            continue
        literals.add(chunk)
    return tuple(sorted(literals))


_NOT_CALLS = {
    "property",
    "cached_property",
    "setter",
    "getter",
    "deleter",
    "overload",
    "contextmanager",
    "asynccontextmanager",
    "fixture",
}
"""Decorators after which the name is no call of the function's body: an attribute, a
stub the next definition replaces, a context manager, a pytest fixture. Any other
decorator is probed through: a function it wraps without keeping (`functools.wraps`)
is found not probeable when the probes make it callable (`auditor.probes.calls`)."""


def _decorators(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {dotted(decorator).rsplit(".", 1)[-1] for decorator in function.decorator_list}


def find_targets(path: Path, relative: str, module: str) -> list[Target]:
    """Public functions and methods of one file; files that do not parse give none."""
    try:
        source = path.read_bytes()
    except OSError:
        return []
    return list(_targets_in(source, str(path), relative, module))


@functools.lru_cache(maxsize=2048)
def _targets_in(source: bytes, filename: str, relative: str, module: str) -> tuple[Target, ...]:
    """Kept by content, as the read index's facts are: a question to the warm agent
    session after a one-file change parses that file only."""
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError):
        return ()
    imported = _imports(tree)
    found: list[Target] = []

    def add(node: ast.FunctionDef, class_name: str = "") -> None:
        decorators = _decorators(node)
        constructor = bool(class_name) and node.name == "__init__"
        called = bool(class_name) and node.name == "__call__"
        if (node.name.startswith("_") and not (constructor or called)) or decorators & _NOT_CALLS:
            return
        docstring = ast.get_docstring(node) or ""
        kind = "function"
        if constructor:
            kind = "constructor"
        elif class_name:
            kind = next((k for k in ("staticmethod", "classmethod") if k in decorators), "method")
        found.append(
            Target(
                file=relative,
                module=module,
                qualname=f"{class_name}.{node.name}" if class_name else node.name,
                line=node.lineno,
                end_line=node.end_lineno or node.lineno,
                class_name=class_name,
                kind=kind,
                raises=_raises(node),
                documented_raises=_documented_raises(docstring),
                doc_literals=_doc_literals(docstring),
                outside=_outside_reason(node, imported),
            )
        )

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            add(node)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for member in node.body:
                if isinstance(member, ast.FunctionDef):
                    add(member, node.name)
    return tuple(found)


def expected_exceptions(test_files: list[Path]) -> set[str]:
    """Exception names the tests expect (`TestSource.expected`)."""
    names: set[str] = set()
    for path in test_files:
        names |= read_test_source(path).expected
    return names
