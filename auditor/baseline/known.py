"""A baseline kept between runs, and used again whole when nothing it depends on changed.

What the suite's run gives depends on the project's files (the tests and the files
beside them, the code under test, every Python file importable from the source roots,
the config files), the installed packages, the interpreter, audit's own code and the
run's settings. The kept baseline carries a manifest of all of them; a run whose
manifest is the same reuses the kept sections and starts no test process. A run after a
change to test files and function bodies only (`partial`) runs the tests it can touch,
and the others keep their results; any other change measures everything again. The
report says which, and what changed. Environment variables and files outside the
project are not in the manifest (docs/ci.md)."""

from __future__ import annotations

import ast
import contextlib
import difflib
import functools
import hashlib
import io
import json
import os
import sys
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

import auditor
from auditor import __version__
from auditor.discovery.bodies import function_bodies
from auditor.discovery.installed import packages_digest
from auditor.discovery.project import Project, contents
from auditor.report import BaselineSection, CoverageSection, TestResult

_CONFIG_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "pytest.ini")
_NAMED_CHANGES = 3
"""Changed files a reason names before it counts the rest."""
_NOT_CODE = frozenset(
    {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
)


class Manifest(BaseModel):
    """What a baseline depended on, each part as a digest."""

    model_config = ConfigDict(frozen=True)

    audit: str
    python: str
    packages: str
    files: dict[str, str]
    """Each file's digest, by its path relative to the project root."""


class KeptBaseline(BaseModel):
    manifest: Manifest
    baseline: BaselineSection
    coverage: CoverageSection
    sources: dict[str, str] = {}
    """The code under test as it was measured, by relative path: a later run compares
    a changed file with it to find the functions that changed."""
    coverage_keys: dict[str, str] = {}
    """What each file's coverage was computed from (`coverage_data.file_keys`): a later
    run takes the files whose key is the same as they are."""
    patterns: list[tuple[str, int, bool]] = []
    """`BaselineSection.compiled_patterns`, which the report leaves out."""
    import_time_arcs: dict[str, list[tuple[int, int]]] = {}
    """The arcs run outside every test (imports and collection), by relative path: a
    later run that does not collect every test file takes them for the files it leaves
    out, whose modules it may never import."""
    subprocess_arcs: dict[str, dict[str, list[tuple[int, int]]]] = {}
    """By test: the arcs (by relative path) its Python subprocesses ran, which the report
    leaves out: a later run that keeps the test's result adds them to the coverage."""


@dataclass(frozen=True)
class Partial:
    """A run of only the tests a change can touch: the rest keep their results."""

    kept: list[TestResult]
    changed: str
    """What changed, in words."""
    uncollected: list[str] = field(default_factory=list)
    """The test files all of whose tests keep their results: the run does not collect
    them, nor import what only they import. Empty when a test file the earlier run had
    changed or went: only when the change adds test files and edits bodies is the
    earlier run's import time, with the new files', all that a full one would run."""
    import_time_arcs: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """The earlier run's `KeptBaseline.import_time_arcs`, numbered as the files are now."""
    subprocess_arcs: dict[str, dict[str, list[tuple[int, int]]]] = field(default_factory=dict)
    """The earlier run's `KeptBaseline.subprocess_arcs` of the kept tests, numbered as
    the files are now."""


class BaselineStore(Protocol):
    """Where the kept baselines live (`ResultCache`, `.audit/cache.sqlite`)."""

    def get_baseline(self, scope: str) -> str | None: ...

    def put_baseline(self, scope: str, value: str) -> None: ...


@functools.cache
def _audit_digest() -> str:
    """audit's own code: a baseline measured by other code is measured again."""
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(Path(auditor.__file__).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _pruned(folder: Path) -> bool:
    return (
        folder.name.startswith(".")
        or folder.name in ("__pycache__", "node_modules")
        or (folder / "pyvenv.cfg").exists()  # a virtual environment: its packages count
    )


def _files_under(path: Path, suffix: str = "") -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    for folder, subfolders, names in os.walk(path):
        subfolders[:] = [name for name in subfolders if not _pruned(Path(folder, name))]
        for name in names:
            if name.endswith(suffix) and not name.endswith(".pyc"):
                yield Path(folder, name)


def depended_on(project: Project) -> list[Path]:
    """The project's files a run of its suite may read: everything under the test paths
    and the code under test, every Python file under the source roots, the conftests and
    the config files."""
    found: set[Path] = set(project.conftest_files)
    for path in (*project.test_paths, *project.source_paths):
        found.update(_files_under(path))
    for source_root in project.source_roots:
        found.update(_files_under(source_root, ".py"))
    found.update(project.root / name for name in _CONFIG_FILES)
    found.update(path for path in (project.pyproject, project.inifile) if path is not None)
    return sorted(path for path in found if path.is_file())


def manifest(project: Project) -> Manifest:
    files = {
        project.relative(path): hashlib.sha256(contents(path)).hexdigest()
        for path in depended_on(project)
    }
    return Manifest(
        audit=_audit_digest(),
        python=_interpreter(),
        packages=packages_digest(),
        files=files,
    )


def _interpreter() -> str:
    """The interpreter as a file and an environment: `audit` (its script names
    `python3.11`) and `python -m auditor` (`python`, a link to it) run the same one."""
    return f"{sys.version} {os.path.realpath(sys.executable)} {sys.prefix}"


def scope(settings: dict[str, Any]) -> str:
    """One kept baseline per set of settings (the test paths, the limits, the sandbox):
    a run with other settings keeps its own."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


class _NextLoad:
    """The kept baseline the last run read or wrote, validated again while a warm session
    waits for its next question (`prepare_next_load`): the next run that reads the same
    text takes it instead of validating megabytes of JSON before its first test starts.
    It is handed out once, since the run that takes it changes it."""

    def __init__(self) -> None:
        self.last: str | None = None
        self.ready: tuple[str, KeptBaseline] | None = None

    def take(self, value: str) -> KeptBaseline | None:
        ready, self.ready = self.ready, None
        self.last = value
        return ready[1] if ready is not None and ready[0] == value else None

    def prepare(self) -> None:
        if self.last is not None and self.ready is None:
            with contextlib.suppress(ValidationError):
                self.ready = (self.last, KeptBaseline.model_validate_json(self.last))


_next_load = _NextLoad()


def prepare_next_load() -> None:
    """Validate the kept baseline of the last run now, for the next run (see `_NextLoad`)."""
    _next_load.prepare()


def kept(store: BaselineStore | None, scope: str) -> KeptBaseline | None:
    value = None if store is None else store.get_baseline(scope)
    if value is None:
        return None
    prepared = _next_load.take(value)
    if prepared is not None:
        return prepared
    try:
        return KeptBaseline.model_validate_json(value)
    except ValidationError:
        return None  # written by another version of the report model: measured again


def keep(store: BaselineStore | None, scope: str, baseline: KeptBaseline) -> None:
    if store is not None:
        value = baseline.model_dump_json()
        store.put_baseline(scope, value)
        _next_load.last = value


def changes(before: Manifest, now: Manifest) -> list[str]:
    """What differs between two manifests, in words; empty when nothing does."""
    found = []
    if before.audit != now.audit:
        found.append("audit's code changed")
    if before.python != now.python:
        found.append("the Python interpreter changed")
    if before.packages != now.packages:
        found.append("the installed packages changed")
    files = _changed_files(before.files, now.files)
    if files:
        found.append(_files_reason(files))
    return found


def _changed_files(before: dict[str, str], now: dict[str, str]) -> list[str]:
    return sorted(path for path in before.keys() | now.keys() if before.get(path) != now.get(path))


def _files_reason(paths: Iterable[str]) -> str:
    paths = list(paths)
    named = ", ".join(paths[:_NAMED_CHANGES])
    more = f" and {len(paths) - _NAMED_CHANGES} more" if len(paths) > _NAMED_CHANGES else ""
    noun = "file" if len(paths) == 1 else "files"
    return f"{len(paths)} {noun} changed ({named}{more})"


def sources(project: Project) -> dict[str, str]:
    return {
        project.relative(path): path.read_text(encoding="utf-8", errors="replace")
        for path in project.source_files
    }


def partial(earlier: KeptBaseline, now: Manifest, project: Project) -> Partial | str:
    """The tests that need no new run after the change from `earlier` to `now`, or why
    every test runs again. Only test files and function bodies of the code under test
    may have changed (lines added or removed in them move the kept tests' lines below),
    and no changed function may have run at import. The tests that run again: those of
    the changed test files, those that ran a changed function (in process or in a Python
    subprocess they started), and those that did not pass."""
    before = earlier.manifest
    if (before.audit, before.python, before.packages) != (now.audit, now.python, now.packages):
        return "; ".join(changes(before, now))
    changed = _changed_files(before.files, now.files)
    test_files = {project.relative(path) for path in project.test_files}
    test_files |= {test.file for test in earlier.baseline.tests}  # deleted ones too
    edits: dict[str, Edit] = {}
    for path in changed:
        if path in test_files:
            continue
        if path not in earlier.sources or path not in now.files:
            return f"{path} changed (not a test file, nor a function of the code under test)"
        source = contents(project.root / path).decode("utf-8", errors="replace")
        found = changed_bodies(earlier.sources[path], source)
        if isinstance(found, str):
            return f"{path}: {found}"
        ran_at_import = set(earlier.baseline.import_time_lines.get(path, ()))
        if any(_any_in(ran_at_import, span) for span in found.spans):
            return f"{path}: a changed function ran at import"
        edits[path] = found
    # A test whose Python subprocesses' arcs the earlier run did not keep runs again.
    unchanged = [
        test
        for test in earlier.baseline.tests
        if test.outcome == "passed"
        and test.file not in changed
        and (not test.subprocess_lines or test.nodeid in earlier.subprocess_arcs)
        and not _ran(test, edits)
    ]
    moving = {path: edit.lines for path, edit in edits.items() if edit.moves}
    kept: list[TestResult] = []
    subprocess_arcs: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for test in unchanged:
        moved = _moved(test, moving)
        arcs = _moved_arcs(earlier.subprocess_arcs.get(test.nodeid, {}), moving)
        if moved is not None and arcs is not None:
            kept.append(moved)
            if arcs:
                subprocess_arcs[test.nodeid] = arcs
    reason = _files_reason(changed)
    if any(path in test_files and path in before.files for path in changed):
        # An edited or deleted test file may no longer run at import what it ran then:
        # every file is collected, and import time measured anew.
        return Partial(kept=kept, changed=reason, subprocess_arcs=subprocess_arcs)
    import_time_arcs = _moved_arcs(earlier.import_time_arcs, moving)
    if import_time_arcs is None:
        return "a line that ran at import moved where audit cannot follow it"
    return Partial(
        kept=kept,
        changed=reason,
        uncollected=_uncollected(earlier.baseline.tests, kept),
        import_time_arcs=import_time_arcs,
        subprocess_arcs=subprocess_arcs,
    )


def _uncollected(tests: list[TestResult], kept: list[TestResult]) -> list[str]:
    """The files of `kept` that hold no test that runs again."""
    kept_ids = {test.nodeid for test in kept}
    running = {test.file for test in tests if test.nodeid not in kept_ids}
    return sorted({test.file for test in kept} - running)


def _any_in(lines: Iterable[int], span: tuple[int, int]) -> bool:
    first, last = span
    return any(first <= line <= last for line in lines)


def _ran(test: TestResult, edits: dict[str, Edit]) -> bool:
    return any(
        _any_in(lines.get(path, ()), span)
        for lines in (test.lines, test.subprocess_lines)
        for path, found in edits.items()
        for span in found.spans
    )


def _moved(test: TestResult, moving: dict[str, dict[int, int]]) -> TestResult | None:
    """The test's lines and arcs numbered as the files are now (`moving`: each moved
    file's `Edit.lines`); None where one of them is not a line the edits left in place
    (the test then runs again)."""
    ran = (test.lines, test.arcs, test.subprocess_lines)
    if not any(path in found for path in moving for found in ran):
        return test
    lines, arcs = _moved_lines(test.lines, moving), _moved_arcs(test.arcs, moving)
    subprocess_lines = _moved_lines(test.subprocess_lines, moving)
    if lines is None or arcs is None or subprocess_lines is None:
        return None
    moved = {"lines": lines, "arcs": arcs, "subprocess_lines": subprocess_lines}
    return test.model_copy(update=moved)


def _moved_lines(
    lines: dict[str, list[int]], moving: dict[str, dict[int, int]]
) -> dict[str, list[int]] | None:
    try:
        return {
            path: [moving[path][n] for n in numbers] if path in moving else numbers
            for path, numbers in lines.items()
        }
    except KeyError:
        return None


def _moved_arcs(
    arcs: dict[str, list[tuple[int, int]]], moving: dict[str, dict[int, int]]
) -> dict[str, list[tuple[int, int]]] | None:
    try:
        return {
            path: [_moved_arc(arc, moving[path]) for arc in found] if path in moving else found
            for path, found in arcs.items()
        }
    except KeyError:
        return None


def _moved_arc(arc: tuple[int, int], lines: dict[int, int]) -> tuple[int, int]:
    """coverage.py's negative numbers (a code object's entry and exit, by its first
    line) move as their line does."""
    first, last = arc
    return (_moved_line(first, lines), _moved_line(last, lines))


def _moved_line(number: int, lines: dict[int, int]) -> int:
    return -lines[-number] if number < 0 else lines[number]


@dataclass(frozen=True)
class Edit:
    """How a file of the code under test changed: inside these function bodies only."""

    spans: list[tuple[int, int]]
    """The changed bodies, numbered as in the earlier version."""
    lines: dict[int, int]
    """Each earlier line the edit left as it was, and its number now (lines added or
    removed above it move it)."""

    @functools.cached_property
    def moves(self) -> bool:
        return any(was != now for was, now in self.lines.items())


def changed_bodies(old: str, new: str) -> Edit | str:
    """The function bodies (docstrings aside) that differ between two versions of a
    file, lines added or removed in them included, or why the change is more than that:
    a changed line outside every body (a signature, a decorator, module or class code;
    comment and blank lines aside)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    try:
        old_bodies, new_bodies = _bodies(ast.parse(old)), _bodies(ast.parse(new))
        old_code, new_code = _code_lines(old), _code_lines(new)
    except (SyntaxError, ValueError, tokenize.TokenError):
        return "it does not parse"
    if len(old_bodies) != len(new_bodies):
        return "a function was added or removed"
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    lines: dict[int, int] = {}
    spans = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines.update(zip(range(i1 + 1, i2 + 1), range(j1 + 1, j2 + 1), strict=True))
            continue
        was = [n for n in range(i1 + 1, i2 + 1) if n in old_code]
        now = [n for n in range(j1 + 1, j2 + 1) if n in new_code]
        body = _body_of(was, old_bodies, now, new_bodies)
        if isinstance(body, str):
            return body
        if body is not None:
            spans.add(old_bodies[body])
    return Edit(spans=sorted(spans), lines=lines)


def _body_of(
    was: list[int],
    old_bodies: list[tuple[int, int]],
    now: list[int],
    new_bodies: list[tuple[int, int]],
) -> int | str | None:
    """The one body (by its place among the file's bodies) holding a changed region's
    code lines, before and after; None for a region of comments and blank lines."""
    places = {_place(n, old_bodies) for n in was} | {_place(n, new_bodies) for n in now}
    if not places:
        return None
    if None in places or len(places) > 1:
        first = min([*was, *now])
        return f"line {first} changed outside a function's body"
    return places.pop()


def _place(line: int, bodies: list[tuple[int, int]]) -> int | None:
    return next((i for i, (first, last) in enumerate(bodies) if first <= line <= last), None)


def _code_lines(source: str) -> set[int]:
    """Lines holding a token of code: not only comments or blank (a line of a string
    literal that reads like a comment is code)."""
    found: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            found.update(range(token.start[0], token.end[0] + 1))
    return found


def _bodies(tree: ast.Module) -> list[tuple[int, int]]:
    return sorted((body.first, body.last) for body in function_bodies(tree))
