"""Compile mutated sources and compare code objects (trivial compiler equivalence); the
swap path's compilations, one function at a time, and the cache they are kept in."""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import marshal
import re
import zlib
from dataclasses import dataclass
from types import CodeType
from typing import Any, Protocol

from auditor.mutation.keys import digest, swaps_key
from mutators.sites import Site


def compile_module(source: str, filename: str) -> CodeType:
    """Raises SyntaxError (and ValueError for null bytes) like the import system would."""
    return compile(source, filename, "exec", dont_inherit=True)


def find_function(module_code: CodeType, qualname: str, def_line: int) -> CodeType | None:
    """The code object of `qualname` in a compiled module.

    Names may repeat (a property's getter and setter): among same-named code objects,
    the one starting at or just before the `def` line (decorators come first) wins."""
    scope = module_code
    parts = qualname.split(".")
    for depth, part in enumerate(parts):
        candidates = [
            const
            for const in scope.co_consts
            if isinstance(const, CodeType) and const.co_name == part
        ]
        if depth == len(parts) - 1:
            candidates = [c for c in candidates if c.co_firstlineno <= def_line]
            candidates.sort(key=lambda c: c.co_firstlineno)
        if not candidates:
            return None
        scope = candidates[-1] if depth == len(parts) - 1 else candidates[0]
    return scope


def _stable_repr(const: object) -> str:
    """repr, with sets in a fixed order: a frozenset constant (`x in {"a", "b"}`) prints
    in hash order, which changes with every process and would change cache keys."""
    if isinstance(const, frozenset):
        return "frozenset({" + ", ".join(sorted(_stable_repr(item) for item in const)) + "})"
    if isinstance(const, tuple):
        return "(" + ", ".join(_stable_repr(item) for item in const) + ",)"
    return repr(const)


def fingerprint(code: CodeType) -> tuple[Any, ...]:
    """What the interpreter executes, without line and column tables."""
    consts = tuple(
        fingerprint(const)
        if isinstance(const, CodeType)
        else (type(const).__name__, _stable_repr(const))
        for const in code.co_consts
    )
    return (
        code.co_code,
        consts,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_flags,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
    )


def line_starts(source: str) -> list[int]:
    """The offset of each line's first character, and the source's length last."""
    starts = [0]
    for text in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(text))
    return starts


def function_last_line(site: Site, starts: list[int]) -> int:
    """The last line of the site's function (`starts`: `line_starts` of its source)."""
    return bisect.bisect_right(starts, site.function_end - 1)


class SiteCache(Protocol):
    def get_sites(self, key: str) -> list[Site] | None: ...

    def put_sites(self, key: str, sites: list[Site]) -> None: ...

    def get_swaps(self, key: str) -> dict[str, dict[str, Swap | None]] | None: ...

    def put_swaps(self, key: str, swaps: dict[str, dict[str, Swap | None]]) -> None: ...

    def keep_plans(self, keys: set[str]) -> None: ...


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


_FUTURE = re.compile(r"^from __future__ import .*$", re.MULTILINE)


class Swaps:
    """One file's swap-path compilations, by function, then by site; remembered across
    runs, each function's for as long as its text and place in the file stay the same:
    an edit compiles again only the functions it touched (compiling every mutant is most
    of a rerun's planning once the sites are known)."""

    def __init__(
        self, compiler: FunctionCompiler, sites: list[Site], cache: SiteCache | None, salt: str
    ) -> None:
        """`sites`: all of the file's, to know which functions it has now."""
        self.compiler = compiler
        self.cache = cache
        self.key = swaps_key(salt, compiler.filename)
        self._future = "\n".join(_FUTURE.findall(compiler.source))
        self._function_keys: dict[tuple[str, int], str] = {}
        current = {self._function_key(site) for site in sites if site.function}
        stored = (cache.get_swaps(self.key) if cache else None) or {}
        self.known = {key: stored.get(key, {}) for key in sorted(current)}
        """Per function of the file now, its sites' compilations."""
        self.added = stored.keys() != self.known.keys()
        self.original_digests: dict[tuple[str, int], str] = {}

    def _function_key(self, site: Site) -> str:
        """What the function's code depends on: its text and lines, the classes around
        it, the module's `__future__` imports (a whole-module compile sees them)."""
        place = (site.function, site.function_line)
        if place not in self._function_keys:
            starts = self.compiler.line_starts
            text = self.compiler.source[starts[site.function_first_line - 1] : site.function_end]
            self._function_keys[place] = digest(
                *place, site.function_first_line, site.function_classes, self._future, text
            )
        return self._function_keys[place]

    def get(self, site: Site, mutated: str) -> Swap | None:
        """None where the function cannot be compiled on its own (the module path);
        raises SyntaxError for a mutant that does not compile."""
        known = self.known.setdefault(self._function_key(site), {})
        local_id = site.local_id()
        if local_id not in known:
            original = self.compiler.original(site)
            new = self.compiler.mutated(site, mutated)
            place = (site.function, site.function_line)
            if original is not None and place not in self.original_digests:
                self.original_digests[place] = _code_digest(original)
            known[local_id] = (
                None
                if original is None or new is None
                else Swap(
                    self.original_digests[place],
                    _code_digest(new),
                    zlib.compress(marshal.dumps(new), 1),
                    (original.co_firstlineno, original.co_name),
                )
            )
            self.added = True
        return known[local_id]

    def save(self) -> None:
        if self.added and self.cache is not None:
            self.cache.put_swaps(self.key, self.known)


class FunctionCompiler:
    """Compile one function (or method) of a source on its own, at its own line numbers.

    Methods are compiled inside a class of the same name, so `super()` gets the same
    closure cell; functions nested in blocks fall back to compiling the whole module."""

    def __init__(self, source: str, filename: str, line_starts: list[int]) -> None:
        self.source = source
        self.filename = filename
        self.line_starts = line_starts
        self._originals: dict[tuple[str, int], CodeType | None] = {}
        """Per function, by name and `def` line: a property's getter and setter share
        the name."""

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
        place = (site.function, site.function_line)
        if place not in self._originals:
            code = self._compile(site, self.source, site.function_end)
            if code is None:
                code = self._whole_module(site, self.source)
            self._originals[place] = code
        return self._originals[place]

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
    compiler = FunctionCompiler(source, filename, line_starts(source))
    swaps = Swaps(compiler, sites, cache, salt)
    for site in sites:
        if site.function:
            with contextlib.suppress(SyntaxError, ValueError):  # planning reports those
                swaps.get(site, site.apply(source))
    swaps.save()
