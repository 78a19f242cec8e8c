"""The copy path: a mutated file written into a temporary copy of the project, and
tests run there in a fresh process under the guard.

Verdict fidelity checks (`--verify-sample`) use it with the whole suite; mutants of code
that tests only run in a subprocess (`python -m pkg`) use it with those tests, since the
subprocess imports the code from disk, where no code-object swap can reach."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from auditor.baseline.coverage_data import relative
from auditor.baseline.runner import BaselineRunner
from auditor.config import AuditConfig
from auditor.discovery import Project
from auditor.errors import AuditError

_IGNORED = shutil.ignore_patterns(".audit", ".git", "__pycache__", ".benchmarks", ".hypothesis")


@dataclass(frozen=True)
class CopyRun:
    red: bool
    failing: list[str]
    """Tests that passed on the original and did not pass here, in run order."""
    reason: str = ""
    by_check: bool = False
    """The first failing test failed on a check (assert, pytest.raises, pytest.fail)."""


def run_in_copy(
    project: Project,
    config: AuditConfig,
    file: str,
    mutated_source: str,
    tests: list[str],
    passing: set[str],
) -> CopyRun:
    """Run `tests` (paths or node ids) on a copy of the project where `file` is mutated."""
    with tempfile.TemporaryDirectory(prefix="audit-copy-") as scratch:
        copy = Path(scratch) / project.root.name
        shutil.copytree(project.root, copy, ignore=_IGNORED, symlinks=True)
        (copy / file).write_text(mutated_source, encoding="utf-8")

        def inside(paths: tuple[Path, ...]) -> list[str]:
            return [str(copy / relative(str(path), project.root)) for path in paths]

        runner = BaselineRunner(
            root=copy,
            test_paths=tests,
            source_dirs=inside(project.source_paths),
            source_roots=inside(project.source_roots),
            allow_write=config.allow_write,
            test_timeout=config.test_timeout,
            memory_limit_mb=config.memory_limit_mb,
            workdir=Path(scratch) / "work",
        )
        try:
            outcome = runner.run(lambda done, total: None)
        except AuditError as exc:
            return CopyRun(True, [], f"the suite cannot run: {exc.message}")
        if outcome.collection_errors:
            first = outcome.collection_errors[0]
            return CopyRun(True, [], f"cannot collect {first['file']}: {first['message']}")
        results = outcome.results + outcome.removed
        failed = [r for r in results if r["nodeid"] in passing and r["outcome"] != "passed"]
        first = failed[0]["message"] if failed else ""
        by_check = first.startswith(("assert", "AssertionError", "Failed:"))
        return CopyRun(bool(failed), [r["nodeid"] for r in failed], by_check=by_check)


def suite_paths(project: Project) -> list[str]:
    return [relative(str(path), project.root) for path in project.collect_paths]
