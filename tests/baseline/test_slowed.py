from pathlib import Path

from auditor.baseline import protocol
from auditor.baseline.runner import ChildOutcome
from auditor.baseline.slowed import shares, untraced_seconds


def _outcome(*results: tuple[str, str, float]) -> ChildOutcome:
    return ChildOutcome(
        results=[
            protocol.Result(
                nodeid=nodeid, file="t.py", outcome=outcome, duration=duration, message=""
            )
            for nodeid, outcome, duration in results
        ],
        collection_errors=[],
        removed=[],
        data_file=Path("unused"),
        restarts=0,
    )


def test_a_timeout_that_passed_untraced_is_measured_again_with_its_untraced_time():
    measured = _outcome(("slow", "timeout", 10.0), ("quick", "passed", 0.1))
    rerun = _outcome(("slow", "passed", 2.5), ("quick", "passed", 0.1))
    assert untraced_seconds(measured, [rerun]) == {"slow": 2.5}


def test_a_timeout_that_does_not_pass_in_every_rerun_is_not_measured_again():
    measured = _outcome(("slow", "timeout", 10.0), ("hangs", "timeout", 10.0))
    first = _outcome(("slow", "passed", 2.5), ("hangs", "timeout", 10.0))
    second = _outcome(("slow", "failed", 0.2))
    assert untraced_seconds(measured, [first, second, None]) == {}


def test_without_a_rerun_no_timeout_is_measured_again():
    measured = _outcome(("slow", "timeout", 10.0))
    assert untraced_seconds(measured, [None]) == {}


def test_the_tests_measured_again_are_shared_out_by_untraced_time():
    untraced = {"a": 6.0, "b": 4.0, "c": 3.0, "d": 2.0}
    assert shares(untraced, 2) == [{"a": 6.0, "d": 2.0}, {"b": 4.0, "c": 3.0}]
    assert shares({"a": 1.0}, 2) == [{"a": 1.0}]
