"""A cached verdict holds only while what its tests ran is the same: the code they ran
besides the mutant, the helpers beside them, the installed distributions."""

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import one_module_project, run_audit

pytestmark = pytest.mark.slow


def _mutation(root: Path, env: dict[str, str] | None = None) -> dict:
    out = root.parent / f"{root.name}.json"
    done = run_audit("tests", "--no-probes", "--json", str(out), cwd=root, env=env)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(out.read_text())["mutation"]


def _verdicts(mutation: dict) -> dict[str, tuple[str, list[str]]]:
    return {m["id"]: (m["status"], m["killed_by"]) for m in mutation["mutants"]}


def _cold(root: Path) -> dict[str, tuple[str, list[str]]]:
    copy = root.parent / "cold"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".audit"))
    return _verdicts(_mutation(copy))


SCALED = "from other import g\n\n\ndef f(x):\n    return g(x) * x\n"
TEST_SCALED = (
    "from calc import f\nfrom other import g\n\n\ndef test_f():\n    assert f(3) == g(3) * 3\n"
)


def test_an_edited_function_the_tests_call_judges_the_mutants_again(tmp_path):
    """With `g` returning 0, `g(x) / x` gives what the test expects; with `g` returning
    1 it does not: the cached survivor must not stand."""
    root = one_module_project(tmp_path / "calc", "calc", SCALED, {"test_calc.py": TEST_SCALED})
    (root / "other.py").write_text("def g(x):\n    return 0\n")
    (root / "pyproject.toml").write_text(
        (root / "pyproject.toml").read_text() + '\n[tool.audit]\nsrc = ["calc.py", "other.py"]\n'
    )
    divided = "calc.py::f::arithmetic.swap@1:11#0"
    before = _verdicts(_mutation(root))
    (root / "other.py").write_text("def g(x):\n    return 1\n")

    after = _verdicts(_mutation(root))

    assert (before[divided][0], after[divided][0]) == ("Survived", "Killed")
    assert after == _cold(root)


SCALED_BY_A_CONSTANT = "from constants import SCALE\n\n\ndef f(x):\n    return x * SCALE\n"
TEST_SCALED_BY_A_CONSTANT = """\
from calc import f
from constants import SCALE


def test_f():
    assert f(3) == 3 * SCALE
"""


def test_an_edited_module_the_tests_only_import_judges_the_mutants_again(tmp_path):
    """`constants.py` runs at import only: with SCALE = 1, `x / SCALE` gives what the
    test expects; with SCALE = 2 it does not."""
    files = {"test_calc.py": TEST_SCALED_BY_A_CONSTANT}
    root = one_module_project(tmp_path / "calc", "calc", SCALED_BY_A_CONSTANT, files)
    (root / "constants.py").write_text("SCALE = 1\n")
    (root / "pyproject.toml").write_text(
        (root / "pyproject.toml").read_text()
        + '\n[tool.audit]\nsrc = ["calc.py", "constants.py"]\n'
    )
    divided = "calc.py::f::arithmetic.swap@1:11#0"
    before = _verdicts(_mutation(root))
    (root / "constants.py").write_text("SCALE = 2\n")

    after = _verdicts(_mutation(root))

    assert (before[divided][0], after[divided][0]) == ("Survived", "Killed")
    assert after == _cold(root)


CHECKED = """\
from calc import double
from tests.helpers import check


def test_double():
    check(double(0))
"""


def test_an_edited_helper_beside_the_tests_judges_the_mutants_again(tmp_path):
    root = one_module_project(
        tmp_path / "calc",
        "calc",
        "def double(x):\n    return x * 2\n",
        {"test_calc.py": CHECKED, "helpers.py": "def check(value):\n    pass\n", "__init__.py": ""},
    )
    before = _verdicts(_mutation(root))
    (root / "tests" / "helpers.py").write_text("def check(value):\n    assert value == 0\n")

    after = _verdicts(_mutation(root))

    assert {status for status, _ in before.values()} - {"Ignored"} == {"Survived"}
    assert "Killed" in {status for status, _ in after.values()}
    assert after == _cold(root)


def test_a_changed_installed_distribution_runs_every_mutant_again(tmp_path):
    root = one_module_project(
        tmp_path / "calc",
        "calc",
        "def double(x):\n    return x * 2\n",
        {"test_calc.py": "from calc import double\n\n\ndef test_double():\n    assert double(2)\n"},
    )
    site = tmp_path / "site"
    (site / "dependency-1.0.dist-info").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(site)}
    _mutation(root, env)
    (site / "dependency-1.0.dist-info").rename(site / "dependency-2.0.dist-info")

    again = _mutation(root, env)

    assert again["cache_hits"] == 0
