"""A function's inputs for the probes' searches, drawn straight from its strategy, and
the shrinking of the one a search wanted.

Hypothesis's `find` keeps a tree of everything it tried, mutates earlier inputs and does
per-call bookkeeping that costs one to three times the drawing itself: about half of a
fixture's probe stage, and most of a search that finds nothing. Here each input is drawn
on its own from one seeded random source: the same inputs every run, the simplest first,
without repeats; a run for fewer inputs gives the first ones of a run for more. Only an
input a search wanted goes to Hypothesis's shrinker, which makes it minimal.

There is no public API for drawing or shrinking outside a test, so this uses some of
Hypothesis's internals (`ConjectureData`, `BuildContext`, `ConjectureRunner`); where
they are not as known here (a Hypothesis before 6.134, or one that changed them), `find`
makes the inputs as before.
"""

from __future__ import annotations

import contextlib
import functools
import random
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, StopTest, Unsatisfiable, UnsatisfiedAssumption

SEED = 0
MAX_CHOICES = 8 * 1024
"""Choices one input may take, as in Hypothesis's engine: a larger one is not kept."""
MISSES = 100
"""Draws in a row that give nothing new after which there is nothing more to draw."""


def draw_branches_directly() -> None:
    """Makes every `one_of` of this process draw its branch's index, then the branch.

    Hypothesis's `one_of` builds, validates and filters a new `sampled_from` of its
    branches at every draw, to leave out the branches empty at that moment (only a
    stateful test's bundles can be): much of what drawing an input costs, since
    `decimals()`, `text()`, an `Optional` hint and every parameter with explicit values
    are such unions. With no branch empty, that draw is one integer below the
    number of branches, as here: the same choices, the same inputs. The probe process
    calls this once; where Hypothesis's internals are not as known, nothing changes."""
    try:
        from hypothesis.strategies._internal.strategies import OneOfStrategy
    except ImportError:
        return
    if hasattr(OneOfStrategy, "element_strategies"):
        OneOfStrategy.do_draw = draw_a_branch  # type: ignore[method-assign,assignment]


def draw_a_branch(one_of: Any, data: Any) -> Any:
    """`OneOfStrategy.do_draw` without a new strategy per draw."""
    branches = one_of.element_strategies
    return data.draw(branches[data.draw_integer(0, len(branches) - 1)])


def search_settings(examples: int, shrink: bool) -> settings:
    """Deterministic (derandomized, no example database in the user's tree), no
    deadline (the call timeout bounds a call), no health checks (a probe is not a test)."""
    phases = (Phase.explicit, Phase.generate) + ((Phase.shrink,) if shrink else ())
    return settings(
        database=None,
        derandomize=True,
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=phases,
    )


Choices = tuple[Any, ...]
"""What Hypothesis drew to make an input (integers, floats, strings, bytes, booleans)."""


def drawn(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """Up to `count` distinct inputs of `strategy`, the simplest first."""
    return [value for value, _ in drawn_with_choices(strategy, count)]


def drawn_with_choices(
    strategy: st.SearchStrategy[Any], count: int
) -> list[tuple[Any, Choices | None]]:
    """`drawn`, each input with the choices that made it (None where Hypothesis's
    internals are not as known: `find` made it)."""
    if not internals_known():
        return [(value, None) for value in _found(strategy, count)]
    return list(draws(strategy, count))


def redrawn(strategy: st.SearchStrategy[Any], choices: Choices) -> tuple[Any] | None:
    """(input,): the input `choices` made, made again; None where they make none."""
    from hypothesis.internal.conjecture.data import ConjectureData

    made = _draw(strategy, ConjectureData.for_choices(choices))
    return None if made is _NOTHING else made


def draws(strategy: st.SearchStrategy[Any], count: int) -> Iterator[tuple[Any, Choices]]:
    """Up to `count` distinct inputs of `strategy`, each with the choices that made it,
    the simplest first; one at a time, so that a search can stop at the one it wants.

    Drawing stops after `MISSES` draws in a row gave nothing new (the strategy has fewer
    distinct inputs, or rejects nearly all), or after ten draws per input asked for."""
    source = random.Random(SEED)
    seen: set[tuple[Any, ...]] = set()
    made = attempts = misses = 0
    while made < count and misses < MISSES and attempts < 10 * count:
        data = _simplest() if attempts == 0 else _random_data(source)
        attempts += 1
        drawn_input = _draw(strategy, data)
        key = None if drawn_input is _NOTHING else _key(drawn_input[0], data)
        if key is None or key in seen:
            misses += 1
            continue
        seen.add(key)
        made += 1
        misses = 0
        yield drawn_input[0], tuple(data.choices)


class Drawn:
    """The inputs `draws` gives, kept as they come: the searches through one function
    go through the same inputs, drawn once."""

    def __init__(self, strategy: st.SearchStrategy[Any], count: int) -> None:
        self.strategy = strategy
        self.count = count
        self._made: list[tuple[Any, Choices]] = []
        self._source = draws(strategy, count)

    def __iter__(self) -> Iterator[tuple[Any, Choices]]:
        place = 0
        while place < len(self._made) or self._draw_one():
            yield self._made[place]
            place += 1

    def _draw_one(self) -> bool:
        made = next(self._source, None)
        if made is not None:
            self._made.append(made)
        return made is not None


def satisfying(inputs: Drawn, condition: Callable[[Any], bool]) -> Iterator[Any]:
    """Each input, in order, that satisfies `condition`, shrunk to a minimal one that
    does. `condition` may change once one is given (a crash search wants a crash it has
    not reported yet): the same input is asked about again before the next.

    Without the internals, each is the input `find` gives."""
    if not internals_known():
        yield from _found_each(inputs, condition)
        return
    for value, choices in inputs:
        while condition(value):
            yield shrunk(inputs.strategy, choices, condition, value)


def first(inputs: Drawn, condition: Callable[[Any], bool]) -> tuple[Any] | None:
    """(input,): the first input that satisfies `condition`, shrunk; None where none of
    them does."""
    for found in satisfying(inputs, condition):
        return (found,)
    return None


def shrunk(
    strategy: st.SearchStrategy[Any],
    choices: Choices,
    condition: Callable[[Any], bool],
    value: Any,
) -> Any:
    """The smallest input Hypothesis's shrinker finds that still satisfies `condition`,
    starting from `value`, made by `choices`; `value` itself where it no longer does (a
    call that hung once may return the next time)."""
    from hypothesis.internal.conjecture.data import ConjectureData, Status
    from hypothesis.internal.conjecture.engine import ConjectureRunner, RunIsComplete

    def test(data: Any) -> None:
        drawn_input = _draw(strategy, data)
        if drawn_input is not _NOTHING and condition(drawn_input[0]):
            data.mark_interesting(_origin())

    # Seeded: the shrinker tries some changes in a random order, and an unseeded runner
    # takes that order from the process's random state (another shrunk input each run).
    runner = ConjectureRunner(
        test, settings=search_settings(1, shrink=True), random=random.Random(SEED)
    )
    # The engine ends a run by raising: at its limit on shrinks, or once the strategy
    # has nothing left to draw; what it kept so far stands.
    with contextlib.suppress(RunIsComplete):
        runner.cached_test_function(choices)
    if not _kept(runner):
        return value
    (start,) = _kept(runner).values()
    shrinker = runner.new_shrinker(start, lambda data: data.status == Status.INTERESTING)
    with contextlib.suppress(RunIsComplete):
        shrinker.shrink()
    # The engine keeps the smallest it saw, where the shrinker may not have taken it yet.
    (best,) = _kept(runner).values()
    smallest = _draw(strategy, ConjectureData.for_choices(best.choices))
    return value if smallest is _NOTHING else smallest[0]


def _kept(runner: Any) -> dict[Any, Any]:
    """The inputs the engine kept as interesting, by origin (an attribute later versions
    renamed)."""
    kept = getattr(runner, "interesting_test_cases", None)
    return runner.interesting_examples if kept is None else kept


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


class _Wanted(Exception):
    """What the shrinker is told made an input interesting: the search wanted it."""


@functools.cache
def _origin() -> Any:
    from hypothesis.internal.escalation import InterestingOrigin

    return InterestingOrigin.from_exception(_Wanted())


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
    """Whether this Hypothesis has the internals `drawn` and `first` use, as they use
    them: a draw records its choices, and the shrinker takes 1,000 down to 10."""
    try:
        data = _random_data(random.Random(SEED))
        _draw(st.booleans(), data)
        _draw(st.booleans(), _simplest())
        return (
            bool(tuple(data.choices))
            and shrunk(st.integers(), (1000,), lambda n: n >= 10, 1000) == 10
        )
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


def _found_each(inputs: Drawn, condition: Callable[[Any], bool]) -> Iterator[Any]:
    """`satisfying` through `find`, for a Hypothesis whose internals are not known: each
    search starts from the beginning, and the condition tells the next from the last."""
    while True:
        satisfied: list[Any] = []

        def kept(value: Any, satisfied: list[Any] = satisfied) -> bool:
            if condition(value):
                satisfied[:] = [value]
                return True
            return False

        try:
            yield find(inputs.strategy, kept, settings=search_settings(inputs.count, shrink=True))
        except (NoSuchExample, Unsatisfiable):
            return
        except Exception:  # Flaky: the input behaved differently on a rerun (a hang, memory)
            if not satisfied:
                return
            yield satisfied[0]
