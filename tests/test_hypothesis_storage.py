"""Each child's private Hypothesis folder starts with Hypothesis's Unicode tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.containment import hypothesis_storage
from auditor.containment.hypothesis_storage import storage_folder, uses_hypothesis
from auditor.containment.isolation import choose


@pytest.fixture
def cache_home(tmp_path, monkeypatch) -> Path:
    """A cache folder of the test's own, and no table remembered from earlier calls."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    hypothesis_storage._kept_unicode_table.cache_clear()
    yield tmp_path / "cache"
    hypothesis_storage._kept_unicode_table.cache_clear()


def test_a_child_s_storage_starts_with_the_unicode_tables_hypothesis_would_build(
    tmp_path, cache_home
):
    storage = storage_folder(tmp_path / "tmp", choose("auto"))
    tables = [path.name for path in storage.glob("unicode_data/*/*.json.gz")]
    assert "charmap.json.gz" in tables
    assert [name for name in tables if name.startswith("codec-") and "utf-8" in name]


def test_the_tables_are_built_once_and_then_taken_from_the_user_s_cache(
    tmp_path, cache_home, monkeypatch
):
    storage_folder(tmp_path / "first", choose("auto"))
    kept = list(cache_home.glob("audit/hypothesis-*/unicode_data/*/charmap.json.gz"))
    assert len(kept) == 1

    def not_again(isolation):
        raise AssertionError("built again")

    monkeypatch.setattr(hypothesis_storage, "_built_unicode_table", not_again)
    hypothesis_storage._kept_unicode_table.cache_clear()
    storage = storage_folder(tmp_path / "second", choose("auto"))
    assert (storage / "unicode_data" / kept[0].parent.name / "charmap.json.gz").is_file()


def test_without_a_writable_cache_folder_the_tables_are_built_for_the_run(tmp_path, cache_home):
    cache_home.write_text("a file where the folder would be")
    storage = storage_folder(tmp_path / "tmp", choose("auto"))
    assert [path.name for path in storage.glob("unicode_data/*/charmap.json.gz")]


def test_without_a_home_folder_the_tables_are_built_for_the_run(tmp_path, cache_home, monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("HOME")
    monkeypatch.setattr(Path, "home", _no_home)
    storage = storage_folder(tmp_path / "tmp", choose("auto"))
    assert [path.name for path in storage.glob("unicode_data/*/charmap.json.gz")]


def _no_home() -> Path:
    raise RuntimeError("Could not determine home directory.")


def test_a_suite_that_does_not_use_hypothesis_gets_an_empty_storage(tmp_path):
    storage = storage_folder(tmp_path / "tmp", choose("auto"), wanted=False)
    assert not storage.exists()


def test_a_suite_uses_hypothesis_when_a_test_file_mentions_it(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "test_b.py").write_text("from hypothesis import given\n")
    assert not uses_hypothesis(tmp_path, ["tests"])
    assert uses_hypothesis(tmp_path, ["tests", "other/test_b.py::test_b"])
