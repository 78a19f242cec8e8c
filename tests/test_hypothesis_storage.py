"""Each child's private Hypothesis folder starts with Hypothesis's Unicode tables."""

from __future__ import annotations

from pathlib import Path

from auditor.hypothesis_storage import storage_folder, uses_hypothesis
from auditor.isolation import choose


def test_a_child_s_storage_starts_with_the_unicode_tables_hypothesis_would_build(tmp_path):
    storage = storage_folder(tmp_path / "tmp", choose("auto"))
    tables = [path.name for path in storage.glob("unicode_data/*/*.json.gz")]
    assert "charmap.json.gz" in tables
    assert [name for name in tables if name.startswith("codec-") and "utf-8" in name]


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
