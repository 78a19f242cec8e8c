"""Find the sources' mutation sites, compile their mutants and type-check them, while
the baseline runs.

Finding them is libcst's parse and visit of every source file, most of a first run's
planning; compiling each mutant's function for the swap path is most of the rest; the
project's type checker (`type_check`), where one applies, can take as long as both.
None needs the baseline. A helper process does them on the core the baseline leaves
idle and writes them to the cache, where planning finds them as it does on a rerun. The
type check runs here only when the run's scope is the whole project (a diff or a shard
needs a fraction of it, checked in the stage). Any failure only means the
stage does the work itself.

    python -m auditor.mutation.early_sites  < {"root": ..., "files": [...], ...}
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.containment.launch import own_module

if TYPE_CHECKING:  # the helper itself does without pydantic and its memory
    from auditor.config import AuditConfig
    from auditor.discovery.project import Project
    from auditor.mutation.cache import ResultCache

MIN_SOURCE_BYTES = 8_000
"""Less source than this is found and compiled in about the helper's own start-up (a
file edited in the agent's loop is often more: its sites and code are new)."""

SITES_FOUND = b"sites found\n"
"""What the helper says once the sites are in the cache, before its type check."""


class EarlySites:
    """The helper process, if this run has one."""

    def __init__(
        self, process: subprocess.Popen[bytes] | None = None, type_checks: bool = False
    ) -> None:
        self.process = process
        self.type_checks = type_checks

    @classmethod
    def start(cls, project: Project, config: AuditConfig) -> EarlySites:
        """A helper for the sources whose sites are not cached, when they are enough to
        be worth one (and the cache can be written)."""
        if not config.mutation or not os.access(project.root / ".audit", os.W_OK):
            return cls()
        files = _uncached(project, config)
        checker = _early_checker(project, config)
        if sum(size for _, size in files) < MIN_SOURCE_BYTES and checker is None:
            return cls()
        spec = {
            "root": str(project.root),
            "files": [str(path) for path, _ in files],
            "mutators": config.mutators,
            "disable": config.disable_mutators,
            "type_check": checker,
            "source_files": [str(path) for path in sorted(project.source_files)],
        }
        process = subprocess.Popen(
            own_module("auditor.mutation.early_sites"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            process.stdin.write(json.dumps(spec).encode())
        process.stdin.close()
        return cls(process, type_checks=checker is not None)

    def wait(self) -> float:
        """Until every site is in the cache (planning would parse the same files); the
        seconds of it spent after the sites were found: the helper's type check, where
        it outlasted the stages before mutation."""
        if self.process is None or self.process.stdout is None:
            return 0.0
        with self.process.stdout as said:
            for line in said:  # until the sites are in the cache, or the helper ended
                if line == SITES_FOUND:
                    break
            sites_found = time.monotonic()
            said.read()  # whatever else it prints must not fill the pipe and stop it
            self.process.wait()
        return time.monotonic() - sites_found if self.type_checks else 0.0

    def stop(self) -> None:
        """Kill it if still running (the run failed or was interrupted). Should the audit
        itself be killed, the helper finishes its bounded work and exits alone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()


def _uncached(project: Project, config: AuditConfig) -> list[tuple[Path, int]]:
    from auditor.mutation.cache import ResultCache
    from auditor.mutation.keys import sites_key, sites_salt
    from mutators.registry import UnknownFamily, operators

    try:
        salt = sites_salt(operators(config.mutators, config.disable_mutators))
    except UnknownFamily:
        return []  # planning reports it
    cache = ResultCache(project.root, checked=True)
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


def _early_checker(project: Project, config: AuditConfig) -> str | None:
    """The checker to run here: one applies, the scope is the whole project, and the
    cache does not hold its verdicts on every source file yet."""
    from auditor.errors import TypeCheckError
    from auditor.mutation.cache import ResultCache
    from auditor.mutation.type_check import chosen_checker, verdicts_key

    if config.diff or config.shard:
        return None
    try:
        checker = chosen_checker(config.type_check, project.root)
    except TypeCheckError:
        return None  # the stage says so
    sources = sorted(project.source_files)
    key = verdicts_key(checker, project.root, sources) if checker else None
    if key is None:
        return None
    cache = ResultCache(project.root, checked=True)
    try:
        cached = cache.get_type_checks(_all_checked(key)) is not None
    finally:
        cache.close()
    return None if cached else checker


def _all_checked(key: str) -> str:
    """Where the helper notes that it checked every mutant of the sources `key` digests."""
    return f"{key}:all"


def _type_check(spec: dict, salt: str, cache: ResultCache) -> None:
    """Check every function-body mutant of the sources and cache the verdicts."""
    from auditor.errors import TypeCheckError
    from auditor.mutation.keys import sites_key
    from auditor.mutation.type_check import Checkable, check_and_keep, verdicts_key

    sources = [Path(path) for path in spec["source_files"]]
    key = verdicts_key(spec["type_check"], Path(spec["root"]), sources)
    mutants = []
    for path in sources:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        sites = cache.get_sites(sites_key(salt, source)) or []
        mutants += [Checkable(str(path), source, site) for site in sites if site.function]
    with contextlib.suppress(TypeCheckError):  # the stage runs it again and says why
        check_and_keep(spec["type_check"], mutants, Path(spec["root"]), sources, cache)
        if key is not None:
            cache.put_type_checks(_all_checked(key), {})


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
    cache = ResultCache(Path(spec["root"]), checked=True)
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
        sys.stdout.buffer.write(SITES_FOUND)  # what follows is the type check's time
        sys.stdout.flush()
        if spec["type_check"]:
            _type_check(spec, salt, cache)
    finally:
        cache.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
