"""Verdict fidelity: re-check a sample of mutants the slow, obvious way.

For each sampled mutant, copy the project to a temporary folder, write the mutated file
there, run the whole suite in a fresh process (under the guard), and compare: the
engine's Killed must be a red suite, its Survived a green one."""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path

from auditor.baseline.coverage_data import relative
from auditor.baseline.runner import BaselineRunner
from auditor.config import AuditConfig
from auditor.discovery import Project
from auditor.errors import AuditError
from auditor.report import BaselineSection, Disagreement, Mutant, Verification

_IGNORED = shutil.ignore_patterns(".audit", ".git", "__pycache__", ".benchmarks", ".hypothesis")


def mutated_source(source: str, mutant: Mutant) -> str:
    lines = source.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: mutant.line - 1]) + mutant.col
    end = start + len(mutant.original)
    if source[start:end] != mutant.original:
        raise ValueError(f"{mutant.file} changed since the mutant was made")
    return source[:start] + mutant.replacement + source[end:]


def _suite_is_red(copy: Path, project: Project, config: AuditConfig, passing: set[str]) -> bool:
    with tempfile.TemporaryDirectory(prefix="audit-verify-run-") as scratch:
        runner = BaselineRunner(
            root=copy,
            test_paths=[relative(str(path), project.root) for path in project.test_paths],
            source_dirs=[str(copy / relative(str(p), project.root)) for p in project.source_paths],
            source_roots=[str(copy / relative(str(p), project.root)) for p in project.source_roots],
            allow_write=config.allow_write,
            test_timeout=config.test_timeout,
            memory_limit_mb=config.memory_limit_mb,
            workdir=Path(scratch),
        )
        try:
            outcome = runner.run(lambda done, total: None)
        except AuditError:
            return True  # the suite cannot even be collected: the mutant is detected
        if outcome.collection_errors:
            return True
        results = outcome.results + outcome.removed
        return any(r["nodeid"] in passing and r["outcome"] != "passed" for r in results)


def verify_sample(
    project: Project,
    config: AuditConfig,
    baseline: BaselineSection,
    mutants: list[Mutant],
    count: int,
    seed: int = 0,
) -> Verification:
    candidates = sorted(
        (m for m in mutants if m.status in ("Killed", "Survived")), key=lambda m: m.id
    )
    sample = random.Random(seed).sample(candidates, min(count, len(candidates)))
    passing = {t.nodeid for t in baseline.tests if t.outcome == "passed"}
    disagreements = []
    for mutant in sorted(sample, key=lambda m: m.id):
        with tempfile.TemporaryDirectory(prefix="audit-verify-") as scratch:
            copy = Path(scratch) / project.root.name
            shutil.copytree(project.root, copy, ignore=_IGNORED, symlinks=True)
            target = copy / mutant.file
            target.write_text(
                mutated_source(target.read_text(encoding="utf-8"), mutant), encoding="utf-8"
            )
            red = _suite_is_red(copy, project, config, passing)
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
