"""The infection check traces a hundred inputs at a time, each hundred in a forked child
of its own, and stops once the first have decided a survivor's status. The original's
states are traced once for every survivor on the same lines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from auditor.containment import wire
from auditor.mutation.protocol import Job
from auditor.probes import witness
from auditor.probes.child import _run_forked
from auditor.probes.protocol import SurvivorSpec
from auditor.probes.witness import (
    ENOUGH_INPUTS,
    Infections,
    OriginalStates,
    Trial,
    _infection_check,
)
from tests.probes.test_witness_inputs import _spec


def _changing(per_hundred: int) -> witness.MutantCheck:
    """A check on which the mutant changes the state on `per_hundred` of every 100."""

    def check(chunk: list[Trial], before: list[str | None], seconds: float) -> Infections:
        return Infections(inputs=per_hundred * len(chunk) // 100, traced=len(chunk))

    return check


def _original(chunk: list[Trial], seconds: float) -> list[str | None]:
    return [f"state {trial.example['n']}" for trial in chunk]


def _trials(count: int) -> list[Trial]:
    return [Trial(subject=None, example={"n": n}, outcome=None) for n in range(count)]  # type: ignore[arg-type]


def test_no_change_on_the_first_hundred_inputs_ends_the_check():
    assert _infection_check(_original, _changing(0), _trials(250), _spec(), _run_forked) == (0, 100)


def test_enough_changes_on_the_first_hundred_inputs_end_the_check():
    infected, traced = _infection_check(
        _original, _changing(40), _trials(250), _spec(), _run_forked
    )
    assert (infected, traced) == (40, 100)
    assert infected >= ENOUGH_INPUTS


def test_too_few_changes_to_decide_trace_every_input():
    assert _infection_check(_original, _changing(3), _trials(250), _spec(), _run_forked) == (7, 250)


def test_a_check_whose_child_ends_without_an_answer_keeps_what_came_before():
    def dies_after_the_first(chunk: list[Trial], before: list[str | None], seconds: float):
        if chunk[0].example["n"] >= 100:
            raise SystemExit(3)
        return Infections(inputs=4, traced=len(chunk))

    assert _infection_check(
        _original, dies_after_the_first, _trials(250), _spec(), _run_forked
    ) == (4, 100)


def test_a_check_whose_original_has_no_states_ends_without_tracing_the_mutant():
    traced_mutant = []

    def check(chunk: list[Trial], before: list[str | None], seconds: float) -> Infections:
        traced_mutant.append(chunk)
        return Infections(inputs=0, traced=len(chunk))

    assert _infection_check(lambda chunk, s: None, check, _trials(250), _spec(), _run_forked) == (
        0,
        0,
    )
    assert traced_mutant == []


def test_the_chunks_share_half_the_time_budget_a_quarter_for_each_version(monkeypatch):
    # A clock that moves only when a version spends what it was given.
    now = [0.0]
    given = []
    monkeypatch.setattr(witness.time, "monotonic", lambda: now[0])

    def original(chunk: list[Trial], seconds: float) -> list[str | None]:
        given.append(("original", seconds))
        now[0] += seconds
        return _original(chunk, seconds)

    def spends_it_all(chunk: list[Trial], before: list[str | None], seconds: float):
        given.append(("mutant", seconds))
        now[0] += seconds
        return Infections(inputs=3, traced=len(chunk))

    def in_process(work: Callable[[], object], budget: float) -> tuple[str | None, str]:
        return wire.encode(work()), ""

    assert _infection_check(original, spends_it_all, _trials(250), _spec(), in_process) == (3, 100)
    assert given == [("original", 2.5), ("mutant", 2.5)]  # of 10 s: the first chunk used it up


def _survivor(first_line: int) -> SurvivorSpec:
    job = Job(id=f"m{first_line}", path="swap", file="f.py", module_name="f", tests=[], timeout=1)
    return SurvivorSpec(job, "", targets=[], first_line=first_line, last_line=first_line)


def test_survivors_on_the_same_lines_share_the_original_states_on_the_same_inputs():
    forks = []

    def counting(work: Callable[[], object], budget: float) -> tuple[str | None, str]:
        forks.append(budget)
        return wire.encode(witness.Traced(states=["s"] * 3)), ""

    originals = OriginalStates(_spec(), counting)
    trials = _trials(3)
    first = originals.of(_survivor(7), trials, 1.0)
    again = originals.of(replace(_survivor(7), description="another mutant"), trials[:], 1.0)
    assert (first, again, len(forks)) == (["s"] * 3, ["s"] * 3, 1)
    originals.of(_survivor(8), trials, 1.0)
    originals.of(_survivor(7), trials[:2], 1.0)
    assert len(forks) == 3  # other lines, other inputs: traced again
