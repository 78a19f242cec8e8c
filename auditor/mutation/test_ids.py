"""Test ids that change from one collection to the next.

A parametrization built at collection time names its cases after values of the moment:
marshmallow's `test_invalid_datetime_deserialization[07:29:44 2026-11-26]` has another
id in every pytest session. The code of such a case is the same each time; what is
stable is its test function and its place among that function's cases."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from typing import Any


def case_function(nodeid: str) -> str:
    """The test function a case belongs to: its node id without the parameter id."""
    return nodeid.split("[", 1)[0]


def cases_by_function(nodeids: Iterable[str]) -> list[tuple[str, int]]:
    """Each test function with its number of cases, sorted: what a set of tests is,
    for a cache key, whatever ids the cases had this time."""
    return sorted(Counter(case_function(nodeid) for nodeid in nodeids).items())


def by_baseline_id(items: Sequence[Any], baseline: Collection[str]) -> dict[str, Any]:
    """Collected pytest items by the ids the baseline gave them (in its order). An id
    this session does not have is matched to a case of the same function that the
    baseline did not have, in collection order, when both have as many; the case is then
    known by the baseline's id only. Otherwise the id stays unmatched."""
    found = {item.nodeid: item for item in items}
    lost: dict[str, list[str]] = defaultdict(list)
    for nodeid in baseline:
        if nodeid not in found:
            lost[case_function(nodeid)].append(nodeid)
    known = set(baseline)
    new: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        if item.nodeid not in known:
            new[case_function(item.nodeid)].append(item)
    for function, nodeids in lost.items():
        cases = new.get(function, [])
        if len(nodeids) == len(cases):
            for nodeid, item in zip(nodeids, cases, strict=True):
                del found[item.nodeid]
                found[nodeid] = item
    return found


class CaseNames:
    """The ids of a session's parametrized cases in a form the next session maps back to
    its own ids: the test function and the case's place among its cases in the baseline.
    A cached verdict is stored in that form (its key counts each function's cases, so a
    hit has as many)."""

    def __init__(self, baseline: Iterable[str]) -> None:
        self._cases: dict[str, list[str]] = defaultdict(list)
        for nodeid in baseline:
            if case_function(nodeid) != nodeid:
                self._cases[case_function(nodeid)].append(nodeid)
        self._places = {
            nodeid: place for cases in self._cases.values() for place, nodeid in enumerate(cases)
        }

    def portable(self, nodeid: str) -> str:
        place = self._places.get(nodeid)
        return nodeid if place is None else f"{case_function(nodeid)}{_PLACE}{place}]"

    def local(self, name: str) -> str:
        """The id in this session of a `portable` name (other names as they are)."""
        function, marker, place = name.partition(_PLACE)
        cases = self._cases.get(function, [])
        if marker and place[:-1].isdigit() and int(place[:-1]) < len(cases):
            return cases[int(place[:-1])]
        return name


_PLACE = "[\x00#"
"""Begins a case's place: no parameter id holds a NUL."""
