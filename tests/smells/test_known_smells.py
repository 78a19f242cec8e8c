"""A test file's smells are kept between runs, keyed by its content and its conftests."""

import sqlite3
from pathlib import Path

from auditor.mutation.cache import ResultCache
from auditor.smells.analyzer import analyze

ASSERTION_FREE = "from shop import total\n\n\ndef test_total():\n    total([1])\n"
CHECKED = "from shop import total\n\n\ndef test_total():\n    assert total([1]) == 1\n"


def _project(tmp_path: Path, test_source: str) -> Path:
    (tmp_path / "tests").mkdir(exist_ok=True)
    test_file = tmp_path / "tests" / "test_shop.py"
    test_file.write_text(test_source)
    return test_file


def _smells(tmp_path: Path, test_file: Path, disabled: tuple[str, ...] = ()) -> list[str]:
    store = ResultCache(tmp_path)
    try:
        section = analyze([test_file], tmp_path, {"shop"}, (), disabled, store)
    finally:
        store.close()
    return [f"{smell.code} {smell.test}: {smell.message}" for smell in section.findings]


def _rows(tmp_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(tmp_path / ".audit" / "cache.sqlite") as connection:
        return connection.execute("select key, value from smells").fetchall()


def _mark_kept_rows(tmp_path: Path) -> None:
    """Change what the kept rows say (and their checksums), so a run shows it read them."""
    from auditor.mutation.cache import _checksum

    with sqlite3.connect(tmp_path / ".audit" / "cache.sqlite") as connection:
        for key, value in connection.execute("select key, value from smells").fetchall():
            marked = value.replace("test_total", "test_kept")
            connection.execute(
                "update smells set value = ?, checksum = ? where key = ?",
                (marked, _checksum(marked), key),
            )


def test_a_test_file_analysed_before_is_not_analysed_again(tmp_path):
    test_file = _project(tmp_path, ASSERTION_FREE)
    first = _smells(tmp_path, test_file)
    assert any(line.startswith("AT001") for line in first)
    _mark_kept_rows(tmp_path)
    again = _smells(tmp_path, test_file)
    assert again == [line.replace("test_total", "test_kept") for line in first]
    assert again != first


def test_an_edited_test_file_is_analysed_again_and_its_older_row_dropped(tmp_path):
    test_file = _project(tmp_path, ASSERTION_FREE)
    _smells(tmp_path, test_file)
    test_file.write_text(CHECKED)
    assert not any(line.startswith("AT001") for line in _smells(tmp_path, test_file))
    assert len(_rows(tmp_path)) == 1


def test_a_changed_conftest_analyses_the_test_files_below_it_again(tmp_path):
    test_file = _project(tmp_path, ASSERTION_FREE)
    _smells(tmp_path, test_file)
    _mark_kept_rows(tmp_path)
    (tmp_path / "tests" / "conftest.py").write_text("import pytest\n")
    assert all("test_kept" not in line for line in _smells(tmp_path, test_file))


def test_disabled_rules_leave_out_kept_smells_too(tmp_path):
    test_file = _project(tmp_path, ASSERTION_FREE)
    assert any(line.startswith("AT001") for line in _smells(tmp_path, test_file))
    kept = _smells(tmp_path, test_file, disabled=("AT001",))
    assert not any(line.startswith("AT001") for line in kept)
