"""Test ids that change from one collection to the next.

A parametrization built at collection time names its cases after values of the moment:
marshmallow's `test_invalid_datetime_deserialization[07:29:44 2026-11-26]` has another
id in every pytest session. The code of such a case is the same each time; what is
stable is its test function and its place among that function's cases."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any


def case_function(nodeid: str) -> str:
    """The test function a case belongs to: its node id without the parameter id."""
    return nodeid.split("[", 1)[0]


def cases_by_function(
    nodeids: Iterable[str], function_of: Callable[[str], str] = case_function
) -> list[tuple[str, int]]:
    """Each test function with its number of cases, sorted: what a set of tests is,
    for a cache key, whatever ids the cases had this time. `function_of`: how to get a
    case's function (`case_function`, or a lookup made of it)."""
    return sorted(Counter(map(function_of, nodeids)).items())


def by_baseline_id(items: Sequence[Any], baseline: Collection[str]) -> dict[str, Any]:
    """Collected pytest items by the ids the baseline gave them (in its order). An id
    this session does not have is matched to a case of the same function that the
    baseline did not have: first the one whose id differs only in the numbers pytest
    puts after an argument's name (`expected12` for `expected13`: cases parametrized
    from a set, whose order may change from one process to the next), where that pairs
    them one to one; then, in collection order, the rest when both have as many. An id
    matched by neither stays unmatched."""
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
        for nodeid, item in [*_by_unnumbered_id(nodeids, cases), *_by_place(nodeids, cases)]:
            del found[item.nodeid]
            found[nodeid] = item
    return found


def _by_unnumbered_id(nodeids: list[str], cases: list[Any]) -> list[tuple[str, Any]]:
    """Pairs whose ids are the same without pytest's numbered argument names, each the
    only one of its side with that form; taken out of `nodeids` and `cases`."""
    names = {
        name
        for case in cases
        if (callspec := getattr(case, "callspec", None)) is not None
        for name in callspec.params
    }
    if not names:
        return []
    numbered = re.compile(rf"(?<=[\[-])({'|'.join(map(re.escape, sorted(names)))})\d+(?=[-\]])")

    def form(nodeid: str) -> str:
        return numbered.sub(r"\1", nodeid)

    lost = Counter(form(nodeid) for nodeid in nodeids)
    new = Counter(form(case.nodeid) for case in cases)
    unique = {shape for shape, count in lost.items() if count == 1 and new[shape] == 1}
    by_form = {form(case.nodeid): case for case in cases if form(case.nodeid) in unique}
    pairs = [(nodeid, by_form[form(nodeid)]) for nodeid in nodeids if form(nodeid) in unique]
    nodeids[:] = [nodeid for nodeid in nodeids if form(nodeid) not in unique]
    cases[:] = [case for case in cases if form(case.nodeid) not in unique]
    return pairs


def _by_place(nodeids: list[str], cases: list[Any]) -> list[tuple[str, Any]]:
    return list(zip(nodeids, cases, strict=True)) if len(nodeids) == len(cases) else []


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
