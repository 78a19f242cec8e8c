"""Projects set up for mutmut: its settings read when there is no [tool.audit], and a
real mutmut 3 run's verdicts imported into an audit report."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from auditor.report import Report
from tests.conftest import copy_fixture, run_audit

pytestmark = pytest.mark.slow

MUTMUT_SETTINGS = """
[tool.mutmut]
source_paths = ["shop/"]
pytest_add_cli_args_test_selection = ["tests_shallow/"]
also_copy = ["tests_shallow"]
"""


def _without_audit_settings(root: Path, mutmut: str) -> None:
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text().replace("[tool.audit]\ntest_timeout = 10\n", "")
    pyproject.write_text(text.replace('testpaths = ["tests_strong"]', "") + mutmut)


def test_mutmuts_settings_say_what_to_mutate_and_test_and_audit_says_so(project_copy):
    root = project_copy("shop")
    _without_audit_settings(
        root,
        '\n[tool.mutmut]\npaths_to_mutate = ["shop/"]\ntests_dir = ["tests_shallow/"]\n'
        'do_not_mutate = ["shop/inventory.py"]\n',
    )
    result = run_audit("-q", "--no-probes", cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "audit: no [tool.audit]; read pyproject.toml [tool.mutmut]: src = ['shop/']; "
        "tests = ['tests_shallow/']; do_not_mutate = ['shop/inventory.py']"
    )
    report = Report.read(root / ".audit" / "report.json")
    assert report.project.test_paths == ["tests_shallow"]
    assert {m.file for m in report.mutation.mutants} == {"shop/cart.py", "shop/pricing.py"}


def test_setup_cfg_mutmut_section_is_read_too(project_copy):
    root = project_copy("shop")
    _without_audit_settings(root, "")
    (root / "setup.cfg").write_text(
        "[mutmut]\npaths_to_mutate = shop/\ntests_dir = tests_shallow/\n"
        "do_not_mutate = shop/inventory.py, shop/pricing.py\n"
    )
    result = run_audit("-q", "--no-probes", cwd=root)
    assert result.returncode == 0, result.stderr
    assert "read setup.cfg [mutmut]" in result.stderr
    report = Report.read(root / ".audit" / "report.json")
    assert {m.file for m in report.mutation.mutants} == {"shop/cart.py"}


@pytest.fixture(scope="module")
def after_mutmut(tmp_path_factory) -> Path:
    """The shop fixture after a real `mutmut run` (mutmut 3, 2 workers)."""

    root = tmp_path_factory.mktemp("mutmut") / "shop"
    copy_fixture("shop", root)
    _without_audit_settings(root, MUTMUT_SETTINGS)
    done = subprocess.run(
        [sys.executable, "-m", "mutmut", "run", "--max-children", "2"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return root


def _mutmut_results(root: Path) -> dict[str, str]:
    """`mutmut results --all`, as mutmut prints it: name -> status."""
    done = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(re.findall(r"^\s+(\S+): (.+)$", done.stdout, re.MULTILINE))


MUTMUT_TO_AUDIT = {
    "killed": "Killed",
    "segfault": "Killed",
    "survived": "Survived",
    "no tests": "NoCoverage",
    "timeout": "Timeout",
    "suspicious": "RuntimeError",
    "caught by type check": "CompileError",
    "skipped": "Ignored",
}
"""docs/engine.md, Verdicts: what each of mutmut's statuses becomes."""


def test_imported_verdicts_are_mutmuts_own(after_mutmut):
    result = run_audit("import", "mutmut", "tests_shallow", "-q", "--no-probes", cwd=after_mutmut)
    assert result.returncode == 0, result.stderr
    report = Report.read(after_mutmut / ".audit" / "report.json")
    theirs = Counter(MUTMUT_TO_AUDIT[status] for status in _mutmut_results(after_mutmut).values())
    ours = Counter(m.status for m in report.mutation.mutants)
    assert ours == theirs and sum(ours.values()) > 100
    assert {m.path for m in report.mutation.mutants} == {"imported"}
    assert report.mutation.scores.assertion_share is None


def test_an_imported_mutant_points_at_the_line_it_changes(after_mutmut):
    result = run_audit("import", "mutmut", "tests_shallow", "-q", "--no-probes", cwd=after_mutmut)
    assert result.returncode == 0, result.stderr
    report = Report.read(after_mutmut / ".audit" / "report.json")
    assert report.mutation.mutants
    for mutant in report.mutation.mutants:
        source = (after_mutmut / mutant.file).read_text().splitlines()
        assert source[mutant.line - 1].strip() == mutant.original.splitlines()[0].strip()


def test_the_gate_and_reports_work_on_imported_verdicts(after_mutmut):
    result = run_audit(
        "import",
        "mutmut",
        "tests_shallow",
        "-q",
        "--no-probes",
        "--min-mutation-score",
        "90",
        "--html",
        "r.html",
        cwd=after_mutmut,
    )
    assert result.returncode == 1
    report = Report.read(after_mutmut / ".audit" / "report.json")
    [condition] = report.gate.conditions
    assert not condition.passed and condition.actual == report.mutation.targeted.scores.score
    assert "mutmut_1)" in (after_mutmut / "r.html").read_text()


def test_importing_without_a_mutmut_run_is_a_one_line_error(project_copy):
    root = project_copy("shop")
    result = run_audit("import", "mutmut", "tests_shallow", "-q", cwd=root)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"audit: import: no mutmut results in {root / 'mutants'}: run `mutmut run` there first"
    ]
