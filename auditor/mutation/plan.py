"""Turn source files and the baseline into a list of runnable mutants.

For each mutation site: which passing tests cover its lines (fastest first), whether a
function-level code swap can apply it or the module must be re-executed (import-time
code, module constants, class bodies, default arguments), the code to run, the timeout,
and the status it already has without running (NoCoverage, CompileError, or Ignored as
equivalent or duplicate by trivial compiler equivalence).
"""

from __future__ import annotations

import bisect
import difflib
import functools
import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import libcst as cst

from auditor import __version__
from auditor.config import AuditConfig
from auditor.discovery.installed import packages_digest
from auditor.discovery.project import Project
from auditor.discovery.project import relative as relative_to_root
from auditor.errors import ConfigError
from auditor.mutation.cache import ResultCache
from auditor.mutation.compiler import (
    FunctionCompiler,
    SiteCache,
    Swaps,
    function_last_line,
    line_starts,
)
from auditor.mutation.coverage_index import CoverageIndex, excluded_lines, statement_lines
from auditor.mutation.data_tables import DataTable, find_data_tables
from auditor.mutation.entry_keys import EntryKey, entry_keys, entry_tests, keys_at, naming
from auditor.mutation.keys import digest, sites_key, sites_salt, swaps_key, swaps_salt
from auditor.mutation.lambdas import LambdaBody, lambda_around, lambda_bodies
from auditor.mutation.ran_code import Code, RanCode
from auditor.mutation.readers import Binding, Consumers, ReadIndex
from auditor.mutation.reexecution import Reexecution
from auditor.mutation.test_ids import case_function, cases_by_function
from auditor.report import DataTableSample
from mutators.base import Operator
from mutators.registry import UnknownFamily, operators
from mutators.sites import Site, find_mutations

if TYPE_CHECKING:  # pydantic's models, which the early-sites helper does without
    from auditor.report import BaselineSection, MutantStatus


@dataclass
class PlannedMutant:
    id: str
    site: Site
    file: str
    abs_path: str
    diff: str
    path: str = "swap"
    status: MutantStatus | None = None
    status_reason: str = ""
    tests: list[str] = field(default_factory=list)
    timeout: float = 0.0
    function_code: bytes = b""
    """zlib-compressed marshal of the mutated function's code object (swap path): a
    project's planned mutants hold thousands of these at once."""
    target: tuple[int, str] = (0, "")
    """(co_firstlineno, co_name) of the original function, to find it alive."""
    source: str = ""
    """The original source of the file (shared by its mutants); the module path applies
    the site to it when the job is sent."""
    cache_key: str = ""
    stem_key: str = ""
    """The key without the tests: an earlier verdict of this mutant under other tests
    (`extension`)."""
    tests_run: TestSet | None = None
    """`tests` as the key counts them (shared by every mutant of the same tests)."""
    subprocess_tests: list[str] = field(default_factory=list)
    """Tests only whose Python subprocesses run the mutated code: if the mutant survives
    the in-process tests, its child runs these too."""
    subprocess_reach: list[str] = field(default_factory=list)
    """Every test whose Python subprocesses run the mutated code (some may reach it in
    process too): the child serves the mutant to all its tests' subprocesses."""
    rerun_lines: tuple[tuple[int, int], ...] = ()
    """Module path: the lines of the mutated file its child runs again (the statement
    and what is computed from it); empty: the whole module."""
    consumers: Consumers = ()
    """Module path: statements of other modules that computed something from what the
    mutated statement binds at import time, (file relative to the root, lines); the
    child runs them again afterwards (`ReadIndex.consumers`)."""

    @property
    def runnable(self) -> bool:
        return self.status is None

    def covering(self) -> list[str]:
        """Its tests and those whose subprocesses run it, by name (`Mutant.covered_by`)."""
        if self.tests_run is not None and not self.subprocess_reach:
            return self.tests_run.by_name
        return sorted({*self.tests, *self.subprocess_reach})


Cases = tuple[tuple[str, int, str], ...]
"""Tests by function: the function, its number of cases, its file's digest."""


@dataclass(frozen=True)
class TestSet:
    ordered: list[str]
    """Fastest first (see `Planner._ordered`)."""
    contents: str
    """Digest of `cases` and `code` (part of the cache key)."""
    cases: Cases
    """The tests by function, number of cases and file digest: not by the cases' ids,
    which a parametrization from the clock or a random value (`test_parse[07:29:44]`)
    changes at every collection."""
    code: Code
    """The function bodies they ran (`ran_code`)."""
    duration: float
    """Their baseline time together."""

    @functools.cached_property
    def by_name(self) -> list[str]:
        """Sorted by name once: every mutant of these tests reports them so."""
        return sorted(self.ordered)


@dataclass(frozen=True)
class TimeoutPolicy:
    factor: float
    constant: float


def _diff(source: str, line_starts: list[int], site: Site) -> str:
    """The lines the site changes, before and after: the whole lines around the change,
    which may begin on an earlier line than the site's (a dropped last argument takes
    the comma before it along)."""
    first_line = min(site.line, bisect.bisect_right(line_starts, site.start))
    end_line = max(site.end_line, bisect.bisect_left(line_starts, site.end))
    first = line_starts[first_line - 1]
    last = line_starts[min(end_line, len(line_starts) - 1)]
    before = source[first:last].splitlines(keepends=True)
    after = source[first : site.start] + site.replacement + source[site.end : last]
    lines = difflib.unified_diff(before, after.splitlines(keepends=True), lineterm="", n=0)
    body = [line.rstrip("\n") for line in list(lines)[2:] if not line.startswith("@@")]
    return "\n".join(body)


@dataclass(frozen=True)
class PlanSettings:
    """What the run's config says about planning."""

    operators: Sequence[Operator]
    policy: TimeoutPolicy
    shared_sources: str = ""
    """Digest of conftest files and config: part of every cache key."""
    module_level: bool = True
    sample_data: bool = True
    copy_path: bool = True


@dataclass
class _File:
    """One source file as its mutants are planned: its text, its tests, and what its
    mutants share (compilations, re-execution, equivalence keys seen)."""

    relative: str
    path: str
    source: str
    starts: list[int]
    by_line: dict[int, set[str]]
    by_subprocess: dict[int, set[str]]
    import_lines: set[int]
    swaps: Swaps
    reexecution: Reexecution
    tables: list[DataTable]
    keys: list[EntryKey]
    bodies: list[LambdaBody]
    called: set[int]
    statement_of: dict[int, int]
    """A continuation line's statement's first line, where coverage records it."""
    seen: dict[tuple, str] = field(default_factory=dict)

    def measured_lines(self, site: Site) -> set[int]:
        """The site's lines, as coverage knows them: a line of a multi-line statement
        counts as that statement's first line."""
        lines = range(site.line, site.end_line + 1)
        return {*lines, *(self.statement_of[n] for n in lines if n in self.statement_of)}

    def span(self, site: Site) -> tuple[int, int]:
        """The first and last lines of the site's function, decorators included; at
        module level, the site's own."""
        if not site.function:
            return site.line, site.end_line
        return site.function_first_line, function_last_line(site, self.starts)

    def statements_of(self, site: Site) -> set[int]:
        """The first lines of the statements the site is in."""
        lines = range(site.line, site.end_line + 1)
        return {self.statement_of.get(line, line) for line in lines}

    @functools.cached_property
    def excluded(self) -> frozenset[int]:
        """The lines coverage.py leaves out of the file's coverage (see `excluded_lines`)."""
        return excluded_lines(self.source)

    @functools.cached_property
    def digest(self) -> str:
        """Of the source: part of its module-path mutants' keys."""
        return hashlib.sha256(self.source.encode()).hexdigest()

    @functools.cached_property
    def tests(self) -> frozenset[str]:
        """Every test that runs a line of the file (once per file: sites ask often)."""
        return frozenset().union(*self.by_line.values())

    @functools.cached_property
    def subprocess_tests(self) -> set[str]:
        return set().union(*self.by_subprocess.values())


class Planner:
    def __init__(
        self,
        root: Path,
        baseline: BaselineSection,
        settings: PlanSettings,
        site_cache: SiteCache | None = None,
        read_index: ReadIndex | None = None,
    ) -> None:
        self.root = root
        self.settings = settings
        self.ran = CoverageIndex(baseline)
        self.read_index = read_index
        """Who reads what import-time code binds; without it, every test does."""
        self.site_cache = site_cache
        self.ran_code = RanCode(
            root, [self.ran.tests_by_line, self.ran.subprocess_tests_by_line], self.ran.import_lines
        )
        self.shared = digest(settings.shared_sources, self.ran_code.outside)
        """Part of every verdict's key: the conftests, the settings, every measured file's
        code outside function bodies."""
        self.plan_keys: set[str] = set()
        """The cache keys of the sites and compilations this planner used."""
        self.sites_salt = sites_salt(settings.operators)
        """What the sites found in a source depend on besides the source itself."""
        self.swaps_salt = swaps_salt(self.sites_salt)
        self.data_tables: dict[tuple[str, int], DataTableSample] = {}
        """The data tables whose entries were sampled, by (file, line)."""
        self.import_time_readers: dict[tuple[str, Binding], frozenset[str]] = {}
        self.running: dict[tuple[str, frozenset[int]], frozenset[str]] = {}
        self.reading: dict[frozenset[str], frozenset[str]] = {}
        self.named: dict[str, frozenset[str]] = {}
        self.everyone = frozenset(self.ran.durations)
        """The tests named for an entry's key (`entry_keys.naming`), among all tests."""
        self.file_digests: dict[str, str] = {}
        self.test_digests: dict[str, str] = {}
        self.test_sets: dict[tuple[frozenset[str], ...], TestSet] = {}
        self.partly_planned: dict[str, set[str]] = {}
        """Per file planned in part (a diff run's), the ids of all its mutants."""
        self.set_contents: dict[frozenset[str], tuple[Cases, Code, str]] = {}

    def _testdigest(self, nodeid: str) -> str:
        if nodeid not in self.test_digests:
            self.test_digests[nodeid] = self._filedigest(nodeid.split("::", 1)[0])
        return self.test_digests[nodeid]

    def _filedigest(self, file: str) -> str:
        if file not in self.file_digests:
            try:
                content = (self.root / file).read_bytes()
            except OSError:
                content = b""
            self.file_digests[file] = hashlib.sha256(content).hexdigest()
        return self.file_digests[file]

    def _sites(self, source: str) -> list[Site]:
        """The source's mutation sites; from the cache when this source was seen before
        (finding them is libcst's parse and visit: most of a rerun's planning)."""
        key = sites_key(self.sites_salt, source)
        self.plan_keys.add(key)
        if self.site_cache is not None:
            known = self.site_cache.get_sites(key)
            if known is not None:
                return known
        sites = find_mutations(source, self.settings.operators)
        if self.site_cache is not None:
            self.site_cache.put_sites(key, sites)
        return sites

    def _ordered(self, tests: Iterable[str]) -> list[str]:
        """Fastest first: by duration class, then the tests that start Python processes,
        then by name.

        Exact durations vary from run to run; the killing test must not. Tests under
        half a second share one class: a unit test of a few milliseconds stays there
        even on a machine loaded many times over. Slower ones go later by powers of two.
        Within a class, a test that starts another Python (a CLI test) pays tens of
        milliseconds per process in every child, which no unit test does, and whether
        it does is the same every run."""
        rank, tests = self._run_rank, frozenset(tests)
        if rank.keys() >= tests:  # every test the baseline ran: ranked once
            return sorted(tests, key=rank.__getitem__)
        return self._run_order(tests)

    @functools.cached_property
    def _run_rank(self) -> dict[str, int]:
        """Each test the baseline ran, by its place in the run order: a planner orders
        hundreds of sets of the same tests."""
        return {nodeid: place for place, nodeid in enumerate(self._run_order(self.everyone))}

    def _run_order(self, tests: Iterable[str]) -> list[str]:
        def duration_class(nodeid: str) -> int:
            duration = self.ran.durations.get(nodeid, 0.0)
            return 0 if duration < 0.5 else 1 + int(math.log2(duration / 0.5))

        return sorted(
            tests, key=lambda nodeid: (duration_class(nodeid), nodeid in self.ran.spawning, nodeid)
        )

    def _tests_of(self, tests: Iterable[str], *first: Iterable[str]) -> TestSet:
        """Mutants of the same lines share their tests (thousands of mutants, a few
        hundred sets): ordered, digested and timed once per set. The tests in
        each part of `first` run before the rest, in that order (each part fastest
        first). Keyed by what it is given: the sets the planner keeps are frozen, so
        a key made of them costs no copy and hashes once."""
        key = (frozenset(tests), *map(frozenset, first))
        if key not in self.test_sets:
            everyone = key[0]
            parts: list[frozenset[str]] = []
            for part in key[1:]:
                parts.append((part & everyone).difference(*parts))
            rest = everyone.difference(*parts)
            ordered = [test for part in (*parts, rest) for test in self._ordered(part)]
            cases, code, contents = self._contents_of(everyone)
            self.test_sets[key] = TestSet(
                ordered=ordered,
                contents=contents,
                cases=cases,
                code=code,
                duration=sum(self.ran.durations.get(t, 0.0) for t in ordered),  # in a stable order
            )
        return self.test_sets[key]

    def _contents_of(self, tests: frozenset[str]) -> tuple[Cases, Code, str]:
        """What a set of tests is for a cache key, whatever order it runs in: its tests by
        function, the bodies they ran, and the digest of both. Made once per set: an
        import-time mutant's tests are ordered by what it reads first, so many orders
        share one set."""
        if tests not in self.set_contents:
            cases, code = self._cases(tests), self.ran_code.of(tests)
            self.set_contents[tests] = (cases, code, digest(cases, code))
        return self.set_contents[tests]

    def _cases(self, tests: Iterable[str]) -> Cases:
        try:
            named = cases_by_function(tests, self._case_functions.__getitem__)
        except KeyError:  # a test the baseline did not run
            named = cases_by_function(tests)
        return tuple((function, n, self._testdigest(function)) for function, n in named)

    @functools.cached_property
    def _case_functions(self) -> dict[str, str]:
        """Each test's function, found once: a planner counts hundreds of sets of them."""
        return {nodeid: case_function(nodeid) for nodeid in self.everyone}

    def _import_time_readers(
        self, file: str, site: Site, file_tests: frozenset[str]
    ) -> frozenset[str]:
        """The tests that can read what an import-time mutant changes (`readers`); where
        none can, one test, which fails if the mutant breaks the import."""
        everyone = self.everyone
        index = self.read_index
        binding = index.binding_at(file, site.line, site.end_line) if index else None
        if index is None or binding is None:
            return everyone
        key = (file, binding)
        if key not in self.import_time_readers:
            readers = index.readers(index.closure(binding.names))
            if readers.every_test:
                self.import_time_readers[key] = everyone
                return everyone
            tests: set[str] = set()
            for reader_file, lines in [(file, binding.lines), *readers.function_lines.items()]:
                by_line = self.ran.tests_by_line.get(reader_file, {})
                for line in lines:
                    tests.update(by_line.get(line, ()))
            for test_file in readers.test_files:
                tests.update(self.ran.tests_by_file.get(test_file, ()))
            if not tests:  # a mutant that breaks the import fails any test
                tests = set(self._ordered(file_tests or everyone)[:1])
            self.import_time_readers[key] = frozenset(tests)
        return self.import_time_readers[key]

    def _named(self, key: str) -> frozenset[str]:
        """The tests named for an entry's key, among all (once per key)."""
        if key not in self.named:
            self.named[key] = frozenset(naming(self.everyone, key))
        return self.named[key]

    def _nearest(self, file: _File, site: Site) -> list[frozenset[str]]:
        """An import-time mutant's tests nearest its code, nearest first: those that run
        the mutated lines (a function that also runs at import), a line of the class
        around them, a statement naming what they bind. A test that uses the changed
        code fails first far more often than one that only imports its module."""
        nearest = [self._running(file.relative, file.measured_lines(site))]
        index = self.read_index
        if index is None:
            return nearest
        around = index.class_around(file.relative, site.line, site.end_line)
        if around is not None:
            nearest.append(self._running(file.relative, around))
        binding = index.binding_at(file.relative, site.line, site.end_line)
        if binding is not None:
            nearest.append(self._reading(binding.names))
        return nearest

    def _reading(self, names: frozenset[str]) -> frozenset[str]:
        """The tests that run a statement naming one of the names (once per names)."""
        if names not in self.reading:
            assert self.read_index is not None
            reading = self.read_index.lines_naming(names)
            running = (self._running(file, reading[file]) for file in sorted(reading))
            self.reading[names] = frozenset().union(*running)
        return self.reading[names]

    def _running(self, file: str, lines: Iterable[int]) -> frozenset[str]:
        """The tests that run any of the lines of the file (once per set of lines)."""
        key = (file, frozenset(lines))
        if key not in self.running:
            by_line = self.ran.tests_by_line.get(file, {})
            self.running[key] = frozenset().union(*(by_line.get(n, ()) for n in key[1]))
        return self.running[key]

    def keep_plans_of(self, path: Path) -> None:
        """Keep the cached sites and compilations of a file this run does not plan."""
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            return
        self.plan_keys.update(
            (sites_key(self.sites_salt, source), swaps_key(self.swaps_salt, str(path)))
        )

    def plan_file(self, path: Path, scope: PlanScope | None = None) -> list[PlannedMutant]:
        """Every mutant of the file; with a `scope`, those of the functions (at module
        level, the statements) it reaches, each function whole, so its equivalent
        mutants are found as in a whole file's planning."""
        source = path.read_text(encoding="utf-8")
        try:
            sites = self._sites(source)
        except cst.ParserSyntaxError:
            return []
        file = self._file(path, source, sites)
        if scope is not None:
            self.partly_planned[file.relative] = {f"{file.relative}::{s.local_id()}" for s in sites}
            spans = {file.span(s) for s in sites}  # one per function: its sites share it
            reached = {span for span in spans if scope.reaches(file.relative, *span)}
            sites = [s for s in sites if file.span(s) in reached]
        left_out = dict.fromkeys(file.tables, 0)
        planned = []
        for site in sites:
            table = next((t for t in file.tables if t.skips(site.start, site.end)), None)
            if table is not None:
                left_out[table] += 1
                continue
            mutant = self._plan_site(file, site)
            if mutant is not None:
                planned.append(mutant)
        file.swaps.save()
        for table, count in left_out.items():
            self.data_tables[(file.relative, table.line)] = DataTableSample(
                file=file.relative,
                line=table.line,
                end_line=table.end_line,
                entries=len(table.entries),
                mutated_entries=len(table.sampled),
                left_out=count,
            )
        return planned

    def _file(self, path: Path, source: str, sites: list[Site]) -> _File:
        relative = relative_to_root(str(path), self.root)
        starts = line_starts(source)
        compiler = FunctionCompiler(source, str(path), starts)
        swaps = Swaps(compiler, sites, self.site_cache, self.swaps_salt)
        self.plan_keys.add(swaps.key)
        module_level = self.settings.module_level
        return _File(
            relative=relative,
            path=str(path),
            source=source,
            starts=starts,
            by_line=self.ran.tests_by_line.get(relative, {}),
            by_subprocess=self.ran.subprocess_tests_by_line.get(relative, {}),
            import_lines=self.ran.import_lines.get(relative, set()),
            swaps=swaps,
            reexecution=Reexecution(source),
            tables=find_data_tables(source) if self.settings.sample_data and module_level else [],
            keys=entry_keys(source) if module_level else [],
            bodies=lambda_bodies(source),
            called=self.ran.called_lines.get(relative, set()),
            statement_of=statement_lines(source),
        )

    def _plan_site(self, file: _File, site: Site) -> PlannedMutant | None:
        """The site's mutant with its path, tests and key, or the status it has without a
        run; None for import-time code when module-level mutants are off."""
        lines = file.measured_lines(site)
        at_import = bool(file.import_lines.intersection(lines)) or not site.function
        if at_import and not self.settings.module_level:
            return None
        mutant = PlannedMutant(
            id=f"{file.relative}::{site.local_id()}",
            site=site,
            file=file.relative,
            abs_path=file.path,
            diff=_diff(file.source, file.starts, site),
            source=file.source,
        )
        tests = self._covering(file, site, at_import)
        in_subprocess = set().union(*(file.by_subprocess.get(n, ()) for n in lines))
        unmeasured = not file.tests and not file.subprocess_tests and self.ran.unmeasured_spawning
        if unmeasured and self.settings.copy_path:
            # No test runs the file where it is measured, and some start Python where it
            # is not: the code may be theirs, and only a copy reaches them.
            self._on_copy(mutant, file)
            return mutant
        uncalled = lambda_around(file.bodies, site.start, site.end)
        if uncalled is not None and uncalled.line not in file.called:
            mutant.status, mutant.path = "NoCoverage", "none"
            mutant.status_reason = "no passing test calls the lambda it is in"
            return mutant
        if not tests and not in_subprocess and file.statements_of(site) <= file.excluded:
            mutant.status, mutant.path = "Ignored", "none"
            mutant.status_reason = "no test runs it, and the project excludes it from coverage"
            return mutant
        if not tests and not in_subprocess:
            mutant.status, mutant.path = "NoCoverage", "none"
            mutant.status_reason = "no passing test runs this line"
            return mutant
        self._runnable(mutant, file, at_import, tests, in_subprocess)
        return mutant

    def _covering(self, file: _File, site: Site, at_import: bool) -> frozenset[str]:
        if not at_import:
            return frozenset().union(*(file.by_line.get(n, ()) for n in file.measured_lines(site)))
        # Import-time code makes values tests may read without running a line of this
        # file (a table, a compiled pattern): the tests that can read what the statement
        # binds run, those that run the file first. Only a file no test imports has no
        # covering test.
        if not (file.import_lines or file.tests):
            return frozenset()
        return self._import_time_readers(file.relative, site, file.tests)

    def _on_copy(self, mutant: PlannedMutant, file: _File) -> None:
        mutant.path = "copy"
        tests_run = self._tests_of(set(self.ran.unmeasured_spawning))
        mutant.tests = tests_run.ordered
        mutant.cache_key = digest(
            __version__,
            mutant.id,
            mutant.site.replacement,
            file.digest,
            tests_run.contents,
            self.shared,
        )

    def _runnable(
        self,
        mutant: PlannedMutant,
        file: _File,
        at_import: bool,
        tests: frozenset[str],
        in_subprocess: set[str],
    ) -> None:
        """Tests, timeout, path and key of a mutant some test runs; or the status
        (CompileError, Ignored) its compilation already decides."""
        site = mutant.site
        only_there = self._tests_of(in_subprocess - tests)
        reach = self._tests_of(in_subprocess)
        mutant.subprocess_tests, mutant.subprocess_reach = only_there.ordered, reach.ordered
        if at_import:
            named = entry_tests(tests, keys_at(file.keys, site.start, site.end), self._named)
            tests_run = self._tests_of(tests, named, *self._nearest(file, site), file.tests)
        else:
            tests_run = self._tests_of(tests)
        mutant.tests = tests_run.ordered
        policy = self.settings.policy
        mutant.timeout = (
            tests_run.duration + only_there.duration
        ) * policy.factor + policy.constant
        try:
            key_of_code = self._choose_path(mutant, file, at_import)
        except (SyntaxError, ValueError) as exc:
            mutant.status, mutant.path = "CompileError", "none"
            mutant.status_reason = f"{type(exc).__name__}: {exc}"
            return
        if key_of_code in file.seen:
            original_id = file.seen[key_of_code]
            mutant.status, mutant.path = "Ignored", "none"
            mutant.status_reason = (
                f"duplicate of {original_id}"
                if original_id
                else "equivalent: compiles to the same code as the original"
            )
            return
        file.seen[key_of_code] = mutant.id
        code = (
            key_of_code
            if mutant.path == "swap"
            else (file.digest, mutant.rerun_lines, self._consumed_from(mutant.consumers))
        )
        shared = (__version__, mutant.id, site.replacement, code)
        mutant.cache_key = digest(*shared, tests_run.contents, reach.contents, self.shared)
        mutant.stem_key = digest(*shared, reach.contents, self.shared)
        mutant.tests_run = tests_run

    def _choose_path(self, mutant: PlannedMutant, file: _File, at_import: bool) -> tuple:
        """Choose the path, fill in what it needs, return the mutant's TCE key.

        Swap-path mutants compile only their function; the original's key is registered
        in `file.seen` with an empty id, so a mutant that compiles to the original's code
        reads as equivalent. Module-path mutants are compiled by the runner's child, which
        reports a syntax error as CompileError. A mutant only subprocesses run (the
        `subprocess` path) is applied in none of the child's own code, but its function
        is compiled all the same, for the equivalence and the syntax check."""
        site = mutant.site
        in_process = "swap" if mutant.tests else "subprocess"
        if not at_import:
            swap = file.swaps.get(site, site.apply(file.source))
            if swap is not None:
                mutant.path = in_process
                if in_process == "swap":
                    mutant.function_code = swap.code
                    mutant.target = swap.target
                file.seen.setdefault(("swap", site.function, swap.original), "")
                return ("swap", site.function, swap.mutated)
        mutant.path = "module" if mutant.tests else "subprocess"
        if mutant.path == "module":
            original = mutant.source[site.start : site.end]
            added = site.replacement.count("\n") - original.count("\n")
            mutant.rerun_lines = file.reexecution.lines_to_rerun(site.line, site.end_line, added)
            mutant.consumers = self._consumers(mutant.file, site)
        return ("module", mutant.id)

    def _consumers(self, file: str, site: Site) -> Consumers:
        if self.read_index is None:
            return ()
        binding = self.read_index.binding_at(file, site.line, site.end_line)
        return () if binding is None else self.read_index.consumers(file, binding.names)

    def _consumed_from(self, consumers: Consumers) -> list:
        """The consumers and their files' digests: part of a module-path mutant's key."""
        files = sorted({file for file, _ in consumers})
        return [consumers, [self._filedigest(file) for file in files]]


class PlanScope(Protocol):
    """What a diff run plans (`selection.DiffScope`)."""

    @property
    def files(self) -> set[str]:
        """The files it can reach, relative to the root."""
        ...

    def reaches(self, file: str, first: int, last: int) -> bool:
        """Whether it reaches any of lines `first` to `last` of `file`."""
        ...


def plan(
    planner: Planner, files: Iterable[Path], scope: PlanScope | None = None
) -> list[PlannedMutant]:
    """Every mutant of the files, or, with a `scope`, of the functions it reaches. With a
    cache, the sites and compilations of sources that are no longer the project's are
    dropped (each edit of a file would add some); a file left unplanned keeps its own."""
    mutants: list[PlannedMutant] = []
    for path in sorted(files):
        if scope is None:
            mutants.extend(planner.plan_file(path))
        elif relative_to_root(str(path), planner.root) in scope.files:
            mutants.extend(planner.plan_file(path, scope))
        else:
            planner.keep_plans_of(path)
    if planner.site_cache is not None:
        planner.site_cache.keep_plans(planner.plan_keys)
    return mutants


def _shared_digest(project: Project, config: AuditConfig) -> str:
    """What every verdict depends on: the conftests and the other modules beside the
    tests (helpers any test may import), the installed distributions, the settings."""
    digest = hashlib.sha256()
    for path in sorted({*project.conftest_files, *_support_files(project)}):
        digest.update(f"{project.relative(path)}\n".encode())
        digest.update(path.read_bytes())
    digest.update(packages_digest().encode())
    settings = (config.mutant_timeout_factor, config.mutant_timeout_constant, config.all_killers)
    digest.update(repr(settings).encode())
    return digest.hexdigest()


def planner_for(
    project: Project,
    config: AuditConfig,
    baseline: BaselineSection,
    site_cache: ResultCache | None = None,
) -> Planner:
    """The planner of this run's mutants: the same ids and code for every stage."""
    try:
        chosen = operators(config.mutators, config.disable_mutators)
    except UnknownFamily as exc:
        raise ConfigError(str(exc)) from None
    settings = PlanSettings(
        operators=chosen,
        policy=TimeoutPolicy(config.mutant_timeout_factor, config.mutant_timeout_constant),
        shared_sources=_shared_digest(project, config),
        module_level=config.module_level,
        sample_data=config.mutate_data == "sample",
        copy_path=config.copy_path,
    )
    return Planner(project.root, baseline, settings, site_cache, read_index(project))


def read_index(project: Project) -> ReadIndex:
    """Names bound and read across the code under test, the test files, and what the
    tests import beside them (conftests, helpers: any test may read through those)."""
    support = {*_support_files(project), *project.conftest_files}
    return ReadIndex(
        project.root, _package_files(project), sorted(project.test_files), sorted(support)
    )


def _support_files(project: Project) -> set[Path]:
    """The Python files under the test paths that are not test files (helpers,
    conftests)."""
    test_files = set(project.test_files)
    return {
        path
        for folder in project.test_paths
        for path in (folder.rglob("*.py") if folder.is_dir() else ())
        if path not in test_files
    }


def _package_files(project: Project) -> list[Path]:
    """The files under test and every other module of their packages: code outside the
    mutated scope reads what it makes too (toolz's `__init__` builds the registry that
    `_signatures.py`'s tables feed, while `[tool.audit] src` names only the modules)."""
    files = set(project.source_files)
    for path in project.source_files:
        for root in project.source_roots:
            if root in path.parents and len(path.relative_to(root).parts) > 1:
                package = root / path.relative_to(root).parts[0]
                files.update(package.rglob("*.py"))
    return sorted(files - set(project.test_files))
