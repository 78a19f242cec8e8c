"""The function bodies a set of tests ran, as part of the key of their verdicts."""

from __future__ import annotations

from pathlib import Path

from auditor.mutation.ran_code import RanCode, edited

SOURCE = """\
LIMIT = 3


def f(x):
    return x + 1


def g(x):
    return x * LIMIT
"""


def _ran(root: Path) -> RanCode:
    """`test_f` ran `f` (its first line, 5), `test_g` ran `g` (line 9)."""
    index = {"m.py": {5: {"t.py::test_f"}, 9: {"t.py::test_g"}}}
    return RanCode(root, [index], ["m.py"])


def test_an_edited_body_is_another_body_in_the_same_process(tmp_path):
    """The warm agent session plans again in one process: bodies are kept by content."""
    (tmp_path / "m.py").write_text(SOURCE)
    before = _ran(tmp_path)
    (tmp_path / "m.py").write_text(SOURCE.replace("x * LIMIT", "LIMIT * x"))
    after = _ran(tmp_path)
    tests = ["t.py::test_f", "t.py::test_g"]
    assert edited(before.of(tests), after.of(tests)) == ["m.py::g"]
    assert before.outside == after.outside


def test_code_outside_the_bodies_changes_what_every_verdict_depends_on(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    before = _ran(tmp_path)
    (tmp_path / "m.py").write_text(SOURCE.replace("LIMIT = 3", "LIMIT = 4"))
    after = _ran(tmp_path)
    assert before.outside != after.outside
    assert edited(before.of(["t.py::test_g"]), after.of(["t.py::test_g"])) == []


def test_only_the_bodies_a_set_of_tests_ran_are_its_code(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    assert [name for name, _ in _ran(tmp_path).of(["t.py::test_f"])] == ["m.py::f"]
