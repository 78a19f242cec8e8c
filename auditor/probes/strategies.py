"""Hypothesis strategies from what is known of a parameter: its type hint, the values the
suite passed (their types, their elements' types), values whose construction fails."""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import os
import typing
from collections.abc import Collection
from typing import Any

from hypothesis import strategies as st

from auditor.probes import decimals
from auditor.probes.hangs import CallTimeout, alarm, guarded_call, in_forked_probe


def items_of(sample: Any) -> list[Any]:
    """Up to five items of a collection (a dict's keys). None of an iterator: taking
    them would use up the value the tests passed, and one may never end (`count(0)`)."""
    if not isinstance(sample, Collection):
        return []
    try:
        return list(itertools.islice(sample, 5))
    except Exception:
        return []


def like(kind: type, samples: list[Any]) -> st.SearchStrategy[Any]:
    """Values of `kind`; for lists, tuples and sets, with elements of the types seen in
    the samples (a list of str stays a list of str)."""
    if kind in (list, tuple, set, frozenset):
        elements = sorted(
            {type(item) for sample in samples for item in sample}, key=lambda k: k.__qualname__
        )
        if elements:
            inner = st.one_of([tolerant(st.from_type(element)) for element in elements])
            return st.lists(inner, max_size=8).map(kind)
    return tolerant(st.from_type(kind))


BUILD_SECONDS = 0.1
"""CPU time building one value may take (CPU time: the same values whatever the load): a
constructor that walks what it is given (`OneOf(choices=IPv6Network(...))` joins every
address) would hold up the search."""


def _bounded() -> contextlib.AbstractContextManager[None]:
    """The bound on building a value, in forked probes: elsewhere Hypothesis's first draw
    does its own one-time work (it reads the constants of every loaded module), which
    would pass for a slow value."""
    return alarm(BUILD_SECONDS, cpu=True) if in_forked_probe() else contextlib.nullcontext()


def tolerant(
    strategy: st.SearchStrategy[Any], fallback: list[Any] | None = None
) -> st.SearchStrategy[Any]:
    """`strategy`, where a value whose construction raises (validation in `__init__` or
    `__post_init__`) is replaced by one of the `fallback` values the tests used, or
    rejected when there are none (rejections are slow: a class that refuses most
    generated values would eat the probe's budget). One that takes longer than
    `BUILD_SECONDS` to build is rejected. `strategy` is resolved here: wrapped
    unresolved, a type Hypothesis cannot build would reject every draw, and the function
    would pass for probed on no input at all."""
    validate(strategy)

    @st.composite
    def drawn(draw: st.DrawFn) -> Any:
        from hypothesis import reject

        try:
            with guarded_call(BUILD_SECONDS) as make:
                if not make:
                    reject()  # building it hung inside C in an earlier run
                with _bounded():
                    return draw(strategy)
        except CallTimeout:
            reject()
        except Exception:
            if fallback:
                return draw(st.sampled_from(fallback))
            reject()

    return drawn()


MAX_ITEMS = 256
"""Items in a network or a range the probes generate."""


def register_types() -> None:
    """The probe process's own strategies for a few standard types, registered before
    any strategy is built."""
    bound_sizes()
    withhold_environment()
    decimals.register()


def withhold_environment() -> None:
    """Hypothesis draws `os.environ` itself for an abstract mapping, sized or iterable
    argument (and for `object`): a finding or witness would print the environment, API
    keys and tokens with it, into reports that are published, and a function that
    writes into its argument would change the process's environment. A plain dict of
    text stands in for it."""
    st.register_type_strategy(type(os.environ), st.dictionaries(st.text(), st.text()))


def bound_sizes() -> None:
    """Hypothesis builds a few standard types at any size: an `IPv4Network('0.0.0.0/0')`
    holds four billion addresses, `range(0, 3121844)` three million numbers. They are
    most of what `from_type(Iterable)` draws (240 of 300 values), and code that walks
    what it is given (`OneOf(choices=...)` joins every item) takes seconds or forever
    over them: every such call is a hang that costs the call timeout. The probe process
    registers them again at `MAX_ITEMS` at most."""
    for network, bits in ((ipaddress.IPv4Network, 32), (ipaddress.IPv6Network, 128)):
        fewest = bits - (MAX_ITEMS.bit_length() - 1)  # the prefix of a MAX_ITEMS network
        parts = st.tuples(st.integers(0, 2**bits - 1), st.integers(fewest, bits))
        st.register_type_strategy(network, parts.map(lambda p, n=network: n(p, strict=False)))
    ends = st.integers(-MAX_ITEMS // 2, MAX_ITEMS // 2)
    st.register_type_strategy(
        range,
        st.one_of(
            st.builds(range, st.integers(0, MAX_ITEMS)),
            st.builds(range, ends, ends),
            st.builds(range, ends, ends, st.integers(-8, 8).filter(bool)),
        ),
    )


def validate(strategy: st.SearchStrategy[Any]) -> None:
    """Resolve a strategy now (`from_type` is lazy: a type it cannot build fails here,
    not in the middle of a probe)."""
    strategy.validate()


class Anything:
    """What the probes read `Any` as: Hypothesis refuses to resolve `Any`, or to have a
    strategy registered for it. Plain data, one level deep: `from_type(object)` draws
    file objects and bound methods that no test could write down, and nesting deeper
    doubles the cost of an input."""


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary()
st.register_type_strategy(
    Anything,
    _SCALARS | st.lists(_SCALARS, max_size=4) | st.dictionaries(st.text(), _SCALARS, max_size=4),
)


def for_hypothesis(hint: Any) -> Any:
    """`hint` with `Any` read as `Anything`, at any depth (`dict[str, Any]`)."""
    if hint is Any:
        return Anything
    arguments = typing.get_args(hint)
    replaced = tuple(
        [for_hypothesis(item) for item in argument]
        if isinstance(argument, list)
        else for_hypothesis(argument)
        for argument in arguments
    )
    if replaced == arguments:
        return hint
    try:
        return typing.get_origin(hint)[replaced]
    except TypeError:
        return hint  # left as it is: resolving it fails, and the tests' values stand in


def concrete_types(hint: Any) -> list[type]:
    """The classes a hint names, for `isinstance`: none for `Any` (a class since Python
    3.11, which `isinstance` refuses)."""
    if hint is typing.Any:
        return []
    origin = typing.get_origin(hint)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        kinds: list[type] = []
        for arg in typing.get_args(hint):
            kinds += concrete_types(arg)
        return kinds
    if origin is not None:
        return [origin] if isinstance(origin, type) else []
    if isinstance(hint, type) and hint is not type(None):
        return [hint]
    return []


def allows_none(hint: Any) -> bool:
    return type(None) in typing.get_args(hint)


def type_text(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__qualname__
    return str(hint).replace("typing.", "")
