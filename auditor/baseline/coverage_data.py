"""Read the baseline's coverage.py data: per-test lines and arcs, file and function totals.

Per-test data comes from the dynamic contexts the child recorded (`nodeid|phase`).
Totals count only import time and passing tests: a red test's coverage is not coverage.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import coverage
from coverage.data import CoverageData

from auditor.baseline.child import measure
from auditor.baseline.protocol import CONTEXT_PHASES, SUBPROCESS, context_name
from auditor.discovery.project import contents, relative
from auditor.report import CoverageCounts, CoverageSection, FileCoverage, FunctionCoverage

_KNOWN_SCHEMA = 7
"""coverage.py's data schema whose `arc`, `file` and `context` tables `_every_context`
reads directly (coverage.py 7.x)."""


def _every_context(data_file: Path) -> dict[str, dict[str, set[tuple[int, int]]]] | None:
    """{context: {file: arcs}} in one query: coverage.py's API asks one (context, file) at a
    time, and opens the database for each ask, which a suite of thousands of tests feels.
    None where the schema is not the one we know (the API path is taken instead)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{data_file}?mode=ro", uri=True)) as db:
            (version,) = db.execute("select version from coverage_schema").fetchone()
            has_arcs = db.execute("select value from meta where key = 'has_arcs'").fetchone()
            if version != _KNOWN_SCHEMA or not has_arcs or has_arcs[0] not in ("1", "True"):
                return None
            rows = db.execute(
                "select context.context, file.path, arc.fromno, arc.tono from arc"
                " join context on context.id = arc.context_id"
                " join file on file.id = arc.file_id"
            )
            # Every test's arcs end up in the report: one object per distinct arc, shared
            # by the tests that ran it (tests share most of their arcs).
            distinct: dict[tuple[int, int], tuple[int, int]] = {}
            found: dict[str, dict[str, set[tuple[int, int]]]] = {}
            for context, path, start, end in rows:
                arc = distinct.setdefault((start, end), (start, end))
                found.setdefault(context, {}).setdefault(path, set()).add(arc)
    except (sqlite3.Error, TypeError):
        return None
    return found


class BaselineCoverage:
    def __init__(self, data_file: Path, root: Path) -> None:
        self.root = root
        self.data_file = data_file
        self.data = CoverageData(str(data_file))
        self.data.read()
        self.files = sorted(self.data.measured_files())
        self._per_test: dict[str, dict[str, set[tuple[int, int]]]] = {}
        every_context = _every_context(data_file)
        self._all_read = every_context is not None
        self._by_context = every_context or {}

    def _arcs_in(self, context: str) -> dict[str, set[tuple[int, int]]]:
        """Every context's arcs, read at once where the data's schema is the one we know;
        otherwise through coverage.py's API, one query per (context, file), remembered
        (a test's phases are read for its lines, its subprocess lines and the totals)."""
        if self._all_read:
            return self._by_context.get(context, {})
        if context not in self._by_context:
            self.data.set_query_context(context)
            found = {}
            for file in self.files:
                arcs = self.data.arcs(file) or []
                if arcs:
                    found[file] = set(arcs)
            self._by_context[context] = found
        return self._by_context[context]

    @staticmethod
    def _lines_of(arcs: Iterable[tuple[int, int]]) -> set[int]:
        return {line for arc in arcs for line in arc if line > 0}

    def _merged(self, nodeid: str, phases: Iterable[str]) -> dict[str, set[tuple[int, int]]]:
        merged: dict[str, set[tuple[int, int]]] = {}
        for phase in phases:
            for file, arcs in self._arcs_in(context_name(nodeid, phase)).items():
                merged.setdefault(file, set()).update(arcs)
        return merged

    def for_test(self, nodeid: str) -> dict[str, set[tuple[int, int]]]:
        """Arcs (absolute file paths) the test ran in any of its phases, in process or in
        Python subprocesses it started."""
        if nodeid not in self._per_test:
            self._per_test[nodeid] = self._merged(nodeid, (*CONTEXT_PHASES, SUBPROCESS))
        return self._per_test[nodeid]

    def subprocess_lines(self, nodeid: str) -> dict[str, list[int]]:
        """Lines the test ran in Python subprocesses it started."""
        arcs = self._merged(nodeid, (SUBPROCESS,))
        return {relative(f, self.root): sorted(self._lines_of(a)) for f, a in arcs.items()}

    def subprocess_arcs(self, nodeid: str) -> dict[str, list[tuple[int, int]]]:
        """Arcs (by relative path) the test ran in Python subprocesses it started."""
        arcs = self._merged(nodeid, (SUBPROCESS,))
        return {relative(f, self.root): sorted(a) for f, a in arcs.items()}

    def test_lines_and_arcs(
        self, nodeid: str
    ) -> tuple[dict[str, list[int]], dict[str, list[tuple[int, int]]]]:
        """In-process lines and arcs: what a mutant swapped in the runner reaches."""
        arcs = self._merged(nodeid, CONTEXT_PHASES)
        lines = {relative(f, self.root): sorted(self._lines_of(a)) for f, a in arcs.items()}
        sorted_arcs = {relative(f, self.root): sorted(a) for f, a in arcs.items()}
        return lines, sorted_arcs

    def import_time_lines(self) -> dict[str, list[int]]:
        return {
            relative(file, self.root): sorted(self._lines_of(arcs))
            for file, arcs in self._arcs_in("").items()
        }

    def import_time_arcs(self) -> dict[str, list[tuple[int, int]]]:
        """The arcs run outside every test: imports and collection."""
        return {relative(file, self.root): sorted(arcs) for file, arcs in self._arcs_in("").items()}

    def add_import_time_arcs(self, arcs: Mapping[str, Iterable[tuple[int, int]]]) -> None:
        """An earlier run's `import_time_arcs` (by relative path), added to this run's:
        a run that collects only some test files may not import every module."""
        into = self._by_context.setdefault("", self._arcs_in(""))
        for file, found in arcs.items():
            into.setdefault(str(self.root / file), set()).update(map(tuple, found))

    def import_time_calls(self) -> dict[str, list[int]]:
        """The first line of each code object called at import time: coverage.py records
        entering one as an arc from minus its first line."""
        calls = {
            relative(file, self.root): sorted({-start for start, _ in arcs if start < 0})
            for file, arcs in self._arcs_in("").items()
        }
        return {file: lines for file, lines in calls.items() if lines}

    def summary(
        self,
        passing: Iterable[str],
        source_dirs: list[str],
        omit: Sequence[str] = (),
        kept: Iterable[dict[str, list[tuple[int, int]]]] = (),
        unimported: Iterable[str] = (),
        known: KnownFiles | None = None,
    ) -> tuple[CoverageSection, dict[str, str]]:
        """File and function coverage from import time plus the passing tests only, and
        each file's key (`file_keys`); `kept`: the arcs (by relative path) of passing
        tests an earlier run measured; `unimported`: files under test counted even where
        no test imported them (as coverage.py's `source` counts them: 0%, not left out);
        `known`: an earlier summary, whose files of an unchanged key are taken as they
        are (coverage.py analyses every file it reports, parsing it again)."""
        union = {file: set(arcs) for file, arcs in self._arcs_in("").items()}
        for nodeid in passing:
            for file, arcs in self.for_test(nodeid).items():
                union.setdefault(file, set()).update(arcs)
        absolute: dict[str, str] = {}  # a kept test's files, each joined to the root once
        for arcs_by_file in kept:
            for file, arcs in arcs_by_file.items():
                if file not in absolute:
                    absolute[file] = str(self.root / file)
                union.setdefault(absolute[file], set()).update(map(tuple, arcs))
        touched = sorted({*self.files, *unimported})
        if known is None:
            files = self._report(union, touched, source_dirs, omit)
            named = _named(self.root, [*union, *touched], (f.path for f in files))
            return _section(files), file_keys(union, named)
        named = _named(self.root, [*union, *touched], (f.path for f in known.files))
        keys = file_keys(union, named)
        reused = known.unchanged(keys)
        again = {path for relative_path, path in named.items() if relative_path not in reused}
        files = self._report(
            {file: arcs for file, arcs in union.items() if file in again},
            sorted(again),
            sorted(again),
            omit,
        )
        return _section([*files, *reused.values()]), keys

    def _report(
        self,
        union: dict[str, set[tuple[int, int]]],
        touched: list[str],
        paths: list[str],
        omit: Sequence[str],
    ) -> list[FileCoverage]:
        """coverage.py's analysis of the files under `paths` (folders or files), from
        the arcs in `union`."""
        if not paths:
            return []
        with tempfile.TemporaryDirectory(prefix="audit-cov-") as scratch:
            filtered = CoverageData(str(Path(scratch) / "passing.sqlite"))
            filtered.add_arcs({file: sorted(arcs) for file, arcs in union.items()})
            filtered.touch_files(touched)
            filtered.write()
            cov = coverage.Coverage(
                data_file=filtered.data_filename(),
                branch=True,
                config_file=False,
                **measure(paths, omit),
            )
            cov.load()
            out = Path(scratch) / "coverage.json"
            previous = os.getcwd()
            os.chdir(self.root)  # coverage names files relative to the working directory
            try:
                cov.json_report(outfile=str(out), ignore_errors=True)
            finally:
                os.chdir(previous)
            raw = json.loads(out.read_text(encoding="utf-8"))
        return _files_from_json(raw, self.root)


@dataclass(frozen=True)
class KnownFiles:
    """An earlier summary's files, and the key each was computed from."""

    files: Sequence[FileCoverage]
    keys: Mapping[str, str]

    def unchanged(self, keys: Mapping[str, str]) -> dict[str, FileCoverage]:
        """The earlier files whose key is the same now, by relative path."""
        return {
            file.path: file
            for file in self.files
            if file.path in keys and self.keys.get(file.path) == keys[file.path]
        }


def _named(root: Path, measured: Iterable[str], reported: Iterable[str]) -> dict[str, str]:
    """Each file's path as the data names it (`measured`, absolute), else as a report
    named it (relative to `root`), by its relative path."""
    named = {relative(path, root): str(root / path) for path in reported}
    named.update((relative(path, root), path) for path in measured)
    return named


def file_keys(
    union: Mapping[str, Iterable[tuple[int, int]]], named: Mapping[str, str]
) -> dict[str, str]:
    """What each file's coverage is computed from, as a digest by relative path: its
    content and the arcs run in it (`union`, by the path the data names it by)."""
    keys = {}
    for relative_path, path in sorted(named.items()):
        digest = hashlib.sha256(contents(Path(path)))
        digest.update(json.dumps(sorted(union.get(path, ()))).encode())
        keys[relative_path] = digest.hexdigest()
    return keys


def _counts(summary: dict) -> CoverageCounts:
    statements = summary["num_statements"]
    branches = summary.get("num_branches", 0)
    covered_branches = summary.get("covered_branches", 0)
    return CoverageCounts(
        statements=statements,
        covered_lines=summary["covered_lines"],
        branches=branches,
        covered_branches=covered_branches,
        line_percent=round(100.0 * summary["covered_lines"] / statements, 2)
        if statements
        else 100.0,
        branch_percent=round(100.0 * covered_branches / branches, 2) if branches else 100.0,
    )


def _files_from_json(raw: dict, root: Path) -> list[FileCoverage]:
    files = []
    for path, entry in sorted(raw["files"].items()):
        functions = [
            FunctionCoverage(
                qualname=name,
                start_line=min(region["executed_lines"] + region["missing_lines"], default=0),
                counts=_counts(region["summary"]),
            )
            for name, region in sorted(entry.get("functions", {}).items())
            if name
        ]
        files.append(
            FileCoverage(
                path=relative(str(root / path), root),
                counts=_counts(entry["summary"]),
                missing_lines=sorted(entry["missing_lines"]),
                missing_branches=sorted(tuple(arc) for arc in entry.get("missing_branches", [])),
                functions=sorted(functions, key=lambda f: (f.start_line, f.qualname)),
            )
        )
    return files


def _section(files: list[FileCoverage]) -> CoverageSection:
    """The files in path order, and their totals (coverage.py's totals are the sums)."""
    totals = {
        "num_statements": sum(f.counts.statements for f in files),
        "covered_lines": sum(f.counts.covered_lines for f in files),
        "num_branches": sum(f.counts.branches for f in files),
        "covered_branches": sum(f.counts.covered_branches for f in files),
    }
    return CoverageSection(totals=_counts(totals), files=sorted(files, key=lambda f: f.path))
