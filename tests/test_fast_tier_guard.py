"""The fast tier stays fast: a test not marked `slow` that runs a whole audit fails and
says so, whether it runs the command line or the pipeline in process, itself or through
a fixture."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent

INNER_TESTS = """
import pytest
from tests.conftest import copy_fixture, run_audit
from auditor.config import AuditConfig
from auditor.pipeline import run_audit as audit_in_process

QUICK = ("-q", "--no-mutation", "--no-probes")


def test_fast_on_the_command_line(tmp_path):
    root = copy_fixture("shop", tmp_path / "shop")
    run_audit("tests_shallow", *QUICK, cwd=root)


def test_fast_in_process(tmp_path):
    root = copy_fixture("shop", tmp_path / "shop")
    audit_in_process(["tests_shallow"], AuditConfig(mutation=False, probes=False), root)


@pytest.mark.slow
def test_slow_on_the_command_line(tmp_path):
    root = copy_fixture("shop", tmp_path / "shop")
    done = run_audit("tests_shallow", *QUICK, cwd=root)
    assert done.returncode == 0, done.stderr


def test_fast_asks_for_help(tmp_path):
    assert run_audit("--help", cwd=tmp_path).returncode == 0


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    root = copy_fixture("shop", tmp_path_factory.mktemp("module") / "shop")
    return run_audit("tests_shallow", *QUICK, cwd=root)


def test_fast_through_a_module_fixture(audited):
    pass


@pytest.fixture(scope="session")
def fixture_runs():
    return {}


def test_fast_with_the_shared_audits(fixture_runs):
    pass
"""


@pytest.mark.slow
def test_a_fast_tier_test_that_runs_an_audit_fails(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    pytester.makeconftest(
        "from tests.conftest import (  # noqa: F401\n"
        "    _fast_tier_runs_no_audit, pytest_runtest_setup, pytest_runtest_teardown\n)\n"
    )
    pytester.makeini("[pytest]\nmarkers =\n    slow: an audit\n")
    pytester.makepyfile(test_inner=textwrap.dedent(INNER_TESTS))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=2, failed=2, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*test_fast_on_the_command_line runs a whole audit (`audit *`): mark it slow*",
            "*test_fast_in_process runs a whole audit in process: mark it slow*",
            "*test_fast_through_a_module_fixture runs a whole audit (`audit *`): mark it slow*",
            "*test_fast_with_the_shared_audits uses fixture_runs, whole audits: mark it slow*",
        ]
    )
