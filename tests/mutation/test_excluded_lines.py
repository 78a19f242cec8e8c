"""Code the project leaves out of its coverage (`# pragma: no cover`) that no test runs
is no gap in the suite: its mutants are ignored, as coverage.py ignores the lines,
rather than counted as surviving with no coverage."""

from __future__ import annotations

import pytest

from auditor.mutation.coverage_index import excluded_lines
from tests.conftest import one_module_mutants

SHAPES = """\
def area(width, height):
    return width * height


def perimeter(width, height):
    return 2 * (width + height)


def volume(width, height, depth):  # pragma: no cover
    return width * height * depth


def describe(width):
    if width < 0:
        raise ValueError(  # pragma: no cover
            width - 1
        )
    return width + 1
"""
SHAPES_TEST = """\
from shapes import area, describe


def test_area():
    assert area(2, 3) == 6


def test_describe():
    assert describe(2) == 3
"""


def test_a_marked_line_and_the_block_it_opens_are_excluded():
    # coverage.py names a statement by its first line: 15 stands for 15-17.
    assert excluded_lines(SHAPES) == {9, 10, 15}


def test_a_source_without_marks_excludes_nothing():
    assert excluded_lines("def f(x):\n    return x + 1\n") == frozenset()


def test_a_source_that_does_not_parse_excludes_nothing():
    assert excluded_lines("def broken(:\n") == frozenset()


@pytest.mark.slow
def test_mutants_no_test_runs_on_excluded_lines_are_ignored_the_others_have_no_coverage(
    tmp_path,
):
    mutants = one_module_mutants(tmp_path, "shapes", SHAPES, SHAPES_TEST, "arithmetic")
    status = {m["line"]: (m["status"], m["status_reason"]) for m in mutants}
    excluded = ("Ignored", "no test runs it, and the project excludes it from coverage")
    assert status[10] == excluded
    assert status[16] == excluded  # a continuation line of the excluded raise
    assert status[6] == ("NoCoverage", "no passing test runs this line")
    assert status[2][0] == "Killed"
