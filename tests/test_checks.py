"""Assertion evidence: what each check caught, and the survivors it held for."""

from __future__ import annotations

from auditor.evidence.checks import assertion_evidence
from auditor.report import Kill
from tests.test_kill_attribution import mutant

TEST_FILE = """\
def test_total():
    value = 2
    assert value == 2
    assert value > 0


def test_other():
    assert True
"""


def test_a_kill_is_credited_to_the_line_of_the_check_that_failed(tmp_path):
    (tmp_path / "t.py").write_text(TEST_FILE)
    killed = mutant(1, "Killed", "assertion").model_copy(
        update={
            "killed_by": ["t.py::test_total"],
            "kills": [Kill(test="t.py::test_total", kind="assertion", line=3)],
        }
    )
    (check,) = assertion_evidence([killed], tmp_path, ["t.py"])
    assert (check.line, check.test, check.caught, check.held) == (3, "test_total", 1, 0)


def test_every_check_of_a_test_that_ran_on_a_survivor_held_for_it(tmp_path):
    (tmp_path / "t.py").write_text(TEST_FILE)
    survivor = mutant(2, "Survived").model_copy(update={"covered_by": ["t.py::test_total"]})
    found = assertion_evidence([survivor], tmp_path, ["t.py"])
    assert [(c.line, c.held, c.held_ids) for c in found] == [
        (3, 1, [survivor.id]),
        (4, 1, [survivor.id]),
    ]


def test_a_kill_without_a_failing_check_credits_no_check(tmp_path):
    (tmp_path / "t.py").write_text(TEST_FILE)
    crashed = mutant(3, "Killed", "error").model_copy(update={"killed_by": ["t.py::test_total"]})
    assert assertion_evidence([crashed], tmp_path, ["t.py"]) == []


def test_an_edited_test_file_is_read_again_in_the_same_process(tmp_path):
    """The warm agent session audits again in one process: checks are kept by content."""
    (tmp_path / "t.py").write_text(TEST_FILE)
    survivor = mutant(2, "Survived").model_copy(update={"covered_by": ["t.py::test_total"]})
    assertion_evidence([survivor], tmp_path, ["t.py"])
    (tmp_path / "t.py").write_text(TEST_FILE.replace("    assert value > 0\n", ""))
    found = assertion_evidence([survivor], tmp_path, ["t.py"])
    assert [c.line for c in found] == [3]
