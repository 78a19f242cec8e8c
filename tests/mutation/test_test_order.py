"""The order a mutant's tests run in: it changes no verdict, only how soon a kill comes
and which test is named the first killer."""

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_audit


@pytest.mark.slow
def test_a_test_that_starts_python_runs_after_the_unit_tests_of_its_class(tmp_path: Path):
    """Both tests kill the mutant; by name the one that starts Python would run first."""
    (tmp_path / "calc.py").write_text("def double(x):\n    return x * 2\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(
        textwrap.dedent(
            """\
            import subprocess
            import sys

            from calc import double


            def test_a_cli():
                shown = subprocess.run(
                    [sys.executable, "-c", "from calc import double; print(double(3))"],
                    capture_output=True,
                    text=True,
                )
                assert shown.stdout == "6\\n"
                assert double(3) == 6


            def test_b_unit():
                assert double(3) == 6
            """
        )
    )
    out = tmp_path / "r.json"
    flags = ("--mutators", "arithmetic", "-q", "--no-probes", "--json", str(out))
    result = run_audit("tests", *flags, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    mutants = json.loads(out.read_text())["mutation"]["mutants"]
    assert mutants
    assert {m["killed_by"][0] for m in mutants} == {"tests/test_calc.py::test_b_unit"}


SHAPES = """\
def doubled(x):
    return x * 2


BASE = doubled(10)
MODE = "fast"


class Square:
    SIDES = 4

    def describe(self):
        return f"{self.SIDES} sides"


class Circle:
    def describe(self):
        return "round"


def speed(mode):
    if mode == MODE:
        return 2
    return 1
"""

SHAPES_TESTS = """\
import shapes


def test_a_everything():
    assert shapes.Circle().describe() == "round"
    assert shapes.BASE == 20
    assert shapes.Square.SIDES == 4
    assert shapes.MODE == "fast"


def test_b_doubled():
    assert shapes.doubled(3) == 6


def test_c_speed():
    assert shapes.speed("fast") == 2


def test_d_square():
    assert shapes.Square().describe() == "4 sides"
"""


@pytest.fixture(scope="module")
def shapes_killers(tmp_path_factory: pytest.TempPathFactory) -> dict[int, set[str]]:
    """The first killers of the import-time mutants of each line of `shapes.py`. Every
    test runs the file and `test_a_everything` kills every mutant: by name it would run
    first."""
    root = tmp_path_factory.mktemp("shapes")
    (root / "shapes.py").write_text(SHAPES)
    (root / "tests").mkdir()
    (root / "tests" / "test_shapes.py").write_text(SHAPES_TESTS)
    out = root / "r.json"
    result = run_audit("tests", "-q", "--no-probes", "--json", str(out), cwd=root)
    assert result.returncode in (0, 1), result.stderr
    killers: dict[int, set[str]] = {}
    for mutant in json.loads(out.read_text())["mutation"]["mutants"]:
        if mutant["status"] == "Killed":
            killers.setdefault(mutant["line"], set()).add(mutant["killed_by"][0])
    return killers


@pytest.mark.slow
def test_a_function_that_runs_at_import_is_first_tested_by_the_tests_that_call_it(
    shapes_killers: dict[int, set[str]],
):
    assert shapes_killers[2] == {"tests/test_shapes.py::test_b_doubled"}


@pytest.mark.slow
def test_a_class_attribute_is_first_tested_by_the_tests_that_run_its_class(
    shapes_killers: dict[int, set[str]],
):
    assert shapes_killers[10] == {"tests/test_shapes.py::test_d_square"}


@pytest.mark.slow
def test_a_module_value_is_first_tested_by_the_tests_that_run_a_line_naming_it(
    shapes_killers: dict[int, set[str]],
):
    assert shapes_killers[6] == {"tests/test_shapes.py::test_c_speed"}
