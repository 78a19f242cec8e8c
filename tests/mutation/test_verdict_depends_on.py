"""A cached verdict holds only while what its tests ran is the same: the code they ran
besides the mutant, the helpers beside them, the installed distributions."""

import json
import os
import shutil
from dataclasses import dataclass
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


@dataclass(frozen=True)
class OtherModule:
    """`calc.py` under test with a second module `name`, edited from `before` to
    `after`; the test passes on both, and `calc.f`'s `x * ... -> x / ...` survives
    only the first."""

    code: str
    tests: str
    name: str
    before: str
    after: str


CALLED = OtherModule(
    code="from other import g\n\n\ndef f(x):\n    return g(x) * x\n",
    tests="from calc import f\nfrom other import g\n\n\ndef test_f():\n"
    "    assert f(3) == g(3) * 3\n",
    name="other.py",
    before="def g(x):\n    return 0\n",
    after="def g(x):\n    return 1\n",
)
IMPORTED = OtherModule(
    code="from constants import SCALE\n\n\ndef f(x):\n    return x * SCALE\n",
    tests="from calc import f\nfrom constants import SCALE\n\n\ndef test_f():\n"
    "    assert f(3) == 3 * SCALE\n",
    name="constants.py",
    before="SCALE = 1\n",
    after="SCALE = 2\n",
)


@pytest.mark.parametrize(
    "other", [CALLED, IMPORTED], ids=["a function the tests call", "a module run at import only"]
)
def test_an_edited_module_the_tests_run_judges_the_mutants_again(tmp_path, other):
    root = one_module_project(tmp_path / "calc", "calc", other.code, {"test_calc.py": other.tests})
    (root / other.name).write_text(other.before)
    (root / "pyproject.toml").write_text(
        (root / "pyproject.toml").read_text()
        + f'\n[tool.audit]\nsrc = ["calc.py", "{other.name}"]\n'
    )
    divided = "calc.py::f::arithmetic.swap@1:11#0"
    before = _verdicts(_mutation(root))
    (root / other.name).write_text(other.after)

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
