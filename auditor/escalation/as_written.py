"""The hardened files run as the user will run them, before they are written.

The chain proves each candidate as a file of its own; what the user gets is the files
`share_files` composed, in the suite's folder (where `--apply` puts them), run by
pytest with the project's own options: alone, with the suite, and with the suite after
them. A test that does not pass there is traced back to its candidate, which gets a
file of its own, or, failing alone, is rejected with the reason; the files are then
composed and run again.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from auditor.context import RunContext
from auditor.errors import AuditError
from auditor.escalation.hardened import compose, hardened_header, share_files, top_level_names
from auditor.escalation.proving import suite_folder
from auditor.mutation.copies import IGNORED, outcome_on_copy, suite_paths
from auditor.report import Candidate

ROUNDS = 4
"""Compositions tried: a failing candidate gets a file of its own, then is rejected."""


@dataclass(frozen=True)
class HardenedFile:
    module: str
    name: str
    text: str
    candidates: tuple[Candidate, ...]

    def owners(self, failed: str) -> list[Candidate]:
        """The candidates a failure in this file comes from: the one defining the failed
        test's top-level name (`share_files` lets no two define one differently), or all
        of them when the file itself failed (it did not import)."""
        path, _, test = failed.partition("::")
        if Path(path).name != self.name:
            return []
        if not test:
            return list(self.candidates)
        top = test.split("::")[0].split("[")[0]
        return [c for c in self.candidates if top in top_level_names(c.code)][:1]


def layout(
    accepted: dict[str, list[Candidate]], slugs: dict[str, str], apart: frozenset[str]
) -> list[HardenedFile]:
    """Each module's accepted candidates in as few files as clash-free sharing allows,
    those in `apart` (ids) each in a file of its own."""
    files = []
    for module, candidates in sorted(accepted.items()):
        for number, group in enumerate(share_files(candidates, apart), start=1):
            suffix = "" if number == 1 else f"_{number}"
            name = f"test_{slugs[module]}_hardened{suffix}.py"
            text = compose(hardened_header(module), group)
            files.append(HardenedFile(module, name, text, tuple(group)))
    return files


def settle(
    run: RunContext, accepted: dict[str, list[Candidate]], slugs: dict[str, str]
) -> list[HardenedFile]:
    """The files to write, run as written first. A candidate whose test fails in a file
    it shares gets a file of its own (the others changed what it meant); one that fails
    alone is rejected with the reason. `ROUNDS` compositions at most; what still fails
    after them is rejected too."""
    apart: set[str] = set()
    for _ in range(ROUNDS):
        files = layout(accepted, slugs, frozenset(apart))
        failures = _failures(run, files)
        if not failures:
            return files
        alone = {f.candidates[0].id for f in files if len(f.candidates) == 1}
        for candidate, why in failures.values():
            if candidate.id in alone:
                _reject(candidate, why)
            apart.add(candidate.id)
        accepted = {
            module: kept
            for module, group in accepted.items()
            if (kept := [c for c in group if c.accepted])
        }
    for group in accepted.values():
        for candidate in group:
            _reject(candidate, f"its file still failed after {ROUNDS} compositions")
    return []


def _reject(candidate: Candidate, why: str) -> None:
    candidate.accepted, candidate.stage = False, "adds value"
    candidate.reason = f"fails as written (pytest, in the suite's folder): {why}"


def _failures(run: RunContext, files: list[HardenedFile]) -> dict[str, tuple[Candidate, str]]:
    """Candidates (by id) whose tests did not pass in one of the three runs, with the
    first failure seen."""
    if not files:
        return {}
    project = run.project
    folder = project.relative(suite_folder(project))
    ours = [f"{folder}/{file.name}" for file in files]
    suite = suite_paths(project)
    failed: dict[str, tuple[Candidate, str]] = {}
    with tempfile.TemporaryDirectory(prefix="audit-as-written-") as scratch:
        copy = Path(scratch) / project.root.name
        shutil.copytree(project.root, copy, ignore=IGNORED, symlinks=True)
        for file, path in zip(files, ours, strict=True):
            (copy / path).write_text(file.text, encoding="utf-8")
        for order in (ours, [*suite, *ours], [*ours, *suite]):
            for where, why in _not_passing(run, copy, order):
                for file in files:
                    for owner in file.owners(where):
                        failed.setdefault(owner.id, (owner, why))
    return failed


def _not_passing(run: RunContext, copy: Path, paths: list[str]) -> list[tuple[str, str]]:
    """(node id or file, why) of what did not pass in one pytest run of `paths` on the
    copy, in a fresh process under the sandbox (outcomes only, no coverage)."""
    try:
        outcome = outcome_on_copy(run.project, run.config, run.isolation, copy, paths)
    except AuditError as exc:
        return [(path, exc.message) for path in paths]
    errors = [
        (error.path, f"does not import: {error.message}") for error in outcome.collection_errors
    ]
    return errors + [
        (result.nodeid, f"{result.nodeid.split('::', 1)[-1]} {result.outcome}: {result.message}")
        for result in outcome.results + outcome.removed
        if result.outcome != "passed"
    ]
