"""`Decimal` inputs as Hypothesis draws them for a `Decimal` hint, without building a
strategy for every input drawn.

Hypothesis's `decimals()` draws a fraction through `integers(min_value=1).flatmap(...)`,
which builds and validates a new `builds(Fraction, ...)` strategy at every draw: most
of what drawing a `Decimal` costs. The strategy here draws the same choices in the same
order (the denominator, then the numerator, or one of the special values), so it makes
the same inputs; `tests/probes/test_decimals.py` checks that against the Hypothesis
installed."""

from __future__ import annotations

import math
from decimal import Context, Decimal
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

SPECIAL = tuple(map(Decimal, ("Infinity", "-Infinity", "NaN", "-NaN", "sNaN", "-sNaN")))
"""What `decimals()` adds without bounds, in its order."""


@st.composite
def _fractions(draw: Any) -> Fraction:
    """`fractions()` without bounds: a denominator of one or more, then a numerator."""
    denominator = draw(st.integers(min_value=1))
    return Fraction(draw(st.integers()), denominator)


def _exactly(fraction: Fraction) -> Decimal:
    """The fraction as a decimal, with the precision `decimals()` gives it."""
    numerator, denominator = fraction.numerator, fraction.denominator
    precision = math.ceil(math.log10(abs(numerator) or 1) + math.log10(denominator)) + 1
    return Context(prec=precision or 1).divide(Decimal(numerator), denominator)


def decimals() -> st.SearchStrategy[Decimal]:
    """What `st.from_type(Decimal)` draws, drawn without a strategy per input."""
    return _fractions().map(_exactly) | st.sampled_from(SPECIAL)


def register() -> None:
    """Makes every `Decimal` hint of this process draw through `decimals` here."""
    st.register_type_strategy(Decimal, decimals())
