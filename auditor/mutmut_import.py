"""`audit import mutmut`: a finished mutmut 3 run's verdicts as the report's mutation
section, so the smells, probes, HTML and gate work on them.

mutmut keeps its results under `mutants/`: a `.meta` JSON per source file with an exit
code per mutant, and the mutated functions beside the originals. They are read with
mutmut's own code (`SourceFileMutationData`, `status_by_exit_code`,
`get_diff_for_mutant`), which reads paths relative to the project root. A mutant's
line is found from its function's place in the source and the diff's hunk; its
covering tests come from audit's own per-test coverage. mutmut records no killing test,
so kills have no test and no kind, and the checks table stays empty.
"""

from __future__ import annotations

import ast
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from auditor.discovery.project import Project
from auditor.discovery.targeted import targeted_files
from auditor.errors import MutmutImportError
from auditor.mutation import scoring
from auditor.report import BaselineSection, Mutant, MutantStatus, MutationSection, Scope

STATUS: dict[str, MutantStatus] = {
    "killed": "Killed",
    "segfault": "Killed",
    "survived": "Survived",
    "no tests": "NoCoverage",
    "timeout": "Timeout",
    "suspicious": "RuntimeError",
    "caught by type check": "CompileError",
    "skipped": "Ignored",
}
"""mutmut's status -> audit's; `not checked` and an interrupted check have no verdict."""
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")
_NUMBER = re.compile(r"__mutmut_(\d+)$")


@contextmanager
def _in_folder(folder: Path) -> Iterator[None]:
    """mutmut's readers take paths relative to the project root."""
    previous = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


def result_files(root: Path) -> list[Path]:
    """The `.meta` files of a mutmut run in `root`; none is a one-line error."""
    results = root / "mutants"
    metas = sorted(results.rglob("*.py.meta")) if results.is_dir() else []
    if not metas:
        raise MutmutImportError(f"no mutmut results in {results}: run `mutmut run` there first")
    return metas


def import_mutmut(project: Project, baseline: BaselineSection) -> MutationSection:
    started = time.perf_counter()
    results = project.root / "mutants"
    metas = result_files(project.root)
    try:
        from mutmut.mutation.data import SourceFileMutationData
        from mutmut.mutation.diff_apply import (
            get_diff_for_mutant,
            orig_function_and_class_names_from_key,
        )
        from mutmut.stats import status_by_exit_code
    except ImportError:
        needs = "reading mutmut's results needs mutmut 3.8+: pip install 'audit-tests[mutmut]'"
        raise MutmutImportError(needs) from None
    covering = _covering_tests(baseline)
    mutants = []
    with _in_folder(project.root):
        for meta in metas:
            file = meta.relative_to(results).as_posix().removesuffix(".meta")
            data = SourceFileMutationData(path=file)
            try:
                data.load()
            except (ValueError, KeyError, AssertionError) as exc:
                raise MutmutImportError(f"cannot read {meta}: {exc}") from None
            source = (project.root / file).read_text(encoding="utf-8")
            mutated = _MutatedFile(file, source, _function_places(source))
            for key, exit_code in sorted(data.exit_code_by_key.items()):
                status = STATUS.get(status_by_exit_code[exit_code])
                if status is None:
                    continue
                function, class_name = orig_function_and_class_names_from_key(key)
                qualname = f"{class_name}.{function}" if class_name else function
                diff = get_diff_for_mutant(key, path=file)
                mutants.append(_mutant(key, qualname, status, diff, mutated, covering))
    passing = [test.nodeid for test in baseline.tests if test.reliable]
    mutants.sort(key=lambda mutant: mutant.id)
    return MutationSection(
        **scoring.derived_fields(mutants, passing, targeted_files(project)),
        cache_hits=0,
        jobs=0,
        duration=round(time.perf_counter() - started, 3),
        mutants_per_second=0.0,
        scope=Scope(planned=len(mutants), selected=len(mutants)),
    )


@dataclass(frozen=True)
class _MutatedFile:
    file: str
    """Relative to the project root."""
    source: str
    places: dict[str, tuple[int, int]]
    """Each function's first and last line, by qualified name."""


def _mutant(
    key: str,
    qualname: str,
    status: MutantStatus,
    diff: str,
    mutated: _MutatedFile,
    covering: dict[tuple[str, int], list[str]],
) -> Mutant:
    """One of mutmut's mutants as the report's, with the tests that run its line."""
    file, source, places = mutated.file, mutated.source, mutated.places
    removed = [line[1:] for line in diff.splitlines()[2:] if line.startswith("-")]
    added = [line[1:] for line in diff.splitlines()[2:] if line.startswith("+")]
    line = _line(diff, source, places.get(qualname, (1, 1)), removed)
    number = _NUMBER.search(key)
    ordinal = number[1] if number else "0"
    description = _change(" ".join(removed).strip(), " ".join(added).strip())
    return Mutant(
        id=f"{file}::{qualname}::mutmut@{line}#{ordinal}",
        file=file,
        function=qualname,
        operator="mutmut",
        family="mutmut",
        line=line,
        col=0,
        end_line=line + max(len(removed), 1) - 1,
        original="\n".join(removed),
        replacement="\n".join(added),
        description=f"{description} (mutmut_{ordinal})",
        diff="\n".join([*(f"-{text}" for text in removed), *(f"+{text}" for text in added)]),
        status=status,
        status_reason="from mutmut's results",
        path="imported",
        covered_by=covering.get((file, line), []),
    )


def _change(before: str, after: str) -> str:
    """What changed, without the text both sides share: `= 1` -> `= 2` rather than the
    whole line."""
    if not after:
        return f"`{before}` removed"
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1
    while start and before[start - 1] not in " (,[{=":
        start -= 1  # back to the start of a word
    old, new = before[start : len(before) - end], after[start : len(after) - end]
    return f"`{old.strip() or before}` -> `{new.strip() or after}`"


def _line(diff: str, source: str, place: tuple[int, int], removed: list[str]) -> int:
    """The line of the first changed line: where the hunk puts it inside the function,
    or, when that line reads otherwise (comments above the function), where its text is
    found inside the function."""
    start, end = place
    lines = source.splitlines()
    offset = 0
    for text in diff.splitlines()[2:]:
        match = _HUNK.match(text)
        if match:
            offset = int(match[1]) - 1
            continue
        if text.startswith("-"):
            break
        if text.startswith(" "):
            offset += 1
    guess = start + offset
    wanted = removed[0].strip() if removed else ""
    if 0 < guess <= len(lines) and lines[guess - 1].strip() == wanted:
        return guess
    for number in range(start, min(end, len(lines)) + 1):
        if lines[number - 1].strip() == wanted:
            return number
    return guess


def _function_places(source: str) -> dict[str, tuple[int, int]]:
    """Qualified name -> (first line with its decorators, last line) of each function
    and method (one class level, as mutmut names them)."""
    places = {}
    tree = ast.parse(source)
    for node in tree.body:
        members = [(node, "")]
        if isinstance(node, ast.ClassDef):
            members = [(child, f"{node.name}.") for child in node.body]
        for member, prefix in members:
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([member.lineno, *(d.lineno for d in member.decorator_list)])
                places[prefix + member.name] = (first, member.end_lineno or member.lineno)
    return places


def _covering_tests(baseline: BaselineSection) -> dict[tuple[str, int], list[str]]:
    covering: dict[tuple[str, int], list[str]] = {}
    for test in baseline.tests:
        if not test.reliable:
            continue
        for file, lines in test.lines.items():
            for line in lines:
                covering.setdefault((file, line), []).append(test.nodeid)
    return covering
