"""Verdict fidelity: re-check a sample of mutants the slow, obvious way.

For each sampled mutant, copy the project to a temporary folder, write the mutated file
there, run the whole suite in a fresh process (under the guard), and compare: the
engine's Killed must be a red suite, its Survived a green one. Mutants that the tests'
Python subprocesses run make up to half the sample when there are any."""

from __future__ import annotations

import random
from collections.abc import Callable

from auditor.context import RunContext
from auditor.mutation.copies import run_in_copy, suite_paths
from auditor.report import BaselineSection, Disagreement, Mutant, Verification


def _spawning_tests(baseline: BaselineSection) -> set[str]:
    return {t.nodeid for t in baseline.tests if t.spawns_python or t.subprocess_lines}


def _sample(
    candidates: list[Mutant], count: int, spawning: set[str], rng: random.Random
) -> list[Mutant]:
    """Up to half the sample from mutants that Python subprocesses of the tests run
    (their verdicts come through the import hook or a copy), the rest from the others."""
    reached = [
        m for m in candidates if m.path in ("subprocess", "copy") or spawning & set(m.covered_by)
    ]
    reached_ids = {m.id for m in reached}
    others = [m for m in candidates if m.id not in reached_ids]
    wanted = min(count, len(candidates))
    from_reached = min(len(reached), max(wanted - len(others), (wanted + 1) // 2))
    return rng.sample(reached, from_reached) + rng.sample(others, wanted - from_reached)


def verify_sample(
    run: RunContext,
    baseline: BaselineSection,
    mutants: list[Mutant],
    count: int,
    mutated_source: Callable[[str], str],
    seed: int = 0,
) -> Verification:
    """`mutated_source(mutant_id)`: the mutant's file with the mutant applied."""
    candidates = sorted(
        (m for m in mutants if m.status in ("Killed", "Survived")), key=lambda m: m.id
    )
    sample = _sample(candidates, count, _spawning_tests(baseline), random.Random(seed))
    passing = {t.nodeid for t in baseline.tests if t.reliable}
    disagreements = []
    for mutant in sorted(sample, key=lambda m: m.id):
        red = run_in_copy(
            run, mutant.file, mutated_source(mutant.id), suite_paths(run.project), passing
        ).red
        if red != (mutant.status == "Killed"):
            disagreements.append(
                Disagreement(
                    id=mutant.id, engine=mutant.status, fresh_run="Killed" if red else "Survived"
                )
            )
    checked = len(sample)
    return Verification(
        checked=checked,
        agreed=checked - len(disagreements),
        agreement=round(100.0 * (checked - len(disagreements)) / checked, 2) if checked else None,
        disagreements=disagreements,
    )
