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
