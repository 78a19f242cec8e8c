"""What the probe stage sends its child process, and what comes back."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from auditor.report import FunctionProbe, ProbeFinding, Witness


class TargetSpec(BaseModel):
    key: str
    file: str
    """Relative to the project root."""
    path: str
    """Absolute (real) path."""
    module: str
    qualname: str
    line: int
    kind: str
    raises: list[tuple[int, str]]
    unreached_raise_lines: list[int]
    """`raise` lines no reliable test executed in the baseline."""
    documented_raises: list[str]
    doc_literals: list[str]
    observed: list[dict[str, tuple[str, str]]]


class SurvivorSpec(BaseModel):
    mutant_id: str
    description: str
    path: str
    """Absolute (real) path of the mutated file."""
    first_line: int
    name: str
    """`co_firstlineno` and `co_name` of the mutated function."""
    code_b64: str = ""
    """The mutated function's code (marshal); '' for an import-time mutant."""
    module_name: str = ""
    module_source: str = ""
    """For an import-time mutant: the whole mutated module, re-executed in place."""
    rerun_lines: list[tuple[int, int]] = []
    """Of `module_source`, the statements to run again; empty: all (`reexecution`)."""
    targets: list[str]
    """Keys of the targets to search through, best first."""

    def code(self) -> bytes:
        return base64.b64decode(self.code_b64)


SEARCH_CHUNK = 100
"""Survivors per witness-search item at most: a larger group is split so that both
processes share it, each part generating the group's inputs again (about a second)."""


def search_items(survivors: list[SurvivorSpec]) -> dict[str, list[SurvivorSpec]]:
    """The witness-search items: survivors of one file searched through the same
    functions (whose inputs are generated once for all of them), in parts of at most
    `SEARCH_CHUNK`. audit and its probe processes both derive them from the survivors."""
    groups: dict[str, list[SurvivorSpec]] = {}
    for survivor in sorted(survivors, key=lambda s: s.mutant_id):
        groups.setdefault(f"{survivor.path}::{','.join(survivor.targets)}", []).append(survivor)
    items = {}
    for group, members in groups.items():
        for start in range(0, len(members), SEARCH_CHUNK):
            items[f"{group}#{start // SEARCH_CHUNK}"] = members[start : start + SEARCH_CHUNK]
    return items


class ProbeSpec(BaseModel):
    root: str
    source_files: list[str]
    allowed_roots: list[str]
    guard: bool
    memory_limit_mb: int
    growth_limit_mb: int
    """How far a forked probe's address space may grow beyond its parent's."""
    log_file: str
    results_file: str
    max_examples: int
    witness_examples: int
    time_budget: float
    call_timeout: float
    expected_exceptions: list[str]
    targets: list[TargetSpec]
    """Every probeable function (witness searches may call any of them)."""
    survivors: list[SurvivorSpec]
    items: list[tuple[Literal["probe", "search"], str]]
    """The work audit may hand out: a target's probes (by key), or the witness searches
    of a group of survivors (`search_items`). Every probe process gets them all."""

    def write(self, path: Path) -> None:
        path.write_text(self.model_dump_json(), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> ProbeSpec:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


class FunctionResult(BaseModel):
    probe: FunctionProbe
    findings: list[ProbeFinding] = Field(default_factory=list)


class WitnessResult(BaseModel):
    witness: Witness
