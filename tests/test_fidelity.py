"""The audit must not change what it measures (fixtures/isbnkit: tests inside the package,
each test passing under plain pytest)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from auditor.config import AuditConfig
from auditor.pipeline import run_audit
from auditor.report import Report
from tests.conftest import copy_fixture
from tests.test_isolation import needs_os_sandbox

pytestmark = pytest.mark.slow

SHARED_FOLDER = Path("/tmp/isbnkit-titles")
"""Where `test_files.py` writes, as real tests write `/tmp/<name>`."""


def _audit(tmp_path_factory: pytest.TempPathFactory, config: AuditConfig) -> Report:
    shutil.rmtree(SHARED_FOLDER, ignore_errors=True)
    root = tmp_path_factory.mktemp("isbnkit") / "isbnkit"
    copy_fixture("isbnkit", root)
    return run_audit(["isbnkit/tests"], config, root)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Report:
    return _audit(tmp_path_factory, AuditConfig(probes=False))


def _outcomes(report: Report) -> dict[str, str]:
    return {test.nodeid.split("/")[-1]: test.outcome for test in report.baseline.tests}


def test_the_package_that_holds_the_tests_is_the_code_under_test(report):
    assert report.project.source_paths == ["isbnkit"]
    assert all(not file.startswith("isbnkit/tests") for file in report.project.source_files)


def test_test_modules_inside_the_package_are_not_in_the_coverage_totals(report):
    measured = [file.path for file in report.coverage.files]
    assert measured == [
        "isbnkit/__init__.py",
        "isbnkit/checker.py",
        "isbnkit/groups.py",
        "isbnkit/notify.py",
        "isbnkit/paths.py",
        "isbnkit/store.py",
    ]
    assert report.coverage.totals.statements == sum(
        file.counts.statements for file in report.coverage.files
    )


def test_tests_that_mock_os_path_pass_as_they_do_under_pytest(report):
    outcomes = _outcomes(report)
    assert outcomes["test_paths.py::test_a_relative_name_is_joined_to_the_base"] == "passed"
    assert outcomes["test_paths.py::test_an_absolute_name_is_kept"] == "passed"


def test_a_test_that_writes_under_tmp_passes(report):
    outcome = _outcomes(report)["test_files.py::test_a_saved_title_reads_back_with_one_newline"]
    assert outcome == "passed"


@needs_os_sandbox
def test_under_the_os_sandbox_the_machine_s_tmp_stays_untouched(report):
    assert report.sandbox.level == "os"
    assert not SHARED_FOLDER.exists()


def test_a_test_that_writes_under_tmp_passes_with_the_guard_alone(tmp_path_factory):
    guarded = _audit(tmp_path_factory, AuditConfig(probes=False, mutation=False, sandbox="guard"))
    outcome = _outcomes(guarded)["test_files.py::test_a_saved_title_reads_back_with_one_newline"]
    assert outcome == "passed"
    shutil.rmtree(SHARED_FOLDER, ignore_errors=True)


def test_a_hypothesis_test_that_draws_text_passes(report):
    outcome = _outcomes(report)["test_text.py::test_text_without_thirteen_digits_is_no_isbn"]
    assert outcome == "passed"


def test_an_assertion_free_call_of_a_checker_class_is_assertion_free(report):
    flagged = {
        (smell.file, smell.test) for smell in report.smells.findings if smell.code == "AT001"
    }
    assert flagged == {("isbnkit/tests/test_checker.py", "test_an_isbn_13_is_checked")}


def test_a_cached_property_named_like_a_test_gets_no_finding(report):
    about_it = [
        smell for smell in report.smells.findings if smell.test == "TestChecker.test_checker"
    ]
    assert about_it == []


def test_the_package_s_modules_are_mutated_and_its_tests_are_not(report):
    files = {mutant.file for mutant in report.mutation.mutants}
    assert {"isbnkit/checker.py", "isbnkit/paths.py", "isbnkit/store.py"} <= files
    assert not any(file.startswith("isbnkit/tests/") for file in files)


def test_a_module_level_data_table_gets_the_mutants_of_a_sample_of_its_entries(report):
    (table,) = report.mutation.data_tables
    assert (table.file, table.entries, table.mutated_entries) == ("isbnkit/groups.py", 30, 10)
    assert table.left_out > 0


def test_every_entry_of_a_data_table_is_mutated_when_asked(report, tmp_path_factory):
    config = AuditConfig(probes=False, mutate_data="all", mutators=["constants"])
    every = _audit(tmp_path_factory, config)
    in_table = [
        m for m in every.mutation.mutants if m.file == "isbnkit/groups.py" and 4 <= m.line <= 33
    ]
    assert every.mutation.data_tables == []
    assert {m.line for m in in_table} == set(range(4, 34))


def test_every_output_says_the_table_was_sampled(report):
    from rich.console import Console

    from reports import markdown, terminal

    note = "data table: 10 of 30 entries mutated in 1 module-level table"
    console = Console(width=400, record=True)
    terminal.render(report, console)
    assert note in markdown.render(report)
    assert note in console.export_text()
