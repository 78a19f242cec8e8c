"""The edge-value catalogue: per type, the classes of input that break code most often,
and which of them a given value belongs to (to tell the classes a suite tried)."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

Edge = tuple[str, object]

_NUMBER_EDGES: dict[type, list[Edge]] = {
    int: [("zero", 0), ("negative", -1), ("one", 1), ("large", 2**63)],
    float: [
        ("zero", 0.0),
        ("negative zero", -0.0),
        ("negative", -1.0),
        ("one", 1.0),
        ("large", 1e308),
        ("NaN", math.nan),
        ("infinity", math.inf),
        ("negative infinity", -math.inf),
    ],
    Decimal: [
        ("zero", Decimal("0")),
        ("negative", Decimal("-1")),
        ("one", Decimal("1")),
        ("large", Decimal("1E+30")),
        ("tiny", Decimal("0.001")),
        ("NaN", Decimal("NaN")),
        ("infinity", Decimal("Infinity")),
    ],
    Fraction: [("zero", Fraction(0)), ("negative", Fraction(-1)), ("one", Fraction(1))],
}
_TEXT_EDGES: dict[type, list[Edge]] = {
    str: [
        ("empty", ""),
        ("whitespace", " \t\n"),
        ("non-ASCII", "ñandú Straße ☃"),
        ("single character", "a"),
    ],
    bytes: [("empty", b""), ("non-ASCII", b"\xff\xfe"), ("single byte", b"a")],
}
_COLLECTIONS: tuple[type, ...] = (list, tuple, set, frozenset, dict)


def edge_values(kind: type, element: Callable[[], list[object]] | None = None) -> list[Edge]:
    """The catalogue's values for a type. Collections get empty, and, given sample
    elements, single-element, duplicates and unsorted."""
    if kind is bool:
        return []
    for base, edges in (*_NUMBER_EDGES.items(), *_TEXT_EDGES.items()):
        if issubclass(kind, base):
            return list(edges)
    if kind in _COLLECTIONS:
        edges: list[Edge] = [("empty", kind())]
        samples = element() if element else []
        if kind is not dict and samples:
            first = samples[0]
            edges.append(("single element", kind([first])))
            if kind in (list, tuple):
                edges.append(("duplicates", kind([first, first])))
                ordered = _sortable(samples)
                if len(ordered) >= 2:
                    edges.append(("unsorted", kind([ordered[-1], ordered[0]])))
        return edges
    return []


def _sortable(values: list[object]) -> list[object]:
    distinct: list[object] = []
    for value in values:
        if value not in distinct:
            distinct.append(value)
    try:
        return sorted(distinct)  # type: ignore[type-var]
    except TypeError:
        return []


def classes_of(value: object) -> set[str]:
    """The edge classes a value belongs to."""
    if isinstance(value, bool) or value is None:
        return {"None"} if value is None else set()
    found: set[str] = set()
    if isinstance(value, (int, float, Decimal, Fraction)):
        try:
            if value != value:
                return {"NaN"}
            if value in (math.inf, -math.inf):
                return {"infinity" if value > 0 else "negative infinity"}
            if value == 0:
                found.add("zero")
                if isinstance(value, float) and math.copysign(1, value) < 0:
                    found.add("negative zero")
            elif value < 0:
                found.add("negative")
            elif value == 1:
                found.add("one")
            if abs(value) >= 2**53:
                found.add("large")
            if 0 < abs(value) < 0.01:
                found.add("tiny")
        except (TypeError, ArithmeticError):
            pass
        return found
    if isinstance(value, (str, bytes)):
        if not value:
            return {"empty"}
        if not value.strip():
            found.add("whitespace")
        if isinstance(value, str) and not value.isascii():
            found.add("non-ASCII")
        if isinstance(value, bytes) and any(byte > 127 for byte in value):
            found.add("non-ASCII")
        if len(value) == 1:
            found.add("single character" if isinstance(value, str) else "single byte")
        return found
    if isinstance(value, _COLLECTIONS):
        if not value:
            return {"empty"}
        if len(value) == 1:
            found.add("single element")
        if isinstance(value, (list, tuple)):
            try:
                if len(set(value)) < len(value):
                    found.add("duplicates")
            except TypeError:
                pass
            try:
                if list(value) != sorted(value):
                    found.add("unsorted")
            except TypeError:
                pass
        return found
    return found
