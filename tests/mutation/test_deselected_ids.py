"""Tests that crashed the baseline are left out of the runners by their exact ids."""

import pytest

from tests.conftest import one_module_mutants

SOURCE = "def double(x):\n    return x * 2\n"
TESTS = (
    "import os\n\nfrom calc import double\n\n\n"
    "def test_a():\n    os._exit(3)\n\n\n"
    "def test_ab():\n    assert double(2) == 4\n"
)


@pytest.mark.slow
def test_a_crashed_test_whose_id_begins_another_leaves_that_one_in(tmp_path):
    """pytest's `--deselect` takes prefixes: leaving out `test_a` took `test_ab` along,
    and the mutants only `test_ab` runs had no test to run."""
    mutants = one_module_mutants(tmp_path, "calc", SOURCE, TESTS, "arithmetic")
    assert mutants
    assert {mutant["status"] for mutant in mutants} == {"Killed"}
    assert {tuple(mutant["killed_by"]) for mutant in mutants} == {("tests/test_calc.py::test_ab",)}
