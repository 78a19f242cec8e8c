"""A `Decimal` hint draws the inputs Hypothesis's `decimals()` draws, through a strategy
that builds none per input."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import strategies as st

from auditor.probes import decimals
from auditor.probes.draws import drawn_with_choices


def _inputs(strategy: st.SearchStrategy) -> list[tuple[str, tuple]]:
    return [(repr(value), choices) for value, choices in drawn_with_choices(strategy, 300)]


def test_the_decimals_drawn_are_hypothesiss_own_with_the_same_choices():
    assert _inputs(decimals.decimals()) == _inputs(st.decimals())


def test_the_specials_come_as_hypothesis_gives_them():
    specials = {value for value, _ in _inputs(decimals.decimals()) if not value[9].isdigit()}
    assert {"Decimal('Infinity')", "Decimal('-Infinity')", "Decimal('NaN')"} <= specials


REGISTERED = """
from decimal import Decimal
from hypothesis import strategies as st
from auditor.probes import decimals
from auditor.probes.draws import drawn

decimals.register()
resolved = st.from_type(Decimal)
print(repr(resolved) == repr(decimals.decimals()))
print(list(map(repr, drawn(resolved, 300))) == list(map(repr, drawn(st.decimals(), 300))))
"""


def test_once_registered_a_decimal_hint_draws_through_it():
    # In a process of its own: a registration stays for the rest of the process.
    result = subprocess.run(
        [sys.executable, "-c", REGISTERED], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.split() == ["True", "True"], result.stderr
