"""A witness search's inputs are drawn straight from the strategy: the same every run,
the simplest first, none twice, and a run for fewer gives the first of a run for more."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from auditor.probes import draws
from auditor.probes.draws import MISSES, drawn

PAIRS = st.tuples(st.integers(), st.text(), st.lists(st.booleans()))


def test_the_installed_hypothesis_is_drawn_from_without_its_engine():
    # The fallback to `find` is for other Hypothesis versions: the one audit is tested
    # with must take the fast path, or every probe stage is twice as slow.
    assert draws.internals_known()


def test_the_same_inputs_come_out_every_run():
    assert drawn(PAIRS, 200) == drawn(PAIRS, 200)


def test_as_many_inputs_as_asked_come_out_where_there_are_that_many():
    assert len(drawn(PAIRS, 300)) == 300


def test_the_first_input_is_the_simplest():
    assert drawn(PAIRS, 5)[0] == (0, "", [])


def test_no_input_comes_twice():
    inputs = drawn(st.integers(0, 20), 300)

    assert sorted(inputs) == list(range(21))


def test_a_filtered_strategy_gives_each_value_once():
    # A filter draws again inside one input: the same value comes from other choices.
    assert sorted(drawn(st.integers(0, 10).filter(lambda n: n > 7), 50)) == [8, 9, 10]


def test_a_run_for_fewer_inputs_gives_the_first_of_a_run_for_more():
    assert drawn(PAIRS, 50) == drawn(PAIRS, 300)[:50]


def test_a_strategy_that_rejects_every_draw_gives_no_input():
    assert drawn(st.integers().filter(lambda n: False), 300) == []


def test_drawing_stops_once_nothing_new_comes(monkeypatch: pytest.MonkeyPatch):
    made = []
    monkeypatch.setattr(draws, "_random_data", _counting(draws._random_data, made))

    assert sorted(drawn(st.booleans(), 300)) == [False, True]
    # The few draws that find `True`, then `MISSES` that give nothing new: far fewer
    # than the 3,000 (ten per input asked for) that would be made without the rule.
    assert MISSES <= len(made) <= MISSES + 10


def test_an_input_larger_than_hypothesis_allows_is_left_out():
    rows = st.lists(st.integers(), min_size=100)

    assert drawn(st.lists(rows, min_size=100), 1) == []


def test_without_the_internals_hypothesis_s_engine_makes_the_inputs(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(draws, "internals_known", lambda: False)

    inputs = drawn(st.integers(0, 20), 300)

    assert sorted(inputs) == list(range(21))
    assert inputs[0] == 0


def _counting(make, made: list):
    def counted(source):
        made.append(source)
        return make(source)

    return counted
