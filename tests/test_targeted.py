"""The targeted score: over the modules the audited test files import."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.discovery.project import discover
from auditor.discovery.targeted import targeted_files
from auditor.report import Report
from tests.conftest import FIXTURES, copy_fixture, run_audit


def unitlib(tmp_path: Path, test: str | None = None) -> Path:
    root = tmp_path / "unitlib"
    copy_fixture("unitlib", root)
    if test is not None:
        (root / "tests" / "test_length.py").write_text(test)
    return root


def test_a_module_the_tests_import_from_is_targeted(tmp_path):
    root = unitlib(tmp_path)
    assert targeted_files(discover(["tests"], [], root)) == ("unitlib/length.py",)


def test_an_edited_test_file_is_read_again_in_the_same_process(tmp_path):
    """The warm agent session audits again in one process: what it keeps is keyed by
    content, never by path."""
    root = unitlib(tmp_path)
    assert targeted_files(discover(["tests"], [], root)) == ("unitlib/length.py",)
    (root / "tests" / "test_length.py").write_text("from unitlib import temperature\n")
    assert targeted_files(discover(["tests"], [], root)) == ("unitlib/temperature.py",)


def test_a_name_imported_from_the_package_is_followed_to_the_module_it_comes_from(tmp_path):
    root = unitlib(tmp_path, "from unitlib import to_celsius\n")
    found = targeted_files(discover(["tests"], [], root))
    assert found == ("unitlib/__init__.py", "unitlib/temperature.py")


def test_a_submodule_imported_from_its_package_is_targeted(tmp_path):
    root = unitlib(tmp_path, "from unitlib import temperature\n")
    assert targeted_files(discover(["tests"], [], root)) == ("unitlib/temperature.py",)


def test_relative_imports_of_tests_inside_the_package_are_resolved():
    project = discover(["isbnkit/tests"], [], FIXTURES / "isbnkit")
    found = targeted_files(project)
    assert found and all(file.startswith("isbnkit/") for file in found)
    assert not any("/tests/" in file for file in found)


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> tuple[Report, str]:
    root = unitlib(tmp_path_factory.mktemp("targeted"))
    result = run_audit(
        "tests", "--no-probes", "--json", "r.json", "--min-mutation-score", "80", cwd=root
    )
    return Report.read(root / "r.json"), result.stdout


@pytest.mark.slow
def test_the_report_holds_the_targeted_score_beside_the_whole_one(audited):
    report, _ = audited
    targeted = report.mutation.targeted
    assert targeted.files == ["unitlib/length.py"]
    # temperature.py has no test at all: the whole-scope score is diluted by it
    assert targeted.scores.score > report.mutation.scores.score


@pytest.mark.slow
def test_the_gate_uses_the_targeted_score_and_says_so(audited):
    report, _ = audited
    (condition,) = [c for c in report.gate.conditions if c.name == "min_mutation_score"]
    assert condition.actual == report.mutation.targeted.scores.score
    assert "targeted: the 1 module the tests import" in condition.message


@pytest.mark.slow
def test_the_terminal_names_the_code_under_test_and_the_targeted_score(audited):
    _, stdout = audited
    assert "code under test: unitlib (shipped by the packaging metadata" in stdout
    assert "targeted score (1 module the tests import, gated)" in stdout
