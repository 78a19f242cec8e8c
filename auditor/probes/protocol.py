"""What the probe stage sends its probe processes, and what comes back, as
`auditor.containment.wire` sends it: the spec file, the work file, then one result per
line."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from auditor.mutation.protocol import Job
from auditor.report import FunctionProbe, ProbeFinding, Witness


@dataclass
class TargetSpec:
    key: str
    file: str
    """Relative to the project root."""
    path: str
    """Absolute (real) path."""
    module: str
    qualname: str
    line: int
    kind: str
    raises: list[tuple[int, str, str]]
    """Each `raise`: its line, the class it names (`Raise.exception`), what it raises."""
    unreached_raise_lines: list[int]
    """`raise` lines no reliable test executed in the baseline."""
    documented_raises: list[str]
    doc_literals: list[str]
    observed: list[dict[str, tuple[str, str]]]
    constructions: dict[str, list[dict[str, tuple[str, str]]]] = field(default_factory=dict)
    """For a method: the arguments of the `__init__` calls whose `self` was of its
    class, by the `__init__`'s qualname (a subclass's own `__init__` calls its base's
    with other arguments: only the one the class resolves to builds it)."""


@dataclass
class Reads:
    """Where the code of an import-time survivor's file reads, when called, what the
    mutated statement makes (`ReadIndex.value_readers`): an input that runs none of it
    sees the original's values, whatever it calls."""

    names: list[str]
    lines: list[int]
    """The lines of the statement and of the functions that name its values."""


@dataclass
class SurvivorSpec:
    job: Job
    """The payload the mutation stage ran the mutant with (`MutationRun.survivors`)."""
    description: str
    targets: list[str]
    """Keys of the targets to search through, best first."""
    first_line: int = 0
    last_line: int = 0
    """The lines the mutant changes: an input must run them to say it changes nothing."""
    direct: bool = False
    """The search calls the mutant's own function (not others of its file)."""
    inputs: dict[str, int] = field(default_factory=dict)
    """Inputs generated for each of its targets: the most any survivor of the stage
    takes from that function (a search takes its functions' inputs in turn,
    `witness_examples` in all). Every search through a function uses the same inputs,
    generated once per probe process; a target not named gets its share."""
    reads: Reads | None = None
    """For an import-time mutant whose values only its file's code reads, and by name:
    where. None: any input may read them."""

    @property
    def mutant_id(self) -> str:
        return self.job.id

    @property
    def path(self) -> str:
        """Absolute (real) path of the mutated file."""
        return self.job.file

    def content(self) -> dict[str, object]:
        """What the search depends on besides the code under test: the mutant and where
        to search it, not where the project lies or how long its tests took."""
        job = self.job
        return {
            "mutant": [job.id, self.description, job.path, job.module_name],
            "function": [job.target_line, job.target_name, job.code_b64],
            "patch": [job.patch_start, job.patch_end, job.replacement, job.rerun_lines],
            "consumers": [consumer[1:] for consumer in job.consumers],
            "targets": self.targets,
            "inputs": self.inputs,
            "lines": [self.first_line, self.last_line, self.direct],
            "reads": None if self.reads is None else [self.reads.names, self.reads.lines],
        }


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


def input_counts(survivors: list[SurvivorSpec], witness_examples: int) -> list[SurvivorSpec]:
    """The survivors, each with the inputs to generate for its targets (`inputs`)."""
    most: dict[str, int] = {}
    for survivor in survivors:
        for key in survivor.targets:
            most[key] = max(most.get(key, 0), share_of(survivor, witness_examples))
    return [
        replace(survivor, inputs={key: most[key] for key in survivor.targets})
        for survivor in survivors
    ]


def share_of(survivor: SurvivorSpec, witness_examples: int) -> int:
    """The inputs a survivor's search takes from each of its functions."""
    return -(-witness_examples // len(survivor.targets))


@dataclass
class ProbeSpec:
    """What a probe process starts with: known before any test runs, so that it can start
    beside the baseline."""

    root: str
    source_files: list[str]
    allowed_roots: list[str]
    guard: bool
    memory_limit_mb: int
    log_file: str
    results_file: str
    max_examples: int
    witness_examples: int
    time_budget: float
    call_timeout: float
    expected_exceptions: list[str]
    modules: list[str] = field(default_factory=list)
    """The modules of the functions to probe, imported before the first fork."""
    searches: bool = False
    """Whether witness searches may come (the mutation stage runs): their tests import
    pytest, which the process then imports once, before the guard."""


@dataclass
class ProbeWork:
    """What a probe process gets once the mutation stage has found the survivors, the
    path of a file holding it as its first line on stdin."""

    targets: list[TargetSpec]
    """Every probeable function (witness searches may call any of them), with what the
    baseline saw of it."""
    survivors: list[SurvivorSpec]
    items: list[tuple[Literal["probe", "search"], str]]
    """The work audit may hand out: a target's probes (by key), or the witness searches
    of a group of survivors (`search_items`). Every probe process gets them all."""
    growth_limit_mb: int = 128
    """How far a forked probe's address space may grow beyond its parent's."""
    patterns: list[tuple[str, int, bool]] = field(default_factory=list)
    """The regular expressions the suite compiled, compiled before the first fork
    (`baseline.patterns`)."""


@dataclass
class FunctionResult:
    probe: FunctionProbe
    findings: list[ProbeFinding] = field(default_factory=list)
    kind: Literal["probes"] = "probes"
    ended: bool = False
    """No answer from the code: the probe's process ended or its time ran out (status
    `failed`). Not kept between runs, so the next run tries again; a function that
    cannot be made callable fails the same way every run, and is kept."""
    ran: list[tuple[str, int]] | None = None
    """The functions of the code under test the probe ran (`probes.ran`), or None where
    they could not be recorded."""


@dataclass
class WitnessResult:
    witness: Witness
    kind: Literal["witness"] = "witness"
    ran: list[tuple[str, int]] | None = None
    """The functions of the code under test its search ran (`probes.ran`), or None."""


ProbeResult = FunctionResult | WitnessResult
