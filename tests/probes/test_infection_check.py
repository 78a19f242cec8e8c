"""The infection check traces a hundred inputs at a time, each hundred in a forked child
of its own, and stops once the first have decided a survivor's status."""

from __future__ import annotations

from collections.abc import Callable

from auditor.containment import wire
from auditor.probes import witness
from auditor.probes.child import _run_forked
from auditor.probes.witness import ENOUGH_INPUTS, Infections, Trial, _infection_check
from tests.probes.test_witness_inputs import _spec


def _changing(per_hundred: int) -> Callable[[list[Trial], float], Infections]:
    """A check on which the mutant changes the state on `per_hundred` of every 100."""

    def check(chunk: list[Trial], seconds: float) -> Infections:
        return Infections(inputs=per_hundred * len(chunk) // 100, traced=len(chunk))

    return check


def _trials(count: int) -> list[Trial]:
    return [Trial(subject=None, example={"n": n}, outcome=None) for n in range(count)]  # type: ignore[arg-type]


def test_no_change_on_the_first_hundred_inputs_ends_the_check():
    assert _infection_check(_changing(0), _trials(250), _spec(), _run_forked) == (0, 100)


def test_enough_changes_on_the_first_hundred_inputs_end_the_check():
    infected, traced = _infection_check(_changing(40), _trials(250), _spec(), _run_forked)
    assert (infected, traced) == (40, 100)
    assert infected >= ENOUGH_INPUTS


def test_too_few_changes_to_decide_trace_every_input():
    assert _infection_check(_changing(3), _trials(250), _spec(), _run_forked) == (7, 250)


def test_a_check_whose_child_ends_without_an_answer_keeps_what_came_before():
    def dies_after_the_first(chunk: list[Trial], seconds: float) -> Infections:
        if chunk[0].example["n"] >= 100:
            raise SystemExit(3)
        return Infections(inputs=4, traced=len(chunk))

    assert _infection_check(dies_after_the_first, _trials(250), _spec(), _run_forked) == (4, 100)


def test_the_chunks_share_half_the_time_budget_a_quarter_for_each_version(monkeypatch):
    # A clock that moves only when the check spends what it was given (both versions).
    now = [0.0]
    given = []
    monkeypatch.setattr(witness.time, "monotonic", lambda: now[0])

    def spends_it_all(chunk: list[Trial], seconds: float) -> Infections:
        given.append(seconds)
        now[0] += 2 * seconds
        return Infections(inputs=3, traced=len(chunk))

    def in_process(work: Callable[[], object], budget: float) -> tuple[str | None, str]:
        return wire.encode(work()), ""

    assert _infection_check(spends_it_all, _trials(250), _spec(), in_process) == (3, 100)
    assert given == [2.5]  # of a 10 s budget: the first chunk used it up
