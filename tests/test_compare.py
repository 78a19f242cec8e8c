"""`audit compare`: test folders for the same code, side by side."""

from __future__ import annotations

import json

import pytest

from tests.conftest import copy_fixture, run_audit


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare") / "shop"
    copy_fixture("shop", root)
    result = run_audit(
        "compare",
        "tests_shallow",
        "tests_strong",
        "--json",
        "c.json",
        "--html",
        "c.html",
        cwd=root,
    )
    assert result.returncode == 0, result.stderr
    return root, result.stdout, json.loads((root / "c.json").read_text())


@pytest.mark.slow
def test_both_suites_are_judged_on_the_same_mutants(compared):
    _, _, comparison = compared
    assert comparison["same_mutants"]
    assert [row["tests_path"] for row in comparison["suites"]] == ["tests_shallow", "tests_strong"]


@pytest.mark.slow
def test_each_suite_shows_what_only_it_kills(compared):
    _, stdout, comparison = compared
    shallow, strong = comparison["suites"]
    assert len(strong["only_it_kills"]) > len(shallow["only_it_kills"])
    assert not set(strong["only_it_kills"]) & set(shallow["only_it_kills"])
    assert "only tests_strong kills:" in stdout


@pytest.mark.slow
def test_the_html_page_holds_the_table(compared):
    root, _, comparison = compared
    page = (root / "c.html").read_text()
    assert '<table id="suites-table">' in page
    assert all(row["tests_path"] in page for row in comparison["suites"])


def test_one_folder_is_not_a_comparison(tmp_path):
    result = run_audit("compare", "tests", cwd=tmp_path)
    assert result.returncode == 2
    assert "at least two" in result.stderr


def test_a_missing_folder_is_an_error_before_any_suite_runs(tmp_path):
    (tmp_path / "tests").mkdir()
    result = run_audit("compare", "tests", "gone", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "audit: discover: test path 'gone' does not exist"
