"""Turn source files and the baseline into a list of runnable mutants.

For each mutation site: which passing tests cover its lines (fastest first), whether a
function-level code swap can apply it or the module must be re-executed (import-time
code, module constants, class bodies, default arguments), the code to run, the timeout,
and the status it already has without running (NoCoverage, CompileError, or Ignored as
equivalent or duplicate by trivial compiler equivalence).
"""

from __future__ import annotations

import bisect
import contextlib
import difflib
import functools
import hashlib
import json
import marshal
import math
import sys
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Protocol

import libcst as cst

import mutators
from auditor import __version__
from auditor.discovery import relative as relative_to_root
from auditor.engine.compiler import compile_module, find_function, fingerprint
from auditor.engine.data_tables import find_data_tables
from auditor.engine.readers import Binding, Consumers, ReadIndex
from auditor.engine.reexecution import Reexecution
from auditor.report import DataTableSample
from mutators.base import Operator
from mutators.sites import Site, find_mutations

if TYPE_CHECKING:  # pydantic's models: 14 MB the early-sites helper does without
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


@dataclass(frozen=True)
class _TestSet:
    ordered: list[str]
    """Fastest first (see `Planner._ordered`)."""
    contents: str
    """Digest of the tests' files (part of the cache key)."""
    duration: float
    """Their baseline time together."""


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


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@functools.cache
def _mutators_digest() -> str:
    """The operators' own code: an operator changed between two runs of the same version
    must not bring back the sites the old one found."""
    digest = hashlib.sha256()
    for path in sorted(Path(mutators.__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def sites_salt(operators: Sequence[Operator]) -> str:
    return _digest(__version__, [op.name for op in operators], _mutators_digest())


def sites_key(salt: str, source: str) -> str:
    """The cache key of a source's mutation sites."""
    return _digest(salt, source)


def swaps_salt(sites_salt: str) -> str:
    """What compiled code depends on besides the sites: bytecode and marshal change with
    the Python running the audit."""
    return _digest(sites_salt, sys.version, sys.implementation.name)


def _line_starts(source: str) -> list[int]:
    """The offset of each line's first character, and the source's length last."""
    starts = [0]
    for text in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(text))
    return starts


class SiteCache(Protocol):
    def get_sites(self, key: str) -> list[Site] | None: ...

    def put_sites(self, key: str, sites: list[Site]) -> None: ...

    def get_swaps(self, key: str) -> dict[str, Swap | None] | None: ...

    def put_swaps(self, key: str, swaps: dict[str, Swap | None]) -> None: ...

    def keep_plans(self, keys: set[str]) -> None: ...


class Planner:
    def __init__(
        self,
        root: Path,
        baseline: BaselineSection,
        operators: Sequence[Operator],
        policy: TimeoutPolicy,
        shared_sources: str,
        module_level: bool = True,
        sample_data: bool = True,
        copy_path: bool = True,
        site_cache: SiteCache | None = None,
        read_index: ReadIndex | None = None,
    ) -> None:
        self.root = root
        self.read_index = read_index
        """Who reads what import-time code binds; without it, every test does."""
        self.site_cache = site_cache
        self.plan_keys: set[str] = set()
        """The cache keys of the sites and compilations this planner used."""
        self.sites_salt = sites_salt(operators)
        """What the sites found in a source depend on besides the source itself."""
        self.swaps_salt = swaps_salt(self.sites_salt)
        self.copy_path = copy_path
        self.module_level = module_level
        self.sample_data = sample_data
        self.data_tables: dict[tuple[str, int], DataTableSample] = {}
        """The data tables whose entries were sampled, by (file, line)."""
        self.operators = operators
        self.policy = policy
        self.shared_sources = shared_sources
        """Digest of conftest files and config: part of every cache key."""
        passing = [test for test in baseline.tests if test.reliable]
        self.durations = {test.nodeid: test.duration for test in passing}
        self.unmeasured_spawning = [
            test.nodeid for test in passing if test.spawns_python and not test.subprocess_lines
        ]
        """Tests that start another Python whose code went unmeasured (a cleared
        environment, a launcher that drops PYTHONPATH): our sitecustomize never reached
        those processes, so neither can the mutant. They may run code no other test
        reaches: that code takes the copy path."""
        self.tests_by_line: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
        for test in passing:
            for file, lines in test.lines.items():
                for line in lines:
                    self.tests_by_line[file][line].add(test.nodeid)
        self.subprocess_tests_by_line: dict[str, dict[int, set[str]]] = defaultdict(
            lambda: defaultdict(set)
        )
        """Tests whose Python subprocesses ran a line: the mutant's child runs them after
        its in-process tests, serving the mutated file to their subprocesses."""
        for test in passing:
            for file, lines in test.subprocess_lines.items():
                for line in lines:
                    self.subprocess_tests_by_line[file][line].add(test.nodeid)
        self.import_lines = {f: set(lines) for f, lines in baseline.import_time_lines.items()}
        self.tests_by_file: dict[str, set[str]] = defaultdict(set)
        for test in passing:
            self.tests_by_file[test.nodeid.split("::", 1)[0]].add(test.nodeid)
        self.import_time_readers: dict[tuple[str, Binding], set[str]] = {}
        self.file_digests: dict[str, str] = {}
        self.test_sets: dict[tuple[frozenset[str], frozenset[str]], _TestSet] = {}

    def _test_digest(self, nodeid: str) -> str:
        return self._file_digest(nodeid.split("::", 1)[0])

    def _file_digest(self, file: str) -> str:
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
        sites = find_mutations(source, self.operators)
        if self.site_cache is not None:
            self.site_cache.put_sites(key, sites)
        return sites

    def _ordered(self, tests: Iterable[str]) -> list[str]:
        """Fastest first, by duration class, then by name.

        Exact durations vary from run to run; the killing test must not. Tests under
        half a second share one class (ordered by name): a unit test of a few
        milliseconds stays there even on a machine loaded many times over. Slower ones
        go later by powers of two."""

        def duration_class(nodeid: str) -> int:
            duration = self.durations.get(nodeid, 0.0)
            return 0 if duration < 0.5 else 1 + int(math.log2(duration / 0.5))

        return sorted(tests, key=lambda nodeid: (duration_class(nodeid), nodeid))

    def _tests_of(self, tests: set[str], first: Iterable[str] = frozenset()) -> _TestSet:
        """Mutants of the same lines share their tests (tabulate: 3,945 mutants, 226
        sets of up to 264 tests): ordered, digested and timed once per set. The tests in
        `first` run before the others (each part fastest first)."""
        front = frozenset(first) & frozenset(tests)
        key = (frozenset(tests), front)
        if key not in self.test_sets:
            ordered = self._ordered(front) + self._ordered(key[0] - front)
            self.test_sets[key] = _TestSet(
                ordered=ordered,
                contents=_digest([(t, self._test_digest(t)) for t in sorted(ordered)]),
                duration=sum(self.durations.get(t, 0.0) for t in ordered),  # in a stable order
            )
        return self.test_sets[key]

    def _import_time_readers(self, file: str, site: Site, file_tests: set[str]) -> set[str]:
        """The tests that can read what an import-time mutant changes (`readers`); where
        none can, one test, which fails if the mutant breaks the import."""
        everyone = set(self.durations)
        index = self.read_index
        binding = index.binding_at(file, site.line, site.end_line) if index else None
        if index is None or binding is None:
            return everyone
        key = (file, binding)
        if key not in self.import_time_readers:
            readers = index.readers(index.closure(binding.names))
            if readers.every_test:
                tests = everyone
            else:
                tests = set()
                for reader_file, lines in [(file, binding.lines), *readers.function_lines.items()]:
                    by_line = self.tests_by_line.get(reader_file, {})
                    for line in lines:
                        tests.update(by_line.get(line, ()))
                for test_file in readers.test_files:
                    tests.update(self.tests_by_file.get(test_file, ()))
                if not tests:  # a mutant that breaks the import fails any test
                    tests = set(self._ordered(file_tests or everyone)[:1])
            self.import_time_readers[key] = tests
        return self.import_time_readers[key]

    def plan_file(self, path: Path) -> list[PlannedMutant]:
        relative = relative_to_root(str(path), self.root)
        source = path.read_text(encoding="utf-8")
        try:
            sites = self._sites(source)
        except cst.ParserSyntaxError:
            return []
        filename = str(path)
        line_starts = _line_starts(source)
        by_line = self.tests_by_line.get(relative, {})
        file_tests = set().union(*by_line.values()) if by_line else set()
        by_subprocess = self.subprocess_tests_by_line.get(relative, {})
        file_subprocess_tests = set().union(*by_subprocess.values()) if by_subprocess else set()
        import_lines = self.import_lines.get(relative, set())
        compiler = _FunctionCompiler(source, filename, line_starts)
        swaps = _Swaps(compiler, self.site_cache, self.swaps_salt)
        reexecution = Reexecution(source)
        self.plan_keys.add(swaps.key)
        seen: dict[tuple, str] = {}
        planned = []
        tables = find_data_tables(source) if self.sample_data and self.module_level else []
        left_out = dict.fromkeys(tables, 0)
        for site in sites:
            lines = range(site.line, site.end_line + 1)
            at_import = bool(import_lines.intersection(lines)) or not site.function
            if at_import and not self.module_level:
                continue
            table = next((t for t in tables if t.skips(site.start, site.end)), None)
            if table is not None:
                left_out[table] += 1
                continue
            mutant_id = f"{relative}::{site.local_id()}"
            mutated = site.apply(source)
            mutant = PlannedMutant(
                id=mutant_id,
                site=site,
                file=relative,
                abs_path=filename,
                diff=_diff(source, line_starts, site),
                source=source,
            )
            planned.append(mutant)
            if at_import:
                # Import-time code makes values tests may read without running a line of
                # this file (a table, a compiled pattern): the tests that can read what
                # the statement binds run, those that run the file first. Only a file no
                # test imports has no covering test.
                imported = bool(import_lines or file_tests)
                tests = self._import_time_readers(relative, site, file_tests) if imported else set()
            else:
                tests = set().union(*(by_line.get(n, ()) for n in lines))
            in_subprocess = set().union(*(by_subprocess.get(n, ()) for n in lines))
            unmeasured = not file_tests and not file_subprocess_tests and self.unmeasured_spawning
            if unmeasured and self.copy_path:
                # No test runs the file where it is measured, and some start Python where
                # it is not: the code may be theirs, and only a copy reaches them.
                mutant.path = "copy"
                tests_run = self._tests_of(set(self.unmeasured_spawning))
                mutant.tests = tests_run.ordered
                mutant.cache_key = _digest(
                    __version__,
                    mutant_id,
                    site.replacement,
                    source,
                    tests_run.contents,
                    self.shared_sources,
                )
                continue
            only_there = self._tests_of(in_subprocess - tests)
            mutant.subprocess_tests = only_there.ordered
            reach = self._tests_of(in_subprocess)
            mutant.subprocess_reach = reach.ordered
            if not tests and not in_subprocess:
                mutant.status, mutant.path = "NoCoverage", "none"
                mutant.status_reason = "no passing test runs this line"
                continue
            tests_run = self._tests_of(tests, first=file_tests if at_import else frozenset())
            mutant.tests = tests_run.ordered
            duration = tests_run.duration + only_there.duration
            mutant.timeout = duration * self.policy.factor + self.policy.constant
            try:
                key_of_code = self._choose_path(
                    mutant, site, at_import, swaps, reexecution, mutated, seen
                )
            except (SyntaxError, ValueError) as exc:
                mutant.status, mutant.path = "CompileError", "none"
                mutant.status_reason = f"{type(exc).__name__}: {exc}"
                continue
            if key_of_code in seen:
                original_id = seen[key_of_code]
                mutant.status, mutant.path = "Ignored", "none"
                mutant.status_reason = (
                    f"duplicate of {original_id}"
                    if original_id
                    else "equivalent: compiles to the same code as the original"
                )
                continue
            seen[key_of_code] = mutant_id
            mutant.cache_key = _digest(
                __version__,
                mutant_id,
                site.replacement,
                key_of_code
                if mutant.path == "swap"
                else (source, mutant.rerun_lines, self._consumed_from(mutant.consumers)),
                tests_run.contents,
                reach.contents,
                self.shared_sources,
            )
        swaps.save()
        for table, count in left_out.items():
            self.data_tables[(relative, table.line)] = DataTableSample(
                file=relative,
                line=table.line,
                end_line=table.end_line,
                entries=len(table.entries),
                mutated_entries=len(table.sampled),
                left_out=count,
            )
        return planned

    def _choose_path(
        self,
        mutant: PlannedMutant,
        site: Site,
        at_import: bool,
        swaps: _Swaps,
        reexecution: Reexecution,
        mutated: str,
        seen: dict[tuple, str],
    ) -> tuple:
        """Choose the path, fill in what it needs, return the mutant's TCE key.

        Swap-path mutants compile only their function; the original's key is registered
        in `seen` with an empty id, so a mutant that compiles to the original's code
        reads as equivalent. Module-path mutants are compiled by the runner's child, which
        reports a syntax error as CompileError. A mutant only subprocesses run (the
        `subprocess` path) is applied in none of the child's own code, but its function
        is compiled all the same, for the equivalence and the syntax check."""
        in_process = "swap" if mutant.tests else "subprocess"
        if not at_import:
            swap = swaps.get(site, mutated)
            if swap is not None:
                mutant.path = in_process
                if in_process == "swap":
                    mutant.function_code = swap.code
                    mutant.target = swap.target
                seen.setdefault(("swap", site.function, swap.original), "")
                return ("swap", site.function, swap.mutated)
        mutant.path = "module" if mutant.tests else "subprocess"
        if mutant.path == "module":
            original = mutant.source[site.start : site.end]
            added = site.replacement.count("\n") - original.count("\n")
            mutant.rerun_lines = reexecution.lines_to_rerun(site.line, site.end_line, added)
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
        return [consumers, [self._file_digest(file) for file in files]]


@dataclass(frozen=True)
class Swap:
    """A mutant's function compiled for the swap path."""

    original: str
    """Digest of the original function's code (trivial compiler equivalence)."""
    mutated: str
    """Digest of the mutated function's code."""
    code: bytes
    """zlib-compressed marshal of the mutated function's code object."""
    target: tuple[int, str]
    """(co_firstlineno, co_name) of the original function, to find it alive."""


def _code_digest(code: CodeType) -> str:
    return hashlib.sha256(repr(fingerprint(code)).encode()).hexdigest()


class _Swaps:
    """One source's swap-path compilations, by site; remembered across runs, since
    compiling every mutant is most of a rerun's planning once the sites are known."""

    def __init__(self, compiler: _FunctionCompiler, cache: SiteCache | None, salt: str) -> None:
        self.compiler = compiler
        self.cache = cache
        self.key = _digest(salt, compiler.source)
        self.known: dict[str, Swap | None] = (cache.get_swaps(self.key) if cache else None) or {}
        self.added = False
        self.original_digests: dict[str, str] = {}

    def get(self, site: Site, mutated: str) -> Swap | None:
        """None where the function cannot be compiled on its own (the module path);
        raises SyntaxError for a mutant that does not compile."""
        local_id = site.local_id()
        if local_id not in self.known:
            original = self.compiler.original(site)
            new = self.compiler.mutated(site, mutated)
            if original is not None and site.function not in self.original_digests:
                self.original_digests[site.function] = _code_digest(original)
            self.known[local_id] = (
                None
                if original is None or new is None
                else Swap(
                    self.original_digests[site.function],
                    _code_digest(new),
                    zlib.compress(marshal.dumps(new), 1),
                    (original.co_firstlineno, original.co_name),
                )
            )
            self.added = True
        return self.known[local_id]

    def save(self) -> None:
        if self.added and self.cache is not None:
            self.cache.put_swaps(self.key, self.known)


class _FunctionCompiler:
    """Compile one function (or method) of a source on its own, at its own line numbers.

    Methods are compiled inside a class of the same name, so `super()` gets the same
    closure cell; functions nested in blocks fall back to compiling the whole module."""

    def __init__(self, source: str, filename: str, line_starts: list[int]) -> None:
        self.source = source
        self.filename = filename
        self.line_starts = line_starts
        self._originals: dict[str, CodeType | None] = {}

    def _compile(self, site: Site, text: str, end: int) -> CodeType | None:
        classes = site.function_classes
        padding = site.function_first_line - 1 - len(classes)
        if padding < 0:
            return None
        wrapper = "".join(f"{' ' * depth}class {name}:\n" for depth, name in enumerate(classes))
        snippet = text[self.line_starts[site.function_first_line - 1] : end]
        try:
            code = compile_module("\n" * padding + wrapper + snippet + "\n", self.filename)
        except SyntaxError:
            return None
        return find_function(code, site.function, site.function_line)

    def _whole_module(self, site: Site, text: str) -> CodeType | None:
        return find_function(compile_module(text, self.filename), site.function, site.function_line)

    def original(self, site: Site) -> CodeType | None:
        if site.function not in self._originals:
            code = self._compile(site, self.source, site.function_end)
            if code is None:
                code = self._whole_module(site, self.source)
            self._originals[site.function] = code
        return self._originals[site.function]

    def mutated(self, site: Site, mutated: str) -> CodeType | None:
        delta = len(site.replacement) - len(site.original)
        code = self._compile(site, mutated, site.function_end + delta)
        if code is None:
            code = self._whole_module(site, mutated)  # raises SyntaxError if broken
        return code


def compile_swaps(
    source: str, filename: str, sites: list[Site], salt: str, cache: SiteCache
) -> None:
    """Compile the swap-path code of every site in a function into the cache, before the
    baseline says which of them planning will run (the early-sites helper does it on the
    core the baseline leaves idle: most of a first run's planning on a large module)."""
    compiler = _FunctionCompiler(source, filename, _line_starts(source))
    swaps = _Swaps(compiler, cache, salt)
    for site in sites:
        if site.function:
            with contextlib.suppress(SyntaxError, ValueError):  # planning reports those
                swaps.get(site, site.apply(source))
    swaps.save()


def plan(planner: Planner, files: Iterable[Path]) -> list[PlannedMutant]:
    """Every mutant of the files. With a cache, the sites and compilations of sources
    that are no longer the project's are dropped (each edit of a file would add some)."""
    mutants: list[PlannedMutant] = []
    for path in sorted(files):
        mutants.extend(planner.plan_file(path))
    if planner.site_cache is not None:
        planner.site_cache.keep_plans(planner.plan_keys)
    return mutants
