"""Probe and witness results kept between runs, keyed by content as mutant verdicts are.

A function's probes depend on what it is probed with (its spec: observed arguments,
documented raises, literals of its docstring), on the probe settings, on the code they
ran (`probes.ran`: the function bodies started), and on what every probe depends on:
each module's code outside function bodies (what importing it does, class bodies,
signatures) and the constants of the code under test, which Hypothesis draws as inputs.
A witness search depends on the same, and on its mutant and the functions it searches
through. The key covers exactly that, never paths or times: a rerun with nothing
changed runs no probe, and an edit of one function probes again what ran it.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from auditor import __version__
from auditor.containment import wire
from auditor.discovery.project import relative
from auditor.mutation.cache import ResultCache
from auditor.mutation.ran_code import code_of, text_of
from auditor.probes.protocol import FunctionResult, SurvivorSpec, TargetSpec, WitnessResult
from auditor.probes.ran import Ran

_ALL_BODIES = "*"
"""The name a kept result gives every function body at once: one whose probe recorded
nothing (before Python 3.12) depends on all of them."""


class ProbeCache:
    """`targets`: every probeable function, by key. A witness search depends on the
    functions it searches through as well (the inputs they are probed with)."""

    def __init__(
        self,
        cache: ResultCache,
        root: Path,
        source_files: Iterable[Path],
        settings: object,
        targets: Mapping[str, TargetSpec],
    ) -> None:
        self._code = SourceCode(root, source_files)
        digest = hashlib.sha256()
        for part in (
            __version__,
            _hypothesis_version(),
            json.dumps(settings, sort_keys=True),
            self._code.shared,
        ):
            digest.update(part.encode())
        self._salt = digest.hexdigest()
        self._cache = cache
        self._targets = targets
        self._contents: dict[str, str] = {}
        """Each target's content as JSON, made once: a witness search's key holds the
        content of every function it searches through, and many survivors share them."""

    def _key(self, kind: str, spec: TargetSpec | SurvivorSpec) -> str:
        if isinstance(spec, SurvivorSpec):
            # The text json.dumps([content, [target, ...]]) gives, so kept keys still match.
            searched = ", ".join(self._content(self._targets[key]) for key in spec.targets)
            content = f"[{json.dumps(spec.content())}, [{searched}]]"
        else:
            content = self._content(spec)
        return hashlib.sha256(f"{self._salt}\0{kind}\0{content}".encode()).hexdigest()

    def _content(self, spec: TargetSpec) -> str:
        if spec.key not in self._contents:
            self._contents[spec.key] = json.dumps(_target_content(spec))
        return self._contents[spec.key]

    def probes(self, spec: TargetSpec) -> FunctionResult | None:
        return self._kept(FunctionResult, self._key("probe", spec))

    def witness(self, spec: SurvivorSpec) -> WitnessResult | None:
        return self._kept(WitnessResult, self._key("witness", spec))

    def keep_probes(self, spec: TargetSpec, result: FunctionResult) -> None:
        if not result.ended:  # a probe process that died or ran out of time: try again
            kept = dataclasses.replace(result, ran=None)
            self._keep(self._key("probe", spec), kept, self._code.bodies_of(result.ran))

    def keep_witness(self, spec: SurvivorSpec, result: WitnessResult) -> None:
        kept = dataclasses.replace(result, ran=None)
        self._keep(self._key("witness", spec), kept, self._code.bodies_of(result.ran))

    def _keep(
        self, key: str, result: FunctionResult | WitnessResult, ran: list[tuple[str, str]]
    ) -> None:
        value = json.dumps({"ran": ran, "result": wire.encode(result)})
        self._cache.put_probe(key, value)

    def _kept(self, model: type[Result], key: str) -> Result | None:
        """The result kept under `key` while every body its probe ran is as it was."""
        value = self._cache.get_probe(key)
        if value is None:
            return None
        try:
            kept = json.loads(value)
            ran, result = kept["ran"], kept["result"]
        except (ValueError, TypeError, KeyError):
            return None  # written by another version: a miss
        if not all(self._code.digest(name) == digest for name, digest in ran):
            return None
        return _parsed(model, result)

    def close(self) -> None:
        self._cache.close()


Result = TypeVar("Result", FunctionResult, WitnessResult)


def _target_content(spec: TargetSpec) -> dict[str, object]:
    """What a function is probed with, not where the project lies (its path)."""
    fields = dataclasses.asdict(spec)
    return {key: fields[key] for key in sorted(fields) if key != "path"}


class SourceCode:
    """The code under test as the probes' results depend on it: read once per run."""

    def __init__(self, root: Path, source_files: Iterable[Path]) -> None:
        self._bodies: dict[str, str] = {}
        """Each function body (`file::C.m`, as `mutation.ran_code` names them): the
        digest of its text."""
        self._spans: dict[str, tuple[str, list[tuple[int, int, str]]]] = {}
        """By real path: the file as the report names it, and its bodies' lines."""
        shared = hashlib.sha256()
        for path in sorted(source_files):
            file, text = relative(path, root), text_of(path)
            bodies, outside = code_of(text)
            shared.update(f"{file}\n{outside}\n{_constants(text)}\n".encode())
            self._spans[os.path.realpath(path)] = (
                file,
                [(first, last, name) for name, first, last, _ in bodies],
            )
            self._bodies.update((f"{file}::{name}", digest) for name, _, _, digest in bodies)
        self.shared = shared.hexdigest()
        """Every file's code outside function bodies, and its constants."""
        every = hashlib.sha256()
        for name, digest in sorted(self._bodies.items()):
            every.update(f"{name}\n{digest}\n".encode())
        self._bodies[_ALL_BODIES] = every.hexdigest()

    def digest(self, name: str) -> str | None:
        return self._bodies.get(name)

    def bodies_of(self, ran: Ran | None) -> list[tuple[str, str]]:
        """The bodies, with their digests, of the functions a probe ran (each named by a
        line inside it); all of them when it recorded none."""
        if ran is None:
            return [(_ALL_BODIES, self._bodies[_ALL_BODIES])]
        names = {self._body_at(path, line) for path, line in ran}
        return [(name, self._bodies[name]) for name in sorted(names - {None})]

    def _body_at(self, path: str, line: int) -> str | None:
        """The body holding `line`; None for code outside every body (a class body's
        method of a nested class, a lambda at module level), which `shared` covers."""
        file, spans = self._spans.get(path, ("", []))
        for first, last, name in spans:
            if first <= line <= last:
                return f"{file}::{name}"
        return None


@functools.lru_cache(maxsize=2048)
def _constants(text: str) -> str:
    """A digest of the module's constants, which Hypothesis also draws as inputs for every
    function (its "local constants"): each literal and negated literal, once, sorted.
    Left out as Hypothesis leaves them out: strings standing alone (docstrings) and the
    parts of f-strings."""
    collector = _Constants()
    try:
        collector.visit(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError):
        return hashlib.sha256(text.encode()).hexdigest()
    return hashlib.sha256("\n".join(sorted(collector.found)).encode()).hexdigest()


class _Constants(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: set[str] = set()

    def visit_Constant(self, node: ast.Constant) -> None:
        self.found.add(repr(node.value))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.operand, ast.Constant):
            self.found.add(f"{type(node.op).__name__} {node.operand.value!r}")
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return


def _parsed(model: type[Result], value: str) -> Result | None:
    try:
        return wire.decode(model, value)
    except ValueError:
        return None  # written by another version of the report model: a miss


def _hypothesis_version() -> str:
    try:
        return importlib.metadata.version("hypothesis")
    except importlib.metadata.PackageNotFoundError:
        return ""
