"""Which planned mutants a run executes: all, the lines a git diff touches, one shard of
a CI matrix, or a stratified random sample (with an honest confidence interval).

Every choice is a pure function of the stable mutant ids, the diff and the seed, so the
same inputs select the same mutants on any machine."""

from __future__ import annotations

import fnmatch
import hashlib
import math
import random
import re
import subprocess
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from auditor.config import AuditConfig, shard_parts
from auditor.discovery.project import Project
from auditor.errors import ConfigError, DiffError
from auditor.mutation.compiler import function_last_line, line_starts
from auditor.mutation.plan import PlannedMutant
from auditor.report import BaselineSection, Scope, TestResult

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Shard:
    index: int
    """1-based, as written on the command line: `--shard 2/8`."""
    total: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            return cls(*shard_parts(text))
        except ValueError as exc:
            raise ConfigError(f"--shard {exc}") from None

    def holds(self, mutant_id: str) -> bool:
        digest = hashlib.sha256(mutant_id.encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.total == self.index - 1


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60
        )
    except FileNotFoundError:
        raise DiffError("git is not installed; --diff needs it") from None
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or ["git failed"])[-1]
        raise DiffError(f"git {' '.join(args[:2])} in {root}: {message}")
    return done.stdout


def check_ref(root: Path, ref: str) -> None:
    """Fail before any test runs when `ref` names no commit here."""
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except DiffError as exc:
        if not exc.message.endswith("git failed"):  # --quiet: an unknown ref says nothing
            raise
        raise DiffError(
            f"unknown git ref '{ref}' in {root}; in a shallow CI checkout, fetch it first"
            " (actions/checkout: fetch-depth: 0)"
        ) from None


def changed_lines(root: Path, ref: str) -> dict[str, set[int]]:
    """Lines of files under `root` (paths relative to it) that differ from `ref`,
    uncommitted changes and untracked files included. A deletion marks the lines around
    it, so the function it was cut from counts as changed."""
    check_ref(root, ref)
    changed: dict[str, set[int]] = defaultdict(set)
    current = None
    diff = _git(root, "diff", "--relative", "--unified=0", "--no-color", "--no-ext-diff", ref)
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = None if line == "+++ /dev/null" else line[6:]
        elif current is not None and (match := _HUNK.match(line)):
            start, count = int(match[1]), int(match[2] if match[2] is not None else 1)
            lines = range(start, start + count) if count else (max(start, 1), start + 1)
            changed[current].update(lines)
    untracked = _git(root, "ls-files", "--others", "--exclude-standard")
    for path in untracked.splitlines():
        try:
            count = len((root / path).read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            continue
        changed[path].update(range(1, count + 1))
    return dict(changed)


def touched_by_diff(
    mutants: Iterable[PlannedMutant],
    changed: dict[str, set[int]],
    ran_by_changed_tests: dict[str, set[int]],
) -> tuple[list[PlannedMutant], int]:
    """Mutants on changed lines, and those of the functions the changed tests call, so a
    new or rewritten test is checked against the code it exercises, not every line its
    imports ran at collection (`ran_by_changed_tests`: the lines those tests ran, per
    file). Also how many are in only for the tests."""
    chosen, called = [], 0
    ends = _FunctionEnds()
    for mutant in mutants:
        site = mutant.site
        if _any_in(changed.get(mutant.file, ()), site.line, site.end_line):
            chosen.append(mutant)
            continue
        ran = ran_by_changed_tests.get(mutant.file, ())
        if site.function:  # the function's body, from the line after its `def`
            called_here = _any_in(ran, site.function_line + 1, ends.line(mutant))
        else:
            called_here = _any_in(ran, site.line, site.end_line)
        if called_here:
            chosen.append(mutant)
            called += 1
    return chosen, called


def _any_in(lines: Collection[int], first: int, last: int) -> bool:
    return any(line in lines for line in range(first, last + 1))


class _FunctionEnds:
    """The last line of each mutant's function, from its character offset."""

    def __init__(self) -> None:
        self._starts: dict[str, list[int]] = {}

    def line(self, mutant: PlannedMutant) -> int:
        starts = self._starts.get(mutant.file)
        if starts is None:
            starts = self._starts[mutant.file] = line_starts(mutant.source)
        return function_last_line(mutant.site, starts)


def _strata(mutants: Sequence[PlannedMutant]) -> dict[tuple[str, str], list[PlannedMutant]]:
    """Mutants by (file, operator family), each stratum in id order."""
    strata: dict[tuple[str, str], list[PlannedMutant]] = defaultdict(list)
    for mutant in sorted(mutants, key=lambda m: m.id):
        strata[mutant.file, mutant.site.family].append(mutant)
    return strata


def stratified_order(mutants: Sequence[PlannedMutant], seed: int) -> list[PlannedMutant]:
    """A random order in which every prefix is close to a proportional stratified sample
    by (file, operator family): each stratum is shuffled, then strata are interleaved by
    each mutant's fractional position in its own stratum."""
    strata = _strata(mutants)
    keyed = []
    for key, members in sorted(strata.items()):
        rng = random.Random(f"{seed}:{key[0]}:{key[1]}")
        rng.shuffle(members)
        offset = rng.random()
        for position, mutant in enumerate(members):
            keyed.append(((position + offset) / len(members), mutant.id, mutant))
    return [mutant for _, _, mutant in sorted(keyed, key=lambda item: item[:2])]


def stratified_sample(
    mutants: Sequence[PlannedMutant], size: int, seed: int
) -> list[PlannedMutant]:
    """Exactly `size` mutants (or all), allocated to strata in proportion to their size
    (largest remainder), chosen at random within each."""
    if size >= len(mutants):
        return list(mutants)
    strata = _strata(mutants)
    total = len(mutants)
    quotas = {key: size * len(members) / total for key, members in strata.items()}
    allocation = {key: math.floor(quota) for key, quota in quotas.items()}
    remainder = size - sum(allocation.values())
    by_remainder = sorted(quotas, key=lambda key: (-(quotas[key] - allocation[key]), key))
    for key in by_remainder[:remainder]:
        allocation[key] += 1
    chosen = []
    for key, members in sorted(strata.items()):
        rng = random.Random(f"{seed}:{key[0]}:{key[1]}")
        chosen += rng.sample(members, allocation[key])
    return sorted(chosen, key=lambda m: m.id)


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% by default), in [0, 1]."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mutated_files(project: Project, config: AuditConfig) -> list[Path]:
    """The files of the code under test less those `do_not_mutate` names."""
    return [
        path
        for path in project.source_files
        if not any(fnmatch.fnmatch(project.relative(path), glob) for glob in config.do_not_mutate)
    ]


def _ran_by(tests: Iterable[TestResult]) -> dict[str, set[int]]:
    """The lines the tests ran in their own phases, in process or in subprocesses (not
    at import or collection time), per file."""
    ran: dict[str, set[int]] = defaultdict(set)
    for test in tests:
        for lines in (test.lines, test.subprocess_lines):
            for file, numbers in lines.items():
                ran[file].update(numbers)
    return ran


@dataclass(frozen=True)
class DiffScope:
    """What a `--diff` run is about: the changed lines, the changed test files, and the
    lines those files' tests ran in their own phases (per file)."""

    ref: str
    changed: dict[str, set[int]]
    changed_tests: list[str]
    ran: dict[str, set[int]]

    @property
    def files(self) -> set[str]:
        """The only files that can hold a mutant in scope."""
        return {*self.changed, *self.ran}

    def reaches(self, file: str, first: int, last: int) -> bool:
        """Whether any of lines `first` to `last` of `file` changed or ran in a changed
        test: the functions (and module-level statements) planned, of which
        `touched_by_diff` then takes its mutants."""
        changed, ran = self.changed.get(file, ()), self.ran.get(file, ())
        return _any_in(changed, first, last) or _any_in(ran, first, last)


def diff_scope(
    project: Project, config: AuditConfig, baseline: BaselineSection
) -> DiffScope | None:
    if not config.diff:
        return None
    changed = changed_lines(project.root, config.diff)
    test_files = {project.relative(path) for path in project.test_files}
    changed_tests = sorted(test_files & set(changed))
    ran = _ran_by(test for test in baseline.tests if test.file in changed_tests)
    return DiffScope(config.diff, changed, changed_tests, dict(ran))


def select_scope(
    config: AuditConfig, planned: list[PlannedMutant], diff: DiffScope | None
) -> tuple[list[PlannedMutant], Scope]:
    """`planned`: in a `--diff` run, every mutant of the files it can reach
    (`DiffScope.files`); otherwise every mutant of the project."""
    if diff is not None:
        in_scope, called = touched_by_diff(planned, diff.changed, diff.ran)
        scope = Scope(
            kind="diff",
            diff_ref=diff.ref,
            changed_files=sorted(diff.changed),
            changed_tests=diff.changed_tests,
            on_changed_lines=len(in_scope) - called,
            called_by_changed_tests=called,
            changed_lines={
                path: sorted(lines)
                for path, lines in sorted(diff.changed.items())
                if path.endswith(".py")
            },
        )
    elif config.shard:
        shard = Shard.parse(config.shard)
        in_scope = [m for m in planned if shard.holds(m.id)]
        scope = Scope(kind="shard", shard=f"{shard.index}/{shard.total}")
    else:
        in_scope, scope = planned, Scope()
    scope.planned, scope.selected = len(planned), len(in_scope)
    return in_scope, scope
