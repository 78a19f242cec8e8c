"""The probe stage: choose what to probe, run the probe process under the sandbox, and
turn its results into the report's `probes` section."""

from __future__ import annotations

import dataclasses
import os
import select
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from auditor.context import RunContext
from auditor.discovery.project import Project
from auditor.mutation.cache import ResultCache
from auditor.mutation.mutant import MutantSources
from auditor.mutation.plan import read_index
from auditor.mutation.protocol import Job
from auditor.mutation.readers import ReadIndex
from auditor.probes.cache import ProbeCache
from auditor.probes.processes import (
    ProbeProcesses,
    probe_growth_limit_mb,
    send,
    witness_examples,
)
from auditor.probes.protocol import (
    FunctionResult,
    ProbeWork,
    Reads,
    SurvivorSpec,
    TargetSpec,
    WitnessResult,
    input_counts,
    search_items,
)
from auditor.probes.targets import Target, expected_exceptions, find_targets
from auditor.report import (
    BaselineSection,
    FunctionProbe,
    Mutant,
    MutationSection,
    ProbeFinding,
    ProbesSection,
    Witness,
)

WITNESS_CANDIDATES = 6
"""Public functions of the same file tried for a survivor in a function that cannot be
called directly (a private helper, a property, import-time code), observed ones first."""


def _targets(project: Project) -> list[Target]:
    found = []
    for path in project.source_files:
        module = project.module_name(path)
        found += find_targets(path, project.relative(path), module)
    return sorted(found, key=lambda target: target.key)


def _diff_functions(mutation: MutationSection | None) -> set[tuple[str, str]] | None:
    """The functions a `--diff` run is about (those of its mutants: on changed lines, or
    called by changed tests); None when the run is about the whole project."""
    if mutation is None or mutation.scope.kind != "diff":
        return None
    return {(mutant.file, mutant.function) for mutant in mutation.mutants}


def _allowed(target: Target, allow: list[str]) -> bool:
    return any(entry in (target.qualname, target.key, target.file) for entry in allow)


@dataclass(frozen=True)
class _Measured:
    """What the baseline says about the functions to probe, indexed once for all of them."""

    reached: dict[str, set[int]]
    """The lines reliable tests ran, by file."""
    observed: dict[tuple[str, str], list[dict[str, tuple[str, str]]]]
    """The calls the tests made, by (file, function)."""
    constructions: dict[str, dict[str, list[dict[str, tuple[str, str]]]]]
    """The `__init__` calls the tests made, without `self`: by the dotted name of the
    class built, then by the `__init__`'s qualname."""

    @classmethod
    def of(cls, baseline: BaselineSection) -> _Measured:
        reached: dict[str, set[int]] = defaultdict(set)
        for test in baseline.tests:
            if test.reliable:
                for file, lines in test.lines.items():
                    reached[file].update(lines)
        observed: dict[tuple[str, str], list[dict[str, tuple[str, str]]]] = {}
        for entry in baseline.observed:
            observed.setdefault((entry.file, entry.qualname), entry.calls)
        return cls(reached, observed, _constructions(baseline))


def _constructions(
    baseline: BaselineSection,
) -> dict[str, dict[str, list[dict[str, tuple[str, str]]]]]:
    """`_Measured.constructions`: the recorded `__init__` calls whose `self` was recorded
    too, by its class and the `__init__`'s qualname."""
    constructions: dict[str, dict[str, list[dict[str, tuple[str, str]]]]] = {}
    initializers = (e for e in baseline.observed if e.qualname.rpartition(".")[2] == "__init__")
    for entry in initializers:
        for call in (call for call in entry.calls if "self" in call):
            built = constructions.setdefault(call["self"][1], {})
            arguments = {name: value for name, value in call.items() if name != "self"}
            built.setdefault(entry.qualname, []).append(arguments)
    return constructions


def _target_spec(project: Project, target: Target, measured: _Measured) -> TargetSpec:
    reached = measured.reached.get(target.file, set())
    return TargetSpec(
        key=target.key,
        file=target.file,
        path=os.path.realpath(project.root / target.file),
        module=target.module,
        qualname=target.qualname,
        line=target.line,
        kind=target.kind,
        raises=[(r.line, r.exception, r.written) for r in target.raises],
        unreached_raise_lines=[r.line for r in target.raises if r.line not in reached],
        documented_raises=list(target.documented_raises),
        doc_literals=list(target.doc_literals),
        observed=measured.observed.get((target.file, target.qualname), []),
        constructions=measured.constructions.get(_built_class(target), {})
        if target.kind == "method"
        else {},
    )


def _built_class(target: Target) -> str:
    """The dotted name the baseline records a method's instances under."""
    return f"{target.module}.{target.qualname.rpartition('.')[0]}"


def _survivors(
    baseline: BaselineSection,
    mutation: MutationSection,
    jobs: Mapping[str, Job],
    probed: dict[str, TargetSpec],
    index: ReadIndex | None = None,
) -> tuple[list[SurvivorSpec], list[Witness]]:
    """Survivors to search a witness for, and those that cannot have one. Each survivor's
    code comes from the job the mutation stage ran it with: no file is planned again.
    `index` says where import-time survivors' values are read (`Reads`)."""
    specs, unsearchable = [], []
    observed_keys = {f"{entry.file}::{entry.qualname}" for entry in baseline.observed}
    sources = MutantSources()
    for mutant in (m for m in mutation.mutants if m.status == "Survived"):
        job = jobs.get(mutant.id)
        keys = _search_through(mutant, probed, observed_keys, index)
        why = ""
        if job is None:
            why = "no code of the mutant to run"
        elif not keys:
            why = "no probeable function in its file"
        elif sources.changed(job):
            why = "its file changed during the run"
        if why:
            unsearchable.append(Witness(mutant_id=mutant.id, status="not probeable", reason=why))
            continue
        # The search runs no test: the job's test lists would only weigh on the spec.
        payload = dataclasses.replace(job, tests=[], subprocess_tests=[])
        specs.append(
            SurvivorSpec(
                job=payload,
                description=mutant.description,
                targets=keys,
                first_line=mutant.line,
                last_line=mutant.end_line,
                direct=keys == [f"{mutant.file}::{mutant.function}"],
                reads=_reads(index, mutant) if index and job.path == "module" else None,
            )
        )
    return specs, unsearchable


def _reads(index: ReadIndex, mutant: Mutant) -> Reads | None:
    """Where the survivor's own file reads what its import-time statement makes; None
    where code of another file may read it too (a search traces its own file only)."""
    found = index.value_readers(mutant.file, mutant.line, mutant.end_line)
    if found is None or set(found.lines) != {mutant.file}:
        return None
    return Reads(names=sorted(found.names), lines=sorted(found.lines[mutant.file]))


def _search_through(
    mutant: Mutant,
    probed: Mapping[str, TargetSpec],
    observed: set[str],
    index: ReadIndex | None = None,
) -> list[str]:
    """The functions a survivor's witness is searched through: its own, else its file's,
    its class's first (the constructor builds the state its methods read; for import-time
    code, the class whose body holds it: `Boolean.truthy` is read by `Boolean`), then
    those the tests called."""
    own = f"{mutant.file}::{mutant.function}"
    if own in probed:
        return [own]
    around = (
        index.class_around(mutant.file, mutant.line, mutant.end_line)
        if index and not mutant.function
        else None
    )
    own_class = f"{mutant.file}::{mutant.function.split('.')[0]}."

    def in_own_class(key: str) -> bool:
        return probed[key].line in around if around else key.startswith(own_class)

    in_file = sorted(
        (key for key in probed if key.startswith(f"{mutant.file}::")),
        key=lambda key: (not in_own_class(key), key not in observed, key),
    )
    return in_file[:WITNESS_CANDIDATES]


def counts_of(findings: list[ProbeFinding], witnesses: list[Witness]) -> dict[str, int]:
    """`ProbesSection.counts`: findings per kind, and witnesses per status."""
    counts = Counter(f.kind for f in findings)
    counts.update(f"witness {w.status}" for w in witnesses)
    return dict(sorted(counts.items()))


@dataclass(frozen=True)
class ProbePlan:
    """The functions to probe, known before any test runs: what a probe process starts
    with."""

    probeable: list[Target]
    skipped: list[Target]
    """Functions that touch the outside world, which `probe_allow` does not name."""
    expected: list[str]
    """The exceptions the tests expect."""

    @classmethod
    def of(cls, run: RunContext) -> ProbePlan:
        probeable, skipped = [], []
        for target in _targets(run.project):
            if not target.outside or _allowed(target, run.config.probe_allow):
                probeable.append(target)
            else:
                skipped.append(target)
        expected = sorted(expected_exceptions(list(run.project.test_files)))
        return cls(probeable, skipped, expected)

    def processes(self, run: RunContext, *, searches: bool) -> ProbeProcesses:
        """The probe processes of this plan, none started yet; `searches`: whether
        witness searches may come."""
        modules = sorted({target.module for target in self.probeable})
        return ProbeProcesses(run, modules, self.expected, searches=searches)


EarlyProbes = tuple[ProbePlan, ProbeProcesses]
"""What `start_early` started: the plan and its process."""


def start_early(run: RunContext) -> EarlyProbes:
    """The plan, and a probe process started now, for the probe stage to hand the work
    to (`run_probes`): its start then overlaps the stages before it."""
    plan = ProbePlan.of(run)
    processes = plan.processes(run, searches=True)
    processes.start()
    return plan, processes


def run_probes(
    run: RunContext,
    baseline: BaselineSection,
    mutation: MutationSection | None,
    survivors: Mapping[str, Job] | None = None,
    early: EarlyProbes | None = None,
) -> ProbesSection:
    """`survivors`: each surviving mutant's job (`MutationRun.survivors`), which the
    witness searches run; `early`: what `start_early` started, which this stops. Probes
    still running when the run's time budget runs out are stopped, and what came in is
    kept."""
    if early is None:
        plan = ProbePlan.of(run)
        processes = plan.processes(run, searches=bool(survivors))
    else:
        plan, processes = early
    try:
        return _probed(run, baseline, mutation, survivors or {}, plan, processes)
    finally:
        processes.close()


def _probed(
    run: RunContext,
    baseline: BaselineSection,
    mutation: MutationSection | None,
    survivors: Mapping[str, Job],
    plan: ProbePlan,
    processes: ProbeProcesses,
) -> ProbesSection:
    project, config = run.project, run.config
    started = time.perf_counter()
    in_scope = _diff_functions(mutation)
    functions = [
        FunctionProbe(
            file=target.file,
            function=target.qualname,
            line=target.line,
            status="skipped",
            reason=f"{target.outside}; allow it with probe_allow",
        )
        for target in plan.skipped
        if in_scope is None or (target.file, target.qualname) in in_scope
    ]
    measured = _Measured.of(baseline)
    probed = {t.key: _target_spec(project, t, measured) for t in plan.probeable}
    to_witness, witnesses = (
        _survivors(baseline, mutation, survivors, probed, _index_for(project, survivors))
        if mutation
        else ([], [])
    )
    to_witness = input_counts(to_witness, witness_examples(config.probe_examples))
    cache = _cache(run, plan.expected, probed)
    results: list[FunctionResult | WitnessResult] = []
    to_probe, to_search = [], []
    for spec in probed.values():
        if in_scope is not None and (spec.file, spec.qualname) not in in_scope:
            continue
        known = cache.probes(spec)
        if known is None:
            to_probe.append(spec)
        else:
            results.append(known)
    for survivor in to_witness:
        found = cache.witness(survivor)
        if found is None:
            to_search.append(survivor)
        else:
            results.append(found)
    work = ProbeWork(
        targets=list(probed.values()),
        survivors=to_search,
        items=_work_items(to_probe, to_search),
        growth_limit_mb=probe_growth_limit_mb(baseline.memory_growth_mb, config.memory_limit_mb),
        patterns=baseline.compiled_patterns,
    )
    fresh, interrupted, out_of_time = _run_child(run, processes, work, len(to_probe))
    _keep(cache, probed, to_search, fresh)
    results += fresh
    if not (interrupted or out_of_time):
        results += _unanswered(to_probe, to_search, fresh)
    findings: list[ProbeFinding] = []
    for result in results:
        if isinstance(result, FunctionResult):
            functions.append(result.probe)
            findings += result.findings
        else:
            witnesses.append(result.witness)
    findings.sort(key=lambda f: (f.file, f.line, f.function, f.kind, f.message))
    functions.sort(key=lambda f: (f.file, f.line, f.function))
    witnesses.sort(key=lambda w: w.mutant_id)
    return ProbesSection(
        functions=functions,
        findings=findings,
        witnesses=witnesses,
        counts=counts_of(findings, witnesses),
        max_examples=config.probe_examples,
        duration=round(time.perf_counter() - started, 3),
        interrupted=interrupted,
        stopped_by_budget=out_of_time,
    )


def _index_for(project: Project, survivors: Mapping[str, Job] | None) -> ReadIndex | None:
    """The names the project binds and reads, when an import-time survivor needs them."""
    if not any(job.path == "module" for job in (survivors or {}).values()):
        return None
    return read_index(project)


def _keep(
    cache: ProbeCache,
    probed: dict[str, TargetSpec],
    searched: list[SurvivorSpec],
    fresh: list[FunctionResult | WitnessResult],
) -> None:
    """Keep what the probe processes answered for the next run, and close the cache."""
    survivors = {survivor.mutant_id: survivor for survivor in searched}
    for result in fresh:
        if isinstance(result, FunctionResult):
            cache.keep_probes(probed[_key(result)], result)
        else:
            cache.keep_witness(survivors[result.witness.mutant_id], result)
    cache.close()


def _key(result: FunctionResult) -> str:
    """The key of the function a result is about (`TargetSpec.key`)."""
    return f"{result.probe.file}::{result.probe.function}"


UNANSWERED = "the probe processes ended before answering (killed from outside, or out of memory)"


def _unanswered(
    to_probe: list[TargetSpec],
    to_search: list[SurvivorSpec],
    fresh: list[FunctionResult | WitnessResult],
) -> list[FunctionResult | WitnessResult]:
    """A result for each item no probe process answered: one that ended the process it
    was given to and the one it was given to next (it is not tried a third time), or
    one left when every replacement process had ended too. Not kept in the cache: the
    next run tries it again."""
    probed = {_key(result) for result in fresh if isinstance(result, FunctionResult)}
    searched = {r.witness.mutant_id for r in fresh if isinstance(r, WitnessResult)}
    missing: list[FunctionResult | WitnessResult] = [
        FunctionResult(probe=_ended_probe(spec), ended=True)
        for spec in to_probe
        if spec.key not in probed
    ]
    missing += [
        WitnessResult(
            witness=Witness(mutant_id=survivor.mutant_id, status="not probeable", reason=UNANSWERED)
        )
        for survivor in to_search
        if survivor.mutant_id not in searched
    ]
    return missing


def _ended_probe(spec: TargetSpec) -> FunctionProbe:
    return FunctionProbe(
        file=spec.file, function=spec.qualname, line=spec.line, status="failed", reason=UNANSWERED
    )


WorkItem = tuple[Literal["probe", "search"], str]
"""A function to probe, or a file's survivors to search witnesses for, by key."""


def _work_items(to_probe: list[TargetSpec], survivors: list[SurvivorSpec]) -> list[WorkItem]:
    """The items handed out to the probe processes, longest first so that none is left
    running alone at the end: the witness searches of each group of survivors, largest
    first, then each function's probes."""
    groups = search_items(survivors)
    searches = sorted(groups, key=lambda group: (-len(groups[group]), group))
    items: list[tuple[Literal["probe", "search"], str]] = [("search", group) for group in searches]
    items += [("probe", target.key) for target in to_probe]
    return items


def _generated(
    items: list[tuple[Literal["probe", "search"], str]], survivors: list[SurvivorSpec]
) -> list[frozenset[str]]:
    """For each item, the functions whose witness inputs it generates (a probe: none)."""
    groups = search_items(survivors)
    return [
        frozenset(groups[name][0].targets) if kind == "search" else frozenset()
        for kind, name in items
    ]


def _cache(run: RunContext, expected: list[str], targets: Mapping[str, TargetSpec]) -> ProbeCache:
    project, config = run.project, run.config
    settings = {
        "examples": config.probe_examples,
        "time_budget": config.probe_time_budget,
        "expected_exceptions": expected,
    }
    return ProbeCache(
        ResultCache.of_run(run),
        project.root,
        project.source_files,
        settings,
        targets,
    )


def _run_child(
    run: RunContext, processes: ProbeProcesses, work: ProbeWork, functions: int
) -> tuple[list[FunctionResult | WitnessResult], bool, bool]:
    """Hand the work (`functions` to probe, survivors to search) to the probe processes,
    started (or started early) one per share of it, all under the sandbox. Returns the
    results, whether Ctrl-C stopped them and whether the time budget did."""
    total = functions + len(work.survivors)
    if not total:
        return [], False, False
    if run.deadline is not None and time.monotonic() >= run.deadline:
        return [], False, True
    processes.hand(work)
    while len(processes.running) < min(run.config.workers, len(work.items)):
        processes.start()
    generates = _generated(work.items, work.survivors)
    dispatcher = _Dispatcher([process for process, _ in processes.running], generates)
    try:
        interrupted, out_of_time = _serve(run, processes, dispatcher, total)
    finally:
        processes.stop()
    return processes.results(interrupted or out_of_time), interrupted, out_of_time


def _serve(
    run: RunContext, processes: ProbeProcesses, dispatcher: _Dispatcher, total: int
) -> tuple[bool, bool]:
    """Hand out work and report progress until every item is done (a process still
    starting then stops: a second process started beside an early one takes seconds to
    start, for a change's two or three items), the processes end, their deadline passes
    or the run's time budget does; whether Ctrl-C or the budget stopped them. When every
    process has ended with work left (killed from outside), one more is started for it,
    as many times at most as processes were started at first."""
    deadline = time.monotonic() + total * (run.config.probe_time_budget + 1) + 60
    running = processes.running
    replacements = len(running)
    done = 0
    try:
        while True:
            if not any(process.poll() is None for process, _ in running):
                while dispatcher.listening:  # the last words of those that ended
                    dispatcher.serve(timeout=0)
                if not dispatcher.left or not replacements:
                    break
                replacements -= 1
                dispatcher.add(processes.start())
            if time.monotonic() > deadline:
                break
            if run.deadline is not None and time.monotonic() >= run.deadline:
                return False, True
            dispatcher.serve(timeout=0.1)
            if dispatcher.finished:
                break  # a process still starting would only be told there is no more
            lines = sum(_count_lines(home / "results.jsonl") for _, home in running)
            if lines != done:
                done = lines
                run.progress(done, total, "")
    except KeyboardInterrupt:
        return True, False  # keep what has come in; the report says incomplete
    return False, False


class _Dispatcher:
    """Hands out the work items, one to whichever probe process asks (a newline on its
    stdout); an empty line tells it there is no more.

    A probe process keeps the witness inputs it generated (about a second a function), so
    of the items left, in their order, a process gets the first whose functions it has
    all generated; else the first that needs none another process generated; else the
    first."""

    def __init__(
        self, processes: list[subprocess.Popen[bytes]], generates: list[frozenset[str]]
    ) -> None:
        self._waiting: dict[int, subprocess.Popen[bytes]] = {}
        self._generates = generates
        self._left = list(range(len(generates)))
        self._held: dict[int, set[str]] = {}
        self._working_on: dict[int, int | None] = {}
        self._given_back: set[int] = set()
        for process in processes:
            self.add(process)

    @property
    def left(self) -> bool:
        """Whether some item has not been handed out (or came back from a dead process)."""
        return bool(self._left)

    @property
    def finished(self) -> bool:
        """Whether every item has been handed out and done (its results written before
        its process asked again)."""
        return not self._left and all(item is None for item in self._working_on.values())

    @property
    def listening(self) -> bool:
        """Whether some process has not reached its end of file."""
        return bool(self._waiting)

    def add(self, process: subprocess.Popen[bytes]) -> None:
        if process.stdout is not None:
            self._waiting[process.stdout.fileno()] = process
            self._held[process.stdout.fileno()] = set()

    def serve(self, timeout: float) -> None:
        if not self._waiting:
            time.sleep(timeout)
            return
        ready, _, _ = select.select(list(self._waiting), [], [], timeout)
        for fd in ready:
            process = self._waiting[fd]
            requests = os.read(fd, 1024).count(b"\n")
            if not requests:  # it exited
                del self._waiting[fd]
                self._give_back(fd)
                continue
            for _ in range(requests):
                self._working_on[fd] = item = self.next_for(fd)
                self._send(process, item)

    def _give_back(self, fd: int) -> None:
        """The item a process was working on when it ended goes first to the next that
        asks, once: an item that ended two processes is not tried a third time."""
        item = self._working_on.pop(fd, None)
        if item is not None and item not in self._given_back:
            self._given_back.add(item)
            self._left.insert(0, item)

    def next_for(self, asking: int) -> int | None:
        """The item for the process on `asking` (its stdout); None when none is left."""
        if not self._left:
            return None
        held = self._held.setdefault(asking, set())
        others = set().union(*(keys for fd, keys in self._held.items() if fd != asking))
        needs = self._generates
        choice = next((item for item in self._left if needs[item] and needs[item] <= held), None)
        if choice is None:
            fresh = (item for item in self._left if not needs[item] & others)
            choice = next(fresh, self._left[0])
        self._left.remove(choice)
        held |= needs[choice]
        return choice

    def _send(self, process: subprocess.Popen[bytes], item: int | None) -> None:
        send(process, "\n" if item is None else f"{item}\n")


def _count_lines(path: Path) -> int:
    with path.open("rb") as results:
        return sum(1 for _ in results)
