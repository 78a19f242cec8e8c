"""Find the sources' mutation sites, and compile their mutants, while the baseline runs.

Finding them is libcst's parse and visit of every source file, most of a first run's
planning; compiling each mutant's function for the swap path is most of the rest.
Neither needs the baseline. A helper process does both
on the core the baseline leaves idle and writes them to the plan cache, where planning
finds them as it does on a rerun. Any failure only means planning does the work itself.

    python -m auditor.mutation.early_sites  < {"root": ..., "files": [...], ...}
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.containment.launch import own_module

if TYPE_CHECKING:  # the helper itself does without pydantic and its memory
    from auditor.config import AuditConfig
    from auditor.discovery.project import Project

MIN_SOURCE_BYTES = 50_000
"""Less source than this is found in a fraction of the helper's own start-up."""


class EarlySites:
    """The helper process, if this run has one."""

    def __init__(self, process: subprocess.Popen[bytes] | None = None) -> None:
        self.process = process

    @classmethod
    def start(cls, project: Project, config: AuditConfig) -> EarlySites:
        """A helper for the sources whose sites are not cached, when they are enough to
        be worth one (and the cache can be written)."""
        if not config.mutation or not os.access(project.root / ".audit", os.W_OK):
            return cls()
        files = _uncached(project, config)
        if sum(size for _, size in files) < MIN_SOURCE_BYTES:
            return cls()
        spec = {
            "root": str(project.root),
            "files": [str(path) for path, _ in files],
            "mutators": config.mutators,
            "disable": config.disable_mutators,
        }
        process = subprocess.Popen(
            own_module("auditor.mutation.early_sites"),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            process.stdin.write(json.dumps(spec).encode())
        process.stdin.close()
        return cls(process)

    def wait(self) -> None:
        """Until every site is in the cache (planning would parse the same files)."""
        if self.process is not None:
            self.process.wait()

    def stop(self) -> None:
        """Kill it if still running (the run failed or was interrupted). Should the audit
        itself be killed, the helper finishes its bounded work and exits alone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def _uncached(project: Project, config: AuditConfig) -> list[tuple[Path, int]]:
    from auditor.mutation.cache import ResultCache
    from auditor.mutation.keys import sites_key, sites_salt
    from mutators.registry import UnknownFamily, operators

    try:
        salt = sites_salt(operators(config.mutators, config.disable_mutators))
    except UnknownFamily:
        return []  # planning reports it
    cache = ResultCache(project.root)
    try:
        files = []
        for path in sorted(project.source_files):
            try:
                source = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not cache.has_sites(sites_key(salt, source)):
                files.append((path, len(source)))
        return files
    finally:
        cache.close()


def main() -> int:
    import libcst

    from auditor.containment.memory import release_freed_memory
    from auditor.mutation.cache import ResultCache
    from auditor.mutation.compiler import compile_swaps
    from auditor.mutation.keys import sites_key, sites_salt, swaps_salt
    from mutators.registry import operators
    from mutators.sites import find_mutations

    spec = json.loads(sys.stdin.read())
    chosen = operators(spec["mutators"], spec["disable"])
    salt = sites_salt(chosen)
    cache = ResultCache(Path(spec["root"]))
    try:
        for file in spec["files"]:
            try:
                source = Path(file).read_text(encoding="utf-8")
                sites = find_mutations(source, chosen)
            except (OSError, UnicodeDecodeError, libcst.ParserSyntaxError):
                continue
            cache.put_sites(sites_key(salt, source), sites)
            release_freed_memory()  # the syntax tree's pages, back to the system
            compile_swaps(source, file, sites, swaps_salt(salt), cache)
    finally:
        cache.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
