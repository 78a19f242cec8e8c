"""A search's inputs are drawn straight from the strategy: the same every run, the
simplest first, none twice, and a run for fewer gives the first of a run for more. The
input a search wanted is shrunk to a minimal one that it still wants."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.strategies._internal.strategies import OneOfStrategy

from auditor.probes import draws
from auditor.probes.draws import MISSES, Drawn, drawn, first, satisfying

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


def test_a_union_drawn_branch_first_gives_the_inputs_hypothesis_gives(
    monkeypatch: pytest.MonkeyPatch,
):
    unions = st.one_of(
        st.none(),
        st.integers() | st.text(),
        st.lists(st.booleans() | st.floats() | st.nothing()),
        st.decimals(),
    )
    by_hypothesis = [repr(value) for value in drawn(unions, 300)]
    monkeypatch.setattr(OneOfStrategy, "do_draw", draws.draw_a_branch)

    assert [repr(value) for value in drawn(unions, 300)] == by_hypothesis


def test_a_search_gives_the_smallest_input_it_wants():
    assert first(Drawn(st.integers(), 300), lambda n: n >= 1000) == (1000,)


def test_a_search_shrinks_every_part_of_the_input():
    found = first(Drawn(PAIRS, 300), lambda pair: pair[0] > 5 and len(pair[2]) > 2)

    assert found == ((6, "", [False, False, False]),)


def test_a_search_shrinks_to_the_same_input_every_time():
    # Stuck, the shrinker tries its changes in a random order: here it ends on
    # [101, '000', '000'] or [101, '000000'] depending on that order.
    numbers_and_texts = st.lists(st.one_of(st.integers(), st.text()))

    def wanted(items: list[int | str]) -> bool:
        numbers = sum(item for item in items if isinstance(item, int))
        return numbers > 100 and sum(len(item) for item in items if isinstance(item, str)) > 5

    found = {repr(first(Drawn(numbers_and_texts, 300), wanted)) for _ in range(10)}

    assert len(found) == 1


def test_a_search_among_few_inputs_gives_the_smallest_it_wants():
    # The engine ends its run once it has tried all three, before its shrinker takes
    # the last one it tried.
    assert first(Drawn(st.sampled_from("abc"), 300), lambda letter: letter > "a") == ("b",)


def test_a_search_that_wants_no_input_asks_about_each_once_and_finds_none():
    asked = []

    assert first(Drawn(st.integers(), 300), lambda n: asked.append(n) and False) is None
    assert len(asked) == 300 and len(set(asked)) == 300


def test_a_search_stops_drawing_at_the_first_input_it_wants():
    asked = []

    first(Drawn(st.integers(0, 10**6), 300), lambda n: asked.append(n) or n > 10)

    # The simplest input, 0, is not wanted; the next drawn is, and the rest is shrinking
    # it: no input the shrinker tries is larger than the one it started from.
    assert asked[0] == 0 and asked[1] > 10
    assert all(n <= asked[1] for n in asked[2:])


def test_an_input_wanted_once_and_not_again_is_given_as_it_was_found():
    # A call that hung once may return on the next: the shrinker has nothing to start from.
    answers = iter([False, True])

    found = first(Drawn(st.integers(0, 10**6), 300), lambda n: next(answers, False))

    assert found == (drawn(st.integers(0, 10**6), 2)[1],)


def test_inputs_drawn_once_serve_every_search_that_goes_through_them(
    monkeypatch: pytest.MonkeyPatch,
):
    made = []
    monkeypatch.setattr(draws, "_random_data", _counting(draws._random_data, made))
    inputs = Drawn(PAIRS, 50)

    first_pass = list(inputs)
    drawn_for_it = len(made)

    assert list(inputs) == first_pass and len(made) == drawn_for_it
    assert [value for value, _ in first_pass] == drawn(PAIRS, 50)


def test_each_input_given_is_the_smallest_the_condition_wants_at_that_moment():
    assert _first_three_given() == [10, 11, 12]


def test_without_the_internals_hypothesis_s_engine_gives_each_input(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(draws, "internals_known", lambda: False)

    assert _first_three_given() == [10, 11, 12]


def _first_three_given() -> list[int]:
    """What a search that wants an integer of 10 or more it has not been given yet gives."""
    given: list[int] = []
    for n in satisfying(Drawn(st.integers(0, 10**6), 300), lambda n: n >= 10 and n not in given):
        given.append(n)
        if len(given) == 3:
            break
    return given


def test_without_the_internals_hypothesis_s_engine_finds_the_smallest_input(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(draws, "internals_known", lambda: False)

    assert first(Drawn(st.integers(), 300), lambda n: n >= 1000) == (1000,)
    assert first(Drawn(st.integers(), 300), lambda n: False) is None


def _counting(make, made: list):
    def counted(source):
        made.append(source)
        return make(source)

    return counted
