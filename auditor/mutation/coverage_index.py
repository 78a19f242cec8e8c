"""The baseline's coverage indexed for planning: which passing test ran which line, in
process or in a Python subprocess, how long each took, and which code objects ran."""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pydantic's models, which the early-sites helper does without
    from coverage.parser import PythonParser

    from auditor.report import BaselineSection, TestResult

LinesToTests = dict[str, dict[int, set[str]]]
"""Per file relative to the root, per line, the tests that ran it."""


class CoverageIndex:
    """Read once per run from the baseline's passing tests."""

    def __init__(self, baseline: BaselineSection) -> None:
        passing = [test for test in baseline.tests if test.reliable]
        self.durations = {test.nodeid: test.duration for test in passing}
        self.spawning = {test.nodeid for test in passing if test.spawns_python}
        self.called_lines = _called_lines(baseline, passing)
        """Per file, the first lines of the code objects that ran: called by a passing
        test (an arc from minus the line), at import time, or on any line a test's
        subprocess ran (its calls are not recorded)."""
        self.unmeasured_spawning = [
            test.nodeid for test in passing if test.spawns_python and not test.subprocess_lines
        ]
        """Tests that start another Python whose code went unmeasured (a cleared
        environment, a launcher that drops PYTHONPATH): our sitecustomize never reached
        those processes, so neither can the mutant. They may run code no other test
        reaches: that code takes the copy path."""
        self.tests_by_line = _by_line((test.nodeid, test.lines) for test in passing)
        self.subprocess_tests_by_line = _by_line(
            (test.nodeid, test.subprocess_lines) for test in passing
        )
        """Tests whose Python subprocesses ran a line: the mutant's child runs them after
        its in-process tests, serving the mutated file to their subprocesses."""
        self.import_lines = {f: set(lines) for f, lines in baseline.import_time_lines.items()}
        self.tests_by_file: dict[str, set[str]] = defaultdict(set)
        for test in passing:
            self.tests_by_file[test.nodeid.split("::", 1)[0]].add(test.nodeid)


def _called_lines(baseline: BaselineSection, passing: list[TestResult]) -> dict[str, set[int]]:
    called: dict[str, set[int]] = defaultdict(set)
    for file, lines in baseline.import_time_calls.items():
        called[file].update(lines)
    for test in passing:
        for file, arcs in test.arcs.items():
            called[file].update(-start for start, _ in arcs if start < 0)
        for file, lines in test.subprocess_lines.items():
            called[file].update(lines)
    return called


def _by_line(ran: object) -> LinesToTests:
    index: LinesToTests = defaultdict(lambda: defaultdict(set))
    for nodeid, files in ran:  # type: ignore[attr-defined]
        for file, lines in files.items():
            for line in lines:
                index[file][line].add(nodeid)
    return index


def excluded_lines(source: str) -> frozenset[int]:
    """The lines the baseline's coverage.py leaves out of the file's coverage: by its
    default rules (the baseline reads no coverage configuration), those marked
    `# pragma: no cover` and the blocks such a line opens. Empty for a source it cannot
    parse."""
    parser = _parsed(source)
    return frozenset(parser.excluded) if parser is not None else frozenset()


@functools.lru_cache(maxsize=64)
def _parsed(source: str) -> PythonParser | None:
    """coverage.py's parse of a source under its default exclusions, made once for both
    questions planning asks of a file, and kept for a warm session's next audit."""
    from coverage.config import DEFAULT_EXCLUDE
    from coverage.exceptions import CoverageException
    from coverage.misc import join_regex
    from coverage.parser import PythonParser

    if not source.strip():  # an empty module: no text for the parser
        return None
    parser = PythonParser(text=source, exclude=join_regex(DEFAULT_EXCLUDE))
    try:
        parser.parse_source()
    except (CoverageException, SyntaxError, ValueError):
        return None
    return parser


def statement_lines(source: str) -> dict[int, int]:
    """Each continuation line of a multi-line statement, and the statement's first line:
    coverage.py records a statement that ran under its first line only, so a mutant on
    a later line of it is covered by the tests that ran that one. Empty for a source
    coverage.py cannot parse (planning then finds no sites in it either)."""
    parser = _parsed(source)
    if parser is None:
        return {}
    lines = range(1, source.count("\n") + 2)
    return {line: first for line in lines if (first := parser.first_line(line)) != line}
