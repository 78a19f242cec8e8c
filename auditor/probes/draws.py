"""A function's inputs for the witness searches, drawn straight from its strategy.

A witness search needs a few hundred distinct inputs and keeps every one of them.
Hypothesis's `find` is built to look for one input that satisfies a condition: the tree
of everything it tried, the mutations of earlier inputs and its per-call bookkeeping
cost one to three times the drawing itself, and were about half of a fixture's probe
stage. Here each input is drawn on its own from one seeded random source: the same
inputs every run, the simplest first, without repeats; a run for fewer inputs gives the
first ones of a run for more.

There is no public API for drawing outside a test, so this uses two of Hypothesis's
internals (`ConjectureData`, `BuildContext`); where they are not as known here (a
Hypothesis before 6.134, or one that changed them), `find` makes the inputs as before.
"""

from __future__ import annotations

import contextlib
import functools
import random
from typing import Any

from hypothesis import find
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, StopTest, Unsatisfiable, UnsatisfiedAssumption

from auditor.probes.search import search_settings

SEED = 0
MAX_CHOICES = 8 * 1024
"""Choices one input may take, as in Hypothesis's engine: a larger one is not kept."""
MISSES = 100
"""Draws in a row that give nothing new after which there is nothing more to draw."""


def drawn(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """Up to `count` distinct inputs of `strategy`, the simplest first.

    Drawing stops after `MISSES` draws in a row gave nothing new (the strategy has fewer
    distinct inputs, or rejects nearly all), or after ten draws per input asked for."""
    if not internals_known():
        return _found(strategy, count)
    source = random.Random(SEED)
    inputs: list[Any] = []
    seen: set[tuple[Any, ...]] = set()
    attempts = misses = 0
    while len(inputs) < count and misses < MISSES and attempts < 10 * count:
        data = _simplest() if attempts == 0 else _random_data(source)
        attempts += 1
        drawn_input = _draw(strategy, data)
        key = None if drawn_input is _NOTHING else _key(drawn_input[0], data)
        if key is None or key in seen:
            misses += 1
            continue
        seen.add(key)
        inputs.append(drawn_input[0])
        misses = 0
    return inputs


def _key(value: Any, data: Any) -> tuple[Any, ...]:
    """What tells two inputs apart: their type and repr (a filtered strategy draws the
    same value through other choices), else the choices that made it."""
    try:
        return (type(value), repr(value))
    except Exception:
        return tuple(data.choices)


_NOTHING = object()


def _draw(strategy: st.SearchStrategy[Any], data: Any) -> Any:
    """(input,) or `_NOTHING` where the strategy rejected the draw or the input took
    more choices than `MAX_CHOICES`."""
    from hypothesis.control import BuildContext

    try:
        with BuildContext(data, wrapped_test=_no_test):
            return (data.draw(strategy),)
    except (UnsatisfiedAssumption, StopTest):
        return _NOTHING


def _no_test() -> None:
    """What `BuildContext` names as the test its data is drawn for: there is none."""


def _simplest() -> Any:
    from hypothesis.internal.conjecture.choice import ChoiceTemplate
    from hypothesis.internal.conjecture.data import ConjectureData

    return ConjectureData.for_choices((ChoiceTemplate("simplest", count=None),))


def _random_data(source: random.Random) -> Any:
    from hypothesis.internal.conjecture.data import ConjectureData

    return ConjectureData(random=source, max_choices=MAX_CHOICES)


@functools.cache
def internals_known() -> bool:
    """Whether this Hypothesis has the internals `drawn` uses, as it uses them."""
    try:
        data = _random_data(random.Random(SEED))
        _draw(st.booleans(), data)
        _draw(st.booleans(), _simplest())
        return bool(tuple(data.choices))
    except Exception:  # another Hypothesis, other internals: `find` works there
        return False


def _found(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """The inputs through `find`, for a Hypothesis whose internals are not known."""
    inputs: list[Any] = []

    def keep(example: Any) -> bool:
        inputs.append(example)
        return False

    with contextlib.suppress(NoSuchExample, Unsatisfiable):
        find(strategy, keep, settings=search_settings(count, shrink=False))
    return inputs
