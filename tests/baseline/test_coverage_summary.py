"""The baseline's file and function coverage, from real coverage.py data, and the files a
later summary takes from an earlier one instead of analysing them again."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.baseline.coverage_data import BaselineCoverage, KnownFiles

CALC = "def double(x):\n    if x > 0:\n        return x * 2\n    return 0\n"
TEXT = "def shout(s):\n    return s.upper()\n\n\ndef whisper(s):\n    return s.lower()\n"
TESTS = (
    "from calc import double\nfrom text import shout\n\n\n"
    "def test_double():\n    assert double(2) == 4\n\n\n"
    "def test_shout():\n    assert shout('a') == 'A'\n"
)


@pytest.fixture
def measured(tmp_path: Path) -> tuple[Path, Path]:
    """A project run under `coverage run --branch` by hand: its root and data file."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "calc.py").write_text(CALC)
    (root / "src" / "text.py").write_text(TEXT)
    (root / "tests" / "test_it.py").write_text(TESTS)
    data_file = tmp_path / "by-hand.sqlite"
    run = [sys.executable, "-m", "coverage", "run", "--branch", "--source", "src"]
    subprocess.run(
        [*run, f"--data-file={data_file}", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env={"PYTHONPATH": "src", "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
    )
    return root, data_file


def _summary(root: Path, data_file: Path, **options):
    return BaselineCoverage(data_file, root).summary([], [str(root / "src")], **options)


def test_the_totals_are_coverage_pys_own(measured):
    root, data_file = measured
    out = root.parent / "coverage.json"
    subprocess.run(
        [sys.executable, "-m", "coverage", "json", f"--data-file={data_file}", "-o", str(out)],
        cwd=root,
        check=True,
        capture_output=True,
    )
    expected = json.loads(out.read_text())["totals"]

    section, _ = _summary(root, data_file)

    assert section.totals.statements == expected["num_statements"] == 8
    assert section.totals.covered_lines == expected["covered_lines"] == 6
    assert section.totals.branches == expected["num_branches"] == 2
    assert section.totals.covered_branches == expected["covered_branches"] == 1
    assert section.totals.line_percent == 75.0


def test_a_file_of_the_same_content_and_arcs_is_taken_from_the_earlier_summary(measured):
    root, data_file = measured
    earlier, keys = _summary(root, data_file)
    marked = [file.model_copy(update={"missing_lines": [99]}) for file in earlier.files]

    section, again = _summary(root, data_file, known=KnownFiles(marked, keys))

    assert again == keys
    assert [file.missing_lines for file in section.files] == [[99], [99]]


def test_a_file_whose_content_changed_is_analysed_again(measured):
    root, data_file = measured
    earlier, keys = _summary(root, data_file)
    marked = [file.model_copy(update={"missing_lines": [99]}) for file in earlier.files]
    (root / "src" / "text.py").write_text(TEXT + "# a comment\n")

    section, _ = _summary(root, data_file, known=KnownFiles(marked, keys))

    missing = {file.path: file.missing_lines for file in section.files}
    assert missing == {"src/calc.py": [99], "src/text.py": [6]}


def test_a_file_that_ran_other_arcs_is_analysed_again(measured):
    root, data_file = measured
    earlier, keys = _summary(root, data_file)
    marked = [file.model_copy(update={"missing_lines": [99]}) for file in earlier.files]
    whisper_ran = {"src/text.py": [(-5, 6), (6, -5)]}

    section, _ = _summary(root, data_file, kept=[whisper_ran], known=KnownFiles(marked, keys))

    missing = {file.path: file.missing_lines for file in section.files}
    assert missing == {"src/calc.py": [99], "src/text.py": []}
    assert section.totals.covered_lines == 7


def test_the_earlier_summary_and_a_fresh_one_agree_file_by_file(measured):
    root, data_file = measured
    earlier, keys = _summary(root, data_file)
    (root / "src" / "calc.py").write_text(CALC + "\n")

    reused, _ = _summary(root, data_file, known=KnownFiles(earlier.files, keys))
    fresh, _ = _summary(root, data_file)

    assert reused == fresh
