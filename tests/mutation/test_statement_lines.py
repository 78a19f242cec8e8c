"""A mutant on any line of a multi-line statement that ran is covered: coverage.py
records such a statement under its first line only, and the planner reads the rest of
its lines as that one."""

from __future__ import annotations

import pytest

from auditor.mutation.coverage_index import statement_lines
from tests.conftest import one_module_mutants

VOWELS = """\
def is_vowel(letter):
    return letter in (
        "a",
        "e",
        "i",
    )
"""
VOWELS_TEST = """\
from vowels import is_vowel


def test_e_is_a_vowel():
    assert is_vowel("e")
"""
# A tuple of constants is one constant of the first line: Python reports no other line
# of it as run.


def test_a_continuation_line_maps_to_its_statements_first_line():
    assert statement_lines(VOWELS) == {3: 2, 4: 2, 5: 2, 6: 2}


def test_single_line_statements_map_to_nothing():
    assert statement_lines("x = 1\ny = 2\n") == {}


def test_an_empty_module_maps_to_nothing():
    assert statement_lines("") == {}


def test_a_source_that_does_not_parse_maps_to_nothing():
    assert statement_lines("def broken(:\n") == {}


@pytest.mark.slow
def test_mutants_on_continuation_lines_of_a_statement_that_ran_are_covered(tmp_path):
    mutants = one_module_mutants(tmp_path, "vowels", VOWELS, VOWELS_TEST, "constants")
    later_lines = [m for m in mutants if m["line"] in (3, 4, 5)]
    assert later_lines
    assert [m["id"] for m in later_lines if m["status"] == "NoCoverage"] == []
    the_test = ["tests/test_vowels.py::test_e_is_a_vowel"]
    assert all(m["covered_by"] == the_test for m in later_lines)
