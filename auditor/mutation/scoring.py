"""Scores from mutant statuses, with Stryker's definitions (see SMELLS.md).

detected = killed + timeout; undetected = survived + no coverage;
valid = detected + undetected; covered = detected + survived.
score = detected / valid; covered score (PIT's test strength) = detected / covered.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.report import (
    FileMutation,
    FunctionMutation,
    Kill,
    Mutant,
    MutationScores,
    StatusCounts,
    TargetedScores,
    TestMutation,
)

_FIELD = {
    "Killed": "killed",
    "Survived": "survived",
    "NoCoverage": "no_coverage",
    "Timeout": "timeout",
    "RuntimeError": "runtime_error",
    "CompileError": "compile_error",
    "Ignored": "ignored",
}
STATUSES = frozenset(_FIELD)


@dataclass(frozen=True)
class Verdict:
    """What a score counts of a mutant: its status, and how it was caught."""

    status: str
    kill_kind: str | None
    by_check: bool
    """Killed by a failing check of some test (`caught_by_a_check`)."""

    @classmethod
    def of(cls, mutant: Mutant) -> Verdict:
        by_check = mutant.status == "Killed" and caught_by_a_check(mutant)
        return cls(mutant.status, mutant.kill_kind, by_check)


def scores(mutants: Iterable[Mutant]) -> MutationScores:
    return scores_of(Verdict.of(mutant) for mutant in mutants)


def scores_of(verdicts: Iterable[Verdict]) -> MutationScores:
    counts = StatusCounts()
    by_assertion = 0
    kinds_known = False
    for verdict in verdicts:
        name = _FIELD[verdict.status]
        setattr(counts, name, getattr(counts, name) + 1)
        by_assertion += verdict.by_check
        kinds_known = kinds_known or bool(
            verdict.status in ("Killed", "Timeout") and verdict.kill_kind
        )
    detected = counts.killed + counts.timeout
    valid = detected + counts.survived + counts.no_coverage
    covered = detected + counts.survived
    # Imported verdicts (mutmut's) say nothing of how a mutant was killed.
    share = round(100.0 * by_assertion / detected, 2) if detected and kinds_known else None
    return MutationScores(
        counts=counts,
        score=round(100.0 * detected / valid, 2) if valid else None,
        covered_score=round(100.0 * detected / covered, 2) if covered else None,
        by_assertion=by_assertion,
        assertion_share=share,
        assertion_score=round(100.0 * by_assertion / valid, 2) if valid and kinds_known else None,
    )


def caught_by_a_check(mutant: Mutant) -> bool:
    """Whether a failing check of some test killed it (any test, when all killers ran)."""
    return failed_a_check(mutant.kill_kind, mutant.kills)


def failed_a_check(kill_kind: str, kills: Iterable[Kill]) -> bool:
    return kill_kind == "assertion" or any(kill.kind == "assertion" for kill in kills)


def killers(mutant: Mutant) -> list[Kill]:
    """The tests that failed on a detected mutant, with how."""
    if mutant.status not in ("Killed", "Timeout"):
        return []
    if mutant.kills:
        return mutant.kills
    kind = mutant.kill_kind or "error"
    return [Kill(test=test, kind=kind) for test in mutant.killed_by[:1]]


def is_detected(mutant: Mutant) -> bool:
    return mutant.status in ("Killed", "Timeout")


def _lines_with_mutants(group: list[Mutant]) -> tuple[set[int], set[int]]:
    """(covered lines with mutants, lines where one was detected)."""
    covered_lines: set[int] = set()
    detected_lines: set[int] = set()
    for mutant in group:
        if mutant.status in ("Killed", "Timeout", "Survived"):
            covered_lines.add(mutant.line)
            if is_detected(mutant):
                detected_lines.add(mutant.line)
    return covered_lines, detected_lines


def _gap_percent(gap: int, covered: int) -> float | None:
    return round(100.0 * gap / covered, 2) if covered else None


def _by_file(mutants: list[Mutant]) -> dict[str, list[Mutant]]:
    by_file: dict[str, list[Mutant]] = defaultdict(list)
    for mutant in mutants:
        by_file[mutant.file].append(mutant)
    return dict(sorted(by_file.items()))


def file_scores(mutants: list[Mutant]) -> list[FileMutation]:
    results = []
    for path, group in _by_file(mutants).items():
        covered_lines, detected_lines = _lines_with_mutants(group)
        gap = sorted(covered_lines - detected_lines)
        results.append(
            FileMutation(
                path=path,
                scores=scores(group),
                oracle_gap=_gap_percent(len(gap), len(covered_lines)),
                gap_lines=gap,
            )
        )
    return results


def project_oracle_gap(mutants: list[Mutant]) -> float | None:
    gap = covered = 0
    for group in _by_file(mutants).values():
        covered_lines, detected_lines = _lines_with_mutants(group)
        gap += len(covered_lines - detected_lines)
        covered += len(covered_lines)
    return _gap_percent(gap, covered)


def function_scores(mutants: list[Mutant]) -> list[FunctionMutation]:
    by_function: dict[tuple[str, str], list[Mutant]] = defaultdict(list)
    for mutant in mutants:
        if mutant.function:
            by_function[mutant.file, mutant.function].append(mutant)
    return [
        FunctionMutation(
            file=file,
            function=function,
            scores=scores(group),
            pseudo_tested=is_pseudo_tested(group),
        )
        for (file, function), group in sorted(by_function.items())
    ]


def is_pseudo_tested(group: list[Mutant]) -> bool:
    """Covered, and every extreme mutant that ran survived."""
    extreme = [m for m in group if m.family == "extreme" and m.status not in ("Ignored",)]
    ran = [m for m in extreme if m.status in ("Killed", "Timeout", "Survived")]
    return bool(ran) and len(ran) == len(extreme) and all(m.status == "Survived" for m in ran)


def states_of_tests(
    mutants: list[Mutant], passing: list[str], all_killers: bool = False
) -> list[TestMutation]:
    """Each passing test's kills; with all killers known, also its unique kills (mutants
    only it kills) and the test whose kills contain its own (`subsumed_by`)."""
    killed: dict[str, int] = defaultdict(int)
    crash_kills: dict[str, int] = defaultdict(int)
    covered: dict[str, int] = defaultdict(int)
    kill_sets: dict[str, set[str]] = defaultdict(set)
    unique: dict[str, int] = defaultdict(int)
    covering_sets: Counter[tuple[str, ...]] = Counter()
    """Mutants by their covering tests: those of a line, or of a module's import-time
    code, share them, often every test."""
    for mutant in mutants:
        if mutant.status in ("Ignored", "CompileError", "NoCoverage"):
            continue
        covering_sets[tuple(mutant.covered_by)] += 1
        found = killers(mutant)
        for kill in found:
            if kill.kind == "assertion":
                killed[kill.test] += 1
            else:
                crash_kills[kill.test] += 1
            kill_sets[kill.test].add(mutant.id)
        if all_killers and len({kill.test for kill in found}) == 1:
            unique[found[0].test] += 1
    for tests, mutants_covered in covering_sets.items():
        for nodeid in tests:
            covered[nodeid] += mutants_covered
    subsumed = _subsumed(kill_sets) if all_killers else {}
    states = []
    for nodeid in sorted(passing):
        if killed[nodeid]:
            state = "killing"
        elif covered[nodeid]:
            state = "covering"
        else:
            state = "not_covering"
        states.append(
            TestMutation(
                nodeid=nodeid,
                state=state,
                killed=killed[nodeid],
                crash_kills=crash_kills[nodeid],
                covered=covered[nodeid],
                unique_kills=unique[nodeid] if all_killers else None,
                subsumed_by=subsumed.get(nodeid, ""),
            )
        )
    return states


def _subsumed(kill_sets: dict[str, set[str]]) -> dict[str, str]:
    """Test -> a test that kills every mutant it kills and more (or the same, and comes
    first by name): it adds no kill of its own."""
    found = {}
    for test, kills in kill_sets.items():
        for other, other_kills in sorted(kill_sets.items()):
            if other == test or not kills <= other_kills:
                continue
            if len(other_kills) > len(kills) or other < test:
                found[test] = other
                break
    return found


def dominators(mutants: list[Mutant]) -> tuple[int, float | None]:
    """The dominator (minimal) mutants, every killer known: killed mutants whose set of
    killing tests has no other killed mutant's set strictly inside it (that one would be
    harder: every test killing it kills this one too), one per set of killers; and the
    score over them and the survivors, which many easy, redundant mutants cannot
    inflate."""
    kill_sets = {
        frozenset(kill.test for kill in killers(mutant))
        for mutant in mutants
        if mutant.status == "Killed"
    }
    minimal = [k for k in kill_sets if not any(other < k for other in kill_sets)]
    survived = sum(mutant.status == "Survived" for mutant in mutants)
    total = len(minimal) + survived
    return len(minimal), round(100.0 * len(minimal) / total, 2) if total else None


def carrying_tests(mutants: list[Mutant]) -> list[str]:
    """A small set of tests that together kill every mutant the suite kills (greedy set
    cover: the test with the most kills not yet covered, by name on ties)."""
    kill_sets: dict[str, set[str]] = defaultdict(set)
    for mutant in mutants:
        for kill in killers(mutant):
            kill_sets[kill.test].add(mutant.id)
    left = set().union(*kill_sets.values()) if kill_sets else set()
    chosen = []
    while left:
        best = min(kill_sets, key=lambda test: (-len(kill_sets[test] & left), test))
        chosen.append(best)
        left -= kill_sets[best]
    return sorted(chosen)


def _dominator_fields(mutants: list[Mutant], all_killers: bool) -> dict[str, Any]:
    if not all_killers:
        return {"dominators": None, "dominator_score": None}
    count, score = dominators(mutants)
    return {"dominators": count, "dominator_score": score}


def derived_fields(
    mutants: list[Mutant],
    passing: list[str],
    targeted_files: Sequence[str] = (),
    all_killers: bool = False,
) -> dict[str, Any]:
    """Every field of a MutationSection that follows from its mutants (and the files the
    tests import), so a run and a merge of shards compute them the same way."""
    functions = function_scores(mutants)
    paths = {"swap": 0, "module": 0, "subprocess": 0, "copy": 0, "none": 0}
    for mutant in mutants:
        paths[mutant.path] = paths.get(mutant.path, 0) + 1
    targeted = set(targeted_files)
    return {
        "scores": scores(mutants),
        "targeted": TargetedScores(
            files=sorted(targeted), scores=scores(m for m in mutants if m.file in targeted)
        )
        if targeted
        else None,
        "mutants": mutants,
        "files": file_scores(mutants),
        "functions": functions,
        "tests": states_of_tests(mutants, passing, all_killers),
        "all_killers": all_killers,
        "carrying": carrying_tests(mutants) if all_killers else [],
        **_dominator_fields(mutants, all_killers),
        "pseudo_tested": [f"{f.file}::{f.function}" for f in functions if f.pseudo_tested],
        "oracle_gap": project_oracle_gap(mutants),
        "paths": paths,
    }
