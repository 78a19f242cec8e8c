"""Probe and witness results kept between runs, keyed by content as mutant verdicts are.

A function's probes depend on the code it can call (any module of the code under
test), on what it is probed with (its spec: observed arguments, documented raises,
literals of its docstring) and on the probe settings; a witness search on the mutant
too. The key covers exactly that, never paths or times: a rerun with nothing changed
runs no probe, and a change anywhere in the code under test probes again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from auditor import __version__
from auditor.containment import wire
from auditor.discovery.project import relative
from auditor.mutation.cache import ResultCache
from auditor.probes.protocol import FunctionResult, SurvivorSpec, TargetSpec, WitnessResult


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
        digest = hashlib.sha256()
        for part in (__version__, _hypothesis_version(), json.dumps(settings, sort_keys=True)):
            digest.update(part.encode())
        for path in sorted(source_files):
            digest.update(relative(path, root).encode())
            digest.update(path.read_bytes())
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
        value = self._cache.get_probe(self._key("probe", spec))
        return None if value is None else _parsed(FunctionResult, value)

    def witness(self, spec: SurvivorSpec) -> WitnessResult | None:
        value = self._cache.get_probe(self._key("witness", spec))
        return None if value is None else _parsed(WitnessResult, value)

    def keep_probes(self, spec: TargetSpec, result: FunctionResult) -> None:
        if not result.ended:  # a probe process that died or ran out of time: try again
            self._cache.put_probe(self._key("probe", spec), wire.encode(result))

    def keep_witness(self, spec: SurvivorSpec, result: WitnessResult) -> None:
        self._cache.put_probe(self._key("witness", spec), wire.encode(result))

    def close(self) -> None:
        self._cache.close()


Result = TypeVar("Result", FunctionResult, WitnessResult)


def _target_content(spec: TargetSpec) -> dict[str, object]:
    """What a function is probed with, not where the project lies (its path)."""
    fields = dataclasses.asdict(spec)
    return {key: fields[key] for key in sorted(fields) if key != "path"}


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
