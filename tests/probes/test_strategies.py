"""Strategies built from what is known of a parameter: values whose building takes too
long are left out, and the values the tests passed are not used up."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping

import pytest
from hypothesis import find
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from auditor.probes import child, strategies
from auditor.probes.child import _run_forked
from auditor.probes.draws import search_settings
from auditor.probes.strategies import items_of, tolerant

LONGEST_WALK = 10**8
"""Steps Walks takes at most (seconds of CPU time in a Python loop)."""


class Walks:
    """A constructor that walks what it is given, as `OneOf(choices)` joins them."""

    def __init__(self, steps: int) -> None:
        for _ in range(min(abs(steps), LONGEST_WALK)):
            pass
        self.steps = steps


def _built_steps() -> list[int]:
    """In a forked probe: the steps of the Walks a search built."""
    built: list[int] = []

    def keep(walks: Walks) -> bool:
        built.append(walks.steps)
        return False

    strategy = tolerant(st.builds(Walks, st.integers()))
    with contextlib.suppress(NoSuchExample):
        find(strategy, keep, settings=search_settings(30, shrink=False))
    return built


@pytest.fixture
def unlimited(monkeypatch):
    """The memory limits are a probe process's, set from its spec: here, out of the way
    (a test worker's address space alone can pass the default limit)."""
    monkeypatch.setattr(child, "_memory_limit_mb", 1 << 20)
    monkeypatch.setattr(child, "_growth_limit_mb", 4096)


def test_a_value_that_takes_long_to_build_is_left_out(unlimited):
    text, why = _run_forked(_built_steps, budget=60)
    built = json.loads(text or "[]")
    assert len(built) >= 10, why
    # 0.1 s of CPU time walks a few million steps; Hypothesis tries 2**63 and the like.
    assert max(abs(steps) for steps in built) < LONGEST_WALK // 10


def test_an_iterator_gives_no_items_and_keeps_its_own():
    values = iter([1, 2, 3])
    assert items_of(values) == []
    assert list(values) == [1, 2, 3]


def test_a_collection_gives_its_first_five_items():
    assert items_of(range(10**18)) == [0, 1, 2, 3, 4]
    assert items_of({"a": 1, "b": 2}) == ["a", "b"]


def _mappings_drawn() -> list[str]:
    """In a forked probe: what a search over `Mapping` arguments drew, by type."""
    strategies.register_types()
    drawn: list[str] = []

    def keep(value: object) -> bool:
        drawn.append("the environment" if value is os.environ else type(value).__name__)
        return False

    with contextlib.suppress(NoSuchExample):
        find(st.from_type(Mapping), keep, settings=search_settings(300, shrink=False))
    return drawn


def test_the_process_environment_is_never_an_input(unlimited):
    # Hypothesis resolves abstract mappings to `os.environ` too: a finding's input
    # would print the environment, API keys and tokens with it, into the report.
    text, why = _run_forked(_mappings_drawn, budget=60)
    drawn = json.loads(text or "[]")
    assert len(drawn) >= 50, why
    assert "the environment" not in drawn
