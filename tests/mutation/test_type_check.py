"""The type-checker pre-filter, with real mypy and ty runs on the shop fixture."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from auditor.report import Report
from tests.conftest import copy_fixture, one_module_project, run_audit

pytestmark = pytest.mark.slow

MYPY = "\n[tool.mypy]\nwarn_unused_ignores = false\n"
SETTINGS = {"mypy": MYPY, "ty": "\n[tool.ty]\n", "pyright": "\n[tool.pyright]\n"}


def _audit(root: Path, *flags: str) -> Report:
    result = run_audit("tests_shallow", "-q", "--no-probes", *flags, cwd=root)
    assert result.returncode == 0, result.stderr
    return Report.read(root / ".audit" / "report.json")


def _checker_errors(root: Path, checker: str, file: str) -> list[str]:
    command = {
        "mypy": ["mypy", "--no-error-summary", "--cache-dir", "/dev/null", file],
        "ty": ["ty", "check", "--output-format", "concise", "--python", sys.executable, file],
        "pyright": ["pyright", "--pythonpath", sys.executable, file],
    }[checker]
    done = subprocess.run(
        [sys.executable, "-m", *command], cwd=root, capture_output=True, text=True
    )
    return [line for line in done.stdout.splitlines() if ": error" in line or " - error" in line]


@pytest.fixture
def typed_shop(project_copy) -> Path:
    root = project_copy("shop")
    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text() + MYPY)
    return root


@pytest.fixture(scope="module")
def audited_with(tmp_path_factory):
    """The shop fixture configured for a checker, and its report: one audit per checker
    for the module (the checks that edit its files put them back)."""
    runs: dict[str, tuple[Path, Report]] = {}

    def audited(checker: str) -> tuple[Path, Report]:
        if checker not in runs:
            root = copy_fixture("shop", tmp_path_factory.mktemp(checker) / "shop")
            pyproject = root / "pyproject.toml"
            pyproject.write_text(pyproject.read_text() + SETTINGS[checker])
            runs[checker] = root, _audit(root)
        return runs[checker]

    return audited


def test_mutants_mypy_rejects_never_run(audited_with):
    _, report = audited_with("mypy")
    summary = report.mutation.type_check
    rejected = [m for m in report.mutation.mutants if m.status_reason.startswith("rejected by")]
    assert summary.checker == "mypy" and summary.rejected == len(rejected) > 0
    assert summary.checked > summary.rejected
    assert all(m.status == "CompileError" and m.path == "none" for m in rejected)
    assert not any(m.killed_by or m.kills or m.duration for m in rejected)
    assert all(m.function for m in rejected)  # function bodies only


def test_the_summary_estimates_what_running_the_rejected_mutants_would_have_cost(audited_with):
    _, report = audited_with("mypy")
    killed = [m.duration for m in report.mutation.mutants if m.status == "Killed"]
    saved = report.mutation.type_check.saved
    rejected = report.mutation.type_check.rejected
    assert 0 < saved <= rejected * max(killed) / report.mutation.jobs


@pytest.mark.parametrize("checker", ["mypy", "ty", "pyright"])
def test_a_rejected_mutant_fails_the_checker_in_place_and_an_accepted_one_does_not(
    audited_with, checker
):
    typed_shop, report = audited_with(checker)
    assert report.mutation.type_check.checker == checker
    before = _checker_errors(typed_shop, checker, "shop/cart.py")

    def with_mutant(mutant) -> list[str]:
        path = typed_shop / mutant.file
        original = path.read_text()
        lines = original.splitlines(keepends=True)
        text = lines[mutant.line - 1]
        assert text[mutant.col :].startswith(mutant.original)
        lines[mutant.line - 1] = (
            text[: mutant.col] + mutant.replacement + text[mutant.col + len(mutant.original) :]
        )
        path.write_text("".join(lines))
        try:
            return _checker_errors(typed_shop, checker, mutant.file)
        finally:
            path.write_text(original)

    single_line = [
        m
        for m in report.mutation.mutants
        if m.file == "shop/cart.py" and m.function and "\n" not in m.original and m.original
    ]
    rejected = [m for m in single_line if m.status == "CompileError"][:3]
    accepted = [m for m in single_line if m.status in ("Killed", "Survived")][:3]
    assert rejected and accepted
    for mutant in rejected:
        assert len(with_mutant(mutant)) > len(before), mutant.id
    for mutant in accepted:
        assert with_mutant(mutant) == before, mutant.id


def test_no_filter_when_the_project_configures_no_checker_or_it_is_off(fixture_runs, typed_shop):
    _, plain, _, _ = fixture_runs["shop", "tests_shallow"]
    assert plain["mutation"]["type_check"] is None
    report = _audit(typed_shop, "--type-check", "off")
    assert report.mutation.type_check is None
    assert not any(m.status_reason.startswith("rejected by") for m in report.mutation.mutants)


def test_a_crashing_type_checker_is_a_one_line_error(typed_shop):
    pyproject = typed_shop / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'plugins = ["no_such_mypy_plugin"]\n')
    result = run_audit("tests_shallow", "-q", "--no-probes", cwd=typed_shop)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("audit: type-check: mypy failed on ")
    assert line.endswith("(--type-check off skips it)")


@pytest.mark.parametrize("checker", ["mypy", "ty"])
def test_a_whole_project_run_type_checks_while_the_baseline_runs(audited_with, checker):
    _, report = audited_with(checker)
    summary = report.mutation.type_check
    assert summary.checked > summary.rejected > 0
    assert summary.cached == summary.checked


def test_a_rerun_of_the_same_sources_checks_nothing_again(audited_with):
    root, first = audited_with("mypy")
    again = _audit(root, "--type-check", "mypy").mutation.type_check
    assert (again.checked, again.rejected, again.cached) == (
        first.mutation.type_check.checked,
        first.mutation.type_check.rejected,
        first.mutation.type_check.checked,
    )


def test_a_shard_checks_its_own_mutants_in_the_stage(typed_shop):
    whole = _audit(typed_shop, "--type-check", "mypy", "--sample", "1").mutation.type_check
    shard = _audit(typed_shop, "--shard", "1/3").mutation.type_check
    assert 0 < shard.checked < whole.checked
    assert shard.cached == shard.checked  # the whole run checked them ahead


def test_a_changed_source_is_checked_again(typed_shop):
    _audit(typed_shop, "--shard", "1/3")
    cart = typed_shop / "shop" / "cart.py"
    cart.write_text(cart.read_text() + "\n\nEXTRA = 1\n")
    summary = _audit(typed_shop, "--shard", "1/3").mutation.type_check
    assert summary.checked > 0
    assert summary.cached == 0


def test_a_method_declaring_typed_attributes_has_its_mutants_run(tmp_path):
    """A mutant of an `__init__` that declares `self.count: int` is checked in a copy
    of the method, which declares the attribute again: mypy's "already defined" there
    is the copy's, not the mutant's (prettytable had its 510 `__init__` mutants
    rejected so)."""
    source = (
        "class Counter:\n"
        "    def __init__(self, start: int) -> None:\n"
        "        self.count: int = start + 1\n"
        "\n"
        "    def value(self) -> int:\n"
        "        return self.count\n"
    )
    tests = (
        "from counter import Counter\n\n\ndef test_value():\n    assert Counter(1).value() == 2\n"
    )
    root = one_module_project(tmp_path, "counter", source, {"test_counter.py": tests})
    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text() + MYPY)
    result = run_audit("tests", "-q", "--no-probes", "--mutators", "arithmetic", cwd=root)
    assert result.returncode == 0, result.stderr
    report = Report.read(root / ".audit" / "report.json")
    in_init = [m for m in report.mutation.mutants if m.function == "Counter.__init__"]
    assert report.mutation.type_check.checker == "mypy"
    assert in_init
    assert {m.status for m in in_init} == {"Killed"}
