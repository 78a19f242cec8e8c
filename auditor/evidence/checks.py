"""Assertion evidence: for each check of the tests (an `assert`, a `self.assert*` or
`mock.assert_*` call, a `pytest.raises` block), the mutants it caught and the survivors
it held for.

A kill names the line of the failing check in the killing test's file (`Kill.line`). A
surviving mutant ran every covering test to the end, so each check of those tests held
on it: a check that caught nothing and held for survivors is a weak oracle, and those
survivors are the evidence.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

from auditor.discovery.test_source import read_test_source
from auditor.mutation.scoring import killers
from auditor.report import CheckEvidence, Mutant

SHOWN_IDS = 5
"""Mutant ids kept per check and side (the counts are complete)."""


def assertion_evidence(
    mutants: Iterable[Mutant], root: Path, test_files: Iterable[str]
) -> list[CheckEvidence]:
    lines_of = {file: read_test_source(root / file).checks for file in test_files}
    caught: dict[tuple[str, int], list[str]] = defaultdict(list)
    held: dict[tuple[str, int], list[str]] = defaultdict(list)
    test_at: dict[tuple[str, int], str] = {}
    checks_run: dict[tuple[str, ...], set[tuple[str, int]]] = {}
    """The checks each set of covering tests runs: the survivors of a line, or of a
    module's import-time code, share their set, often of every test."""
    for mutant in mutants:
        if mutant.status == "Killed":
            for kill in killers(mutant):
                if kill.kind == "assertion" and kill.line:
                    file, qualname = split_nodeid(kill.test)
                    caught[(file, kill.line)].append(mutant.id)
                    test_at.setdefault((file, kill.line), qualname)
        elif mutant.status == "Survived":
            covering = tuple(mutant.covered_by)
            if covering not in checks_run:
                checks_run[covering] = _checks_of(covering, lines_of, test_at)
            for place in checks_run[covering]:
                held[place].append(mutant.id)
    return [
        CheckEvidence(
            file=file,
            line=line,
            test=test_at[(file, line)],
            caught=len(caught[(file, line)]),
            held=len(held[(file, line)]),
            caught_ids=sorted(caught[(file, line)])[:SHOWN_IDS],
            held_ids=sorted(held[(file, line)])[:SHOWN_IDS],
        )
        for file, line in sorted(set(caught) | set(held))
    ]


def _checks_of(
    tests: Iterable[str],
    lines_of: Mapping[str, Mapping[str, tuple[int, ...]]],
    test_at: dict[tuple[str, int], str],
) -> set[tuple[str, int]]:
    """The checks these tests run, as (file, line); each check's test, where it has none
    yet, goes into `test_at`."""
    places = set()
    for nodeid in tests:
        file, qualname = split_nodeid(nodeid)
        for line in lines_of.get(file, {}).get(qualname, ()):
            places.add((file, line))
            test_at.setdefault((file, line), qualname)
    return places


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """`tests/test_x.py::TestA::test_b[1]` -> (`tests/test_x.py`, `TestA.test_b`)."""
    file, _, rest = nodeid.partition("::")
    return file, ".".join(part.split("[", 1)[0] for part in rest.split("::"))
