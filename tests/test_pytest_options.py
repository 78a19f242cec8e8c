"""audit measures alone: a project's pytest-cov options (`--cov` in `addopts` or in
PYTEST_ADDOPTS) are set aside in audit's own test processes, with or without pytest-cov
installed, and the report says so; an option of a plugin that is not installed gets
pytest's own message and what to install."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import pytest_cov  # noqa: F401 - a dev extra: the takeover case needs it installed

from auditor.baseline.runner import conftest_import_error, pytest_usage_error
from auditor.discovery.pytest_options import (
    NO_COVERAGE_PLUGIN,
    own_pytest_options,
    without_coverage_options,
)
from tests.conftest import copy_fixture, report_differences, run_audit


def test_pytest_covs_options_go_and_the_others_stay():
    kept, removed = without_coverage_options("--cov=pkg --cov-branch -ra --cov-report=xml -x")
    assert kept == "-ra -x"
    assert removed == ["--cov=pkg", "--cov-branch", "--cov-report=xml"]


def test_a_separate_value_goes_with_its_option():
    kept, removed = without_coverage_options("--cov src --cov-report term-missing tests")
    assert (kept, removed) == ("tests", ["--cov src", "--cov-report term-missing"])


def test_a_bare_cov_takes_no_option_as_its_value():
    assert without_coverage_options("--cov -q") == ("-q", ["--cov"])


def test_without_coverage_options_the_project_keeps_its_addopts():
    options = own_pytest_options({"addopts": "-ra --strict-markers"}, {})
    assert options.args == NO_COVERAGE_PLUGIN
    assert (options.environment, options.set_aside) == ({}, ())


def test_options_set_aside_are_named_with_where_they_came_from():
    options = own_pytest_options({"addopts": "--cov=pkg -ra"}, {"PYTEST_ADDOPTS": "--cov-branch"})
    assert options.args == (*NO_COVERAGE_PLUGIN, "-o", "addopts=-ra")
    assert options.environment == {"PYTEST_ADDOPTS": ""}
    assert options.set_aside == ("addopts: --cov=pkg", "PYTEST_ADDOPTS: --cov-branch")


def test_an_unknown_option_gets_pytests_message_and_the_plugin_to_install():
    output = (
        "ERROR: usage: __main__.py [options] [file_or_dir] [file_or_dir] [...]\n"
        "__main__.py: error: unrecognized arguments: --timeout=5 -n 2\n"
        "  inifile: /p/pyproject.toml\n"
    )
    assert pytest_usage_error(output) == (
        "pytest refused the project's options: unrecognized arguments: --timeout=5 -n 2; "
        "install pytest-timeout and pytest-xdist in this environment"
    )


def test_a_conftest_that_cannot_import_is_named_with_pytests_reason():
    output = (
        "ImportError while loading conftest '/p/tests/conftest.py'.\n"
        "tests/conftest.py:5: in <module>\n"
        "    from tests.base import Blog\n"
        "tests/base.py:10: in <module>\n"
        "    import simplejson\n"
        "E   ModuleNotFoundError: No module named 'simplejson'\n"
    )
    assert conftest_import_error(output, Path("/p")) == (
        "cannot import tests/conftest.py: ModuleNotFoundError: No module named 'simplejson';"
        " install what the tests need here"
    )


def test_any_other_failure_is_no_usage_error():
    assert pytest_usage_error("Traceback ...\nImportError: no module named x\n") is None


def _audit(root: Path, env: dict[str, str] | None = None) -> dict:
    out = root.parent / "r.json"
    done = run_audit("tests", "-q", "--no-probes", "--json", str(out), cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def measured_alone(tmp_path_factory) -> dict:
    """The fixture audited as it is, and with its `--cov` options taken out of its
    configuration: what audit measures must be the same."""
    base = tmp_path_factory.mktemp("covplugin")
    as_shipped = copy_fixture("covplugin", base / "shipped" / "covplugin")
    plain = copy_fixture("covplugin", base / "plain" / "covplugin")
    pyproject = plain / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(
        text.replace("--cov=covplugin --cov-branch --cov-report=term-missing ", "")
    )
    assert pyproject.read_text() != text
    return {"shipped": _audit(as_shipped), "plain": _audit(plain)}


@pytest.mark.slow
def test_with_pytest_cov_installed_audit_measures_as_without_its_options(measured_alone):
    shipped, plain = measured_alone["shipped"], measured_alone["plain"]
    assert shipped["coverage"]["totals"]["line_percent"] > 0
    assert shipped["mutation"]["scores"]["counts"]["killed"] > 0
    differences = report_differences({**shipped, "project": plain["project"]}, plain)
    assert [line for line in differences if "ini_options" not in line] == []


@pytest.mark.slow
def test_the_report_names_each_option_set_aside(measured_alone):
    assert measured_alone["shipped"]["project"]["set_aside"] == [
        "addopts: --cov=covplugin",
        "addopts: --cov-branch",
        "addopts: --cov-report=term-missing",
    ]
    assert measured_alone["plain"]["project"]["set_aside"] == []


@pytest.mark.slow
def test_without_the_plugin_loaded_audit_measures_the_same(measured_alone, tmp_path):
    # PYTEST_DISABLE_PLUGIN_AUTOLOAD: pytest loads no installed plugin, as if pytest-cov
    # were not installed; pytest alone would stop at "unrecognized arguments: --cov=...".
    root = copy_fixture("covplugin", tmp_path / "covplugin")
    report = _audit(root, env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert report_differences(report, measured_alone["shipped"]) == []
