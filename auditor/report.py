"""The canonical report: one versioned model that every output is rendered from.

Stages add their own section; renderers only read. Lists are kept sorted so that the
same input gives the same JSON, byte for byte, apart from timings.

Schema history:
  1: project, config, tool versions, baseline tests with per-test coverage, file and
     function coverage, smells, gate. `mutation`, `probes` and `escalation` are null
     until the stages that fill them run.
  2: `mutation`: every mutant with its status (Stryker's names), covering and killing
     tests, path (function swap or module re-execution); scores per project, file,
     function and test; pseudo-tested functions; oracle gap.
  3: `sources`: the text of every file under test, so that every output (annotated
     source in HTML, Stryker's `source`) renders from the report alone;
     `mutation.oracle_gap` for the whole project.
  4: `mutation.scope` (all, a git diff, or one shard of a CI matrix), `mutation.estimate`
     (a sampled run's scores with 95% Wilson intervals), `mutation.project_known` (in diff
     mode: the whole project's scores over every mutant whose verdict is known),
     `mutation.stopped_by_budget`, `baseline.tests[].subprocess_lines`,
     `baseline.tests[].flaky` and `baseline.flaky`, `sandbox`, `mutation.interrupted`.
  5: `baseline.observed` (argument values the tests passed to the code under test) and
     `probes`: per function the strategy of each parameter, findings (unhandled crashes,
     untested error paths, edge classes never tried) and a witness or "likely
     equivalent" per surviving mutant.
  6: `escalation`: weak modules and why, every candidate test with the stage it reached
     and why it stopped, the funnel, measured before/after scores per module, model
     usage, hardened files.
  7: `mutation.mutants[].path` `subprocess` (code only Python subprocesses of the tests
     run, mutated through an import hook); `copy` is now only the fallback.
     `cut_by_budget` and `probes.stopped_by_budget`: the time budget covers the run.
     Later, optional: `baseline.collection_errors[].line` and `smells.unparsable[].line`.
  12: witness status `not_shown`; each distinct set of covering tests is stored once
     (`mutation.covering_tests`, `mutation.coverage_sets`, `mutants[].coverage` in place
     of `mutants[].covered_by`), and the JSON is not indented.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
from pathlib import Path
from typing import Any, Literal

import pydantic_core
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

SCHEMA_VERSION = 17

Severity = Literal["high", "medium", "low"]
TestOutcome = Literal["passed", "failed", "error", "skipped", "timeout", "crashed", "blocked"]


class _Model(BaseModel):
    """Validators are built on first use and the fields' docstrings read only for the
    schema (`field_docstrings`): a probe process uses three of these models, and building
    all of them took a third of its start."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class ToolInfo(_Model):
    audit: str
    python: str
    pytest: str
    coverage: str
    libcst: str
    hypothesis: str


class LeftOut(_Model):
    """A package beside the code under test that discovery did not take, and why."""

    path: str
    reason: str


class ProjectInfo(_Model):
    root: str
    inifile: str | None
    ini_options: dict[str, str]
    test_paths: list[str]
    test_files: list[str]
    conftest_files: list[str]
    source_paths: list[str]
    source_files: list[str]
    """Paths below are relative to `root`, with forward slashes."""
    scope_reason: str = ""
    """Why `source_paths` are the code under test: `--src`, the packaging metadata that
    ships them, or the folders discovery looked at."""
    left_out: list[LeftOut] = Field(default_factory=list)
    set_aside: list[str] = Field(default_factory=list)
    """The project's pytest options audit's own test processes went without, and where
    each came from (`addopts: --cov=pkg`): pytest-cov's, since audit measures coverage
    itself, per test."""


class BlockedAction(_Model):
    """An action the guard refused while a test ran."""

    event: str
    target: str


class TestResult(_Model):
    __test__ = False  # not a pytest test class, despite the name
    nodeid: str
    """pytest's id of the test."""
    file: str
    """Its file, relative to the project root."""
    outcome: TestOutcome
    """How it ended on the original code."""
    duration: float
    """Seconds for its setup, call and teardown."""
    message: str = ""
    """Why it did not pass: the last line of the failure, the timeout, the crash."""
    blocked: list[BlockedAction] = Field(default_factory=list)
    """Actions the guard refused while it ran."""
    flaky: str = ""
    """Why the test is flaky or order-dependent (it passed here, then did not when the
    passing tests ran again in another order); '' when it is not. Flaky tests select
    and kill no mutants."""
    spawns_python: bool = False
    """The test started another Python process (measured through our sitecustomize when
    the process kept the test's environment; see `subprocess_lines`)."""

    @property
    def reliable(self) -> bool:
        """Passed, and not flaky: only such tests select and kill mutants."""
        return self.outcome == "passed" and not self.flaky

    lines: dict[str, list[int]] = Field(default_factory=dict)
    """Source file -> lines this test executed in process (setup, call and teardown)."""
    subprocess_lines: dict[str, list[int]] = Field(default_factory=dict)
    """Source file -> lines run by Python subprocesses the test started (measured through
    a sitecustomize on their PYTHONPATH); mutants there are served to those subprocesses
    by the same sitecustomize."""
    arcs: dict[str, list[tuple[int, int]]] = Field(default_factory=dict)
    """Source file -> branches (line pairs) this test took in process."""


class CollectionError(_Model):
    file: str
    message: str
    line: int | None = None
    """Where parsing stopped, when known."""

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


class ObservedFunction(_Model):
    """Distinct argument values the passing tests gave one function (a few at most)."""

    file: str
    qualname: str
    calls: list[dict[str, tuple[str, str]]]
    """Per call: parameter -> (repr, type name)."""


class BaselineSection(_Model):
    tests: list[TestResult]
    collection_errors: list[CollectionError]
    passed: int
    excluded: int
    """Tests that did not pass on the original code; later stages ignore them."""
    restarts: int
    """How often the child had to be restarted after a test crashed or hung it."""
    import_time_lines: dict[str, list[int]]
    """Lines run at import or collection time (coverage context '')."""
    import_time_calls: dict[str, list[int]] = Field(default_factory=dict)
    """First lines of the functions, lambdas and comprehensions called at import or
    collection time (coverage.py records each call as an arc from minus that line)."""
    flaky: list[str] = Field(default_factory=list)
    """Node ids of the tests found flaky or order-dependent."""
    observed: list[ObservedFunction] = Field(default_factory=list)
    """What the tests passed to the code under test, recorded while they ran: the
    probes' explicit examples, and which edge classes the suite tried."""
    memory_growth_mb: float = 0.0
    """How much the measured test process grew while the tests ran (its peak beyond its
    size once they were collected, coverage data included); what a mutant's child may
    grow by is based on it."""
    compiled_patterns: list[tuple[str, int, bool]] = Field(default_factory=list, exclude=True)
    """The regular expressions the suite compiled (`baseline.patterns`): each mutation
    runner compiles them before it forks a child per mutant. Kept with a kept baseline,
    never written to the report: a test's pattern may hold a temporary path."""
    reuse: str = ""
    """Whether this run measured the baseline or kept an earlier run's, and why: kept
    when nothing it depends on changed (the project's tests, code and config files, the
    installed packages, the interpreter, audit, the settings); partly measured when only
    test files and function bodies changed (the tests they touch run again); else
    measured, with what changed."""

    def excluded_alike(self) -> list[tuple[tuple[str, str], list[str]]]:
        """The tests that did not pass, by outcome and message, the largest group first:
        a suite that cannot run here (a fixture every test uses asserts a C extension)
        fails them all alike, for one cause."""
        groups: dict[tuple[str, str], list[str]] = {}
        for test in self.tests:
            if test.outcome not in ("passed", "skipped"):
                groups.setdefault((test.outcome, test.message), []).append(test.nodeid)
        return sorted(groups.items(), key=lambda group: (-len(group[1]), group[1][0]))


class CoverageCounts(_Model):
    statements: int
    covered_lines: int
    branches: int
    covered_branches: int
    line_percent: float
    branch_percent: float


class FunctionCoverage(_Model):
    qualname: str
    start_line: int
    counts: CoverageCounts


class FileCoverage(_Model):
    path: str
    counts: CoverageCounts
    missing_lines: list[int]
    missing_branches: list[tuple[int, int]]
    functions: list[FunctionCoverage]


class CoverageSection(_Model):
    totals: CoverageCounts
    files: list[FileCoverage]


class Smell(_Model):
    code: str
    name: str
    severity: Severity
    file: str
    line: int
    test: str
    """The test's qualified name in its file (`Class.test_x`), or '' for module level."""
    message: str
    hint: str


class SmellsSection(_Model):
    findings: list[Smell]
    counts: dict[Severity, int]
    unparsable: list[CollectionError]


MutantStatus = Literal[
    "Killed", "Survived", "NoCoverage", "Timeout", "RuntimeError", "CompileError", "Ignored"
]


class Kill(_Model):
    """A test that failed on a mutant, how, and where its failing check was."""

    test: str
    kind: Literal["assertion", "error", "crash", "timeout"]
    line: int = 0
    """The line, in the test's file, of the check that failed (the assert, or the call of
    the helper that asserted); 0 when no check did or it is not known."""


class Mutant(_Model):
    id: str
    """`file::function::operator@line:col#ordinal`, lines relative to the function's `def`:
    stable across edits elsewhere in the file."""
    file: str
    """The source file, relative to the project root."""
    function: str
    """The qualified name of the function it is in, or `<module>`."""
    operator: str
    """The mutator that made it (`comparison.lt_to_le`)."""
    family: str
    """The mutator's family (`comparison`), what `--mutators` selects."""
    line: int
    """The line where the change starts."""
    col: int
    end_line: int
    """The line where the change ends."""
    original: str
    """The source text replaced."""
    replacement: str
    """The text put in its place."""
    description: str
    """The change in words."""
    diff: str
    """A unified diff of the lines it changes."""
    status: MutantStatus
    """The verdict, in Stryker's vocabulary."""
    status_reason: str = ""
    """Why a mutant is not Killed or Survived (the compile or runtime error, what was ignored)."""
    path: Literal["swap", "module", "subprocess", "copy", "none", "imported"]
    """How it ran: `swap` replaced the function's code object in a forked child; `module`
    re-executed the mutated module there; `subprocess`: only Python subprocesses of the
    tests run the line, and the child served them the mutated file through an import
    hook. Tests whose subprocesses run the line follow the in-process tests on the
    first two paths too. `copy` is the fallback where the hook cannot reach: the tests
    ran on a temporary copy of the project with the mutated file; `none` did not run
    (no coverage, ignored); `imported`: the verdict is mutmut's (`audit import mutmut`)."""
    covered_by: list[str] = Field(default_factory=list, exclude=True)
    """The reliable tests that run its line: those that were run on it. Not written as
    such: the JSON stores each set of covering tests once (`coverage`)."""
    coverage: int = -1
    """In the JSON: the index of its covering tests in `mutation.coverage_sets` (-1 when
    no test covers it); `covered_by` once read back."""
    accepted: str = ""
    """Why a survivor needs no test (`# audit: accept[...]` or `.audit/accepted.toml`):
    it is then `Ignored`, out of the scores."""
    killed_by: list[str] = Field(default_factory=list)
    """The test that detected it first (all of them with `--all-killers`)."""
    kill_kind: Literal["assertion", "error", "crash", "timeout", ""] = ""
    """How the killing test failed: a check (assert, raises, fail) failed, another
    exception escaped, the test process died, or it ran past the timeout (status
    `Timeout`; `killed_by` names the test that was running)."""
    kills: list[Kill] = Field(default_factory=list)
    """Every test that failed on it, in the order they ran, with the line of its failing
    check: the first only, unless the run had `--all-killers` (then `killed_by` names
    them all, as Stryker's does)."""
    duration: float = 0.0
    """Seconds its tests took."""
    cached: bool = False
    """The verdict came from the result cache of an earlier run (same code, same tests)."""


class StatusCounts(_Model):
    killed: int = 0
    survived: int = 0
    no_coverage: int = 0
    timeout: int = 0
    runtime_error: int = 0
    compile_error: int = 0
    ignored: int = 0


class MutationScores(_Model):
    counts: StatusCounts
    score: float | None
    """detected / valid, in percent (None when there is nothing valid)."""
    covered_score: float | None
    """detected / covered: also PIT's test strength."""
    by_assertion: int = 0
    """Detected mutants a check caught (`kill_kind` assertion): evidence of an oracle.
    The others broke the code so that it raised, crashed or hung."""
    assertion_share: float | None = None
    """by_assertion / detected, in percent (None when nothing was detected)."""
    assertion_score: float | None = None
    """by_assertion / valid, in percent: the score counting assertion kills only."""


class FileMutation(_Model):
    path: str
    scores: MutationScores
    oracle_gap: float | None
    """Covered lines with mutants where no mutant was detected, in percent of covered
    lines with mutants."""
    gap_lines: list[int]


class FunctionMutation(_Model):
    file: str
    function: str
    scores: MutationScores
    pseudo_tested: bool


class TestMutation(_Model):
    """A test's state: `killing` when one of its checks failed on a mutant; `covering`
    when it ran mutated code and no check of its noticed (failures by other exceptions
    are counted in `crash_kills`: they need no assertion); `not_covering` otherwise."""

    __test__ = False
    nodeid: str
    state: Literal["killing", "covering", "not_covering"]
    killed: int
    crash_kills: int
    covered: int
    unique_kills: int | None = None
    """Mutants only this test kills; None unless the run had `--all-killers`."""
    subsumed_by: str = ""
    """A test that kills every mutant this one kills (with `--all-killers`): this one adds
    no kill of its own."""


class Disagreement(_Model):
    id: str
    engine: MutantStatus
    fresh_run: Literal["Killed", "Survived"]


class Verification(_Model):
    """`--verify-sample N`: engine verdicts against a fresh run of the whole suite on a
    materialized copy of the project."""

    checked: int
    agreed: int
    agreement: float | None
    disagreements: list[Disagreement]


class Scope(_Model):
    """Which mutants this run was about."""

    kind: Literal["all", "diff", "shard"] = "all"
    diff_ref: str | None = None
    changed_files: list[str] = Field(default_factory=list)
    changed_lines: dict[str, list[int]] = Field(default_factory=dict)
    """Per changed file, the lines the diff added or changed (what annotations mark)."""
    changed_tests: list[str] = Field(default_factory=list)
    """The changed test files: the functions their tests call are in scope too."""
    on_changed_lines: int = 0
    """Mutants in scope because they are on changed lines."""
    called_by_changed_tests: int = 0
    """Mutants in scope only because they are in a function a changed test calls (its
    own phases, not the imports it ran at collection)."""
    shard: str | None = None
    """`K/N`: this report holds the mutants of shard K; `audit merge` combines N of them."""
    planned: int = 0
    """Mutants planned: in the whole project; in a diff run, in the functions the change
    reaches (those with a changed line, those its changed tests call) and on its changed
    module-level lines."""
    selected: int = 0
    """Mutants in this run's scope (before sampling)."""


class Estimate(_Model):
    """A sampled run: scores of the whole scope, estimated from a stratified random
    sample (by file and operator family), with 95% Wilson intervals. An estimate, not a
    measurement: the gate is applied to the pessimistic bound."""

    sampled: int
    """Mutants that ran and gave a verdict."""
    population: int
    """Runnable mutants in scope the sample was drawn from."""
    seed: int
    confidence: float = 0.95
    score: float
    score_low: float
    score_high: float
    covered_score: float
    covered_low: float
    covered_high: float
    survived: float
    survived_high: float


class DataTableSample(_Model):
    """A module-level data table whose entries were sampled (`--mutate-data sample`)."""

    file: str
    line: int
    end_line: int
    entries: int
    mutated_entries: int
    left_out: int
    """Mutants of the other entries, not made."""


class CheckEvidence(_Model):
    """One check of the tests (`auditor.evidence.checks`): the mutants it caught (it was the check
    that failed) and the survivors it held for (it ran, passing, on them)."""

    file: str
    line: int
    test: str
    """The test's qualified name in its file (`Class.test_x`)."""
    caught: int
    held: int
    caught_ids: list[str] = Field(default_factory=list)
    """The first few, sorted; `caught` counts them all."""
    held_ids: list[str] = Field(default_factory=list)


class TargetedScores(_Model):
    """The scores over the modules the audited test files import (`auditor.discovery.targeted`):
    what a suite written for a few modules of a package is judged on."""

    files: list[str]
    scores: MutationScores


class TypeCheckSummary(_Model):
    """The type-checker pre-filter (`auditor.mutation.type_check`)."""

    checker: str
    checked: int
    """Function-body mutants type-checked."""
    rejected: int
    """Of those, the ones the checker rejected: status `CompileError`, never run."""
    duration: float
    """Seconds the stage spent on it, its wait for the check begun while the baseline ran
    included: what it added to the run's wall time."""
    cached: int = 0
    """Mutants whose verdict was ready: checked while the baseline ran, on the core it
    leaves idle (`mutation.early_sites`), or by an earlier run on the same sources."""
    saved: float | None = None
    """Estimated seconds of wall time the rejected mutants would have taken to run: each
    as long as the killed mutants of its function took on average (of its file, of the
    run, where none was killed there), over the workers. None when no mutant was rejected
    or none was killed. Against `duration`, whether the check paid on this run."""


class MutationSection(_Model):
    scores: MutationScores
    targeted: TargetedScores | None = None
    """None when the test files import no module of the code under test."""
    all_killers: bool = False
    """Every covering test of a killed mutant ran (`--all-killers`): `killed_by` lists
    them all, and unique kills and `carrying` are known."""
    dominators: int | None = None
    """With `all_killers`: the minimal (dominator) mutants, one per set of killing tests
    that no other killed mutant's set is strictly inside."""
    dominator_score: float | None = None
    """dominators / (dominators + survived), in percent: the score redundant easy
    mutants cannot inflate."""
    carrying: list[str] = Field(default_factory=list)
    """With `all_killers`: a small set of tests that together kill every mutant the suite
    kills (greedy set cover): the tests that carry the suite."""
    checks: list[CheckEvidence] = Field(default_factory=list)
    """Per check of the tests, what it caught and what it let through, by file and line."""
    mutants: list[Mutant]
    files: list[FileMutation]
    functions: list[FunctionMutation]
    tests: list[TestMutation]
    pseudo_tested: list[str]
    """`file::function` of covered functions whose every extreme mutant survived."""
    oracle_gap: float | None = None
    """Covered lines with mutants where no mutant was detected, over the whole project."""
    paths: dict[str, int]
    cache_hits: int
    carried_over: int = 0
    """Verdicts of an earlier run that held for the tests they had: only the tests
    added or changed since then, or that run a function body edited since, ran (none,
    for those `cache_hits` also counts): docs/engine.md, "Verdicts carried over"."""
    jobs: int
    duration: float
    mutants_per_second: float
    overhead_ms: float | None = None
    """Per mutant run here, what the stage cost beyond the tests' own time: (stage wall
    time x workers - time inside the tests' phases) / mutants run. Planning, runner
    start-up, forks, swaps and the copy path all count; a mutant stopped by its timeout
    counts its whole wait as the tests' time."""
    child_overhead_ms: float | None = None
    """The median over in-process mutants of a child's wall time minus its tests' time:
    fork, swap or module re-execution, pytest's protocol, exit."""
    floor_seconds: float | None = None
    """The physical floor of the mutants run here in process: each one's tests up to the
    first that fails (their own time; for a child stopped or dead inside a test, the
    baseline's time of the tests it started) plus one fork, divided by the workers."""
    verification: Verification | None = None
    scope: Scope = Field(default_factory=Scope)
    estimate: Estimate | None = None
    project_known: MutationScores | None = None
    stopped_by_budget: bool = False
    """The time budget ran out before every selected mutant ran."""
    interrupted: bool = False
    """Ctrl-C stopped the stage: the mutants listed are those with a final verdict."""
    data_tables: list[DataTableSample] = Field(default_factory=list)
    type_check: TypeCheckSummary | None = None
    expired_acceptances: list[str] = Field(default_factory=list)
    """Mutants of `.audit/accepted.toml` whose change is no longer the one accepted."""
    covering_tests: list[str] = Field(default_factory=list)
    """In the JSON: every test that covers a mutant, once, sorted."""
    coverage_sets: list[list[int]] = Field(default_factory=list)
    """In the JSON: the distinct sets of covering tests, as indexes into
    `covering_tests`. Mutants on one line share one; storing each mutant's list kept a
    project's report at hundreds of MB."""

    @model_serializer(mode="wrap")
    def _store_coverage_once(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        tests = sorted({nodeid for mutant in self.mutants for nodeid in mutant.covered_by})
        position = {nodeid: index for index, nodeid in enumerate(tests)}
        sets: dict[tuple[str, ...], int] = {}
        for mutant, written in zip(self.mutants, data["mutants"], strict=True):
            covering = tuple(mutant.covered_by)
            if covering and covering not in sets:
                sets[covering] = len(sets)
            written["coverage"] = sets[covering] if covering else -1
        data["covering_tests"] = tests
        data["coverage_sets"] = [[position[nodeid] for nodeid in group] for group in sets]
        return data

    @model_validator(mode="after")
    def _read_coverage(self) -> MutationSection:
        """In memory, each mutant holds its tests: the JSON-only fields are emptied."""
        groups = [[self.covering_tests[i] for i in group] for group in self.coverage_sets]
        for mutant in self.mutants:
            if 0 <= mutant.coverage < len(groups) and not mutant.covered_by:
                mutant.covered_by = list(groups[mutant.coverage])
            mutant.coverage = -1
        self.covering_tests, self.coverage_sets = [], []
        return self

    def finished(self, sampling: bool) -> bool:
        """Whether the verdicts answer for the whole scope. A budget that ran out leaves an
        answer only when the run was a sample and its verdicts made an estimate."""
        if self.interrupted:
            return False
        return not self.stopped_by_budget or (sampling and self.estimate is not None)


class GateCondition(_Model):
    name: str
    threshold: float
    actual: float
    passed: bool
    message: str


class Rating(_Model):
    """What the suite is worth by the evidence, shown instead of PASS where no threshold
    is set (`auditor.gate.rate`)."""

    level: Literal["shallow", "weak", "adequate", "strong"]
    score: float
    """The mutation score it rates (targeted unless `gate_on = "all"`)."""
    assertion_share: float | None
    """Of the detected mutants, those a failing check caught, in percent (None for
    imported verdicts, which do not say)."""
    reason: str


class GateSection(_Model):
    verdict: Literal["pass", "fail"]
    conditions: list[GateCondition]
    rating: Rating | None = None
    """None when mutation testing did not run."""


class ParamStrategy(_Model):
    """Where a parameter's generated inputs come from."""

    name: str
    source: Literal["type hint", "observed", "default", "docstring", "not probeable"]
    detail: str
    """The hint, or the values seen; for `not probeable`, why."""


class FunctionProbe(_Model):
    file: str
    function: str
    line: int
    status: Literal["probed", "skipped", "not probeable", "failed"]
    reason: str = ""
    params: list[ParamStrategy] = Field(default_factory=list)
    examples: int = 0
    """Inputs tried (all probes of the function together)."""


class ProbeFinding(_Model):
    kind: Literal["unhandled_crash", "untested_error_path", "untried_edge_class"]
    file: str
    function: str
    line: int
    """Where: the crashing line, the `raise`, or the function's `def`."""
    message: str
    input: str
    """The call, as Python: `mean([])`."""
    observed: str
    """What the code did on that input."""
    suggested_test: str = ""
    """A pytest test pinning today's behaviour on the input, to review (a crash may be a
    bug: decide what the code should do)."""


class Witness(_Model):
    """For a surviving mutant: an input on which the original and the mutant differ."""

    mutant_id: str
    status: Literal["found", "likely_equivalent", "not_shown", "not probeable"]
    """`found`: an input tells them apart; `likely_equivalent`: inputs ran the mutated line
    and none did; `not_shown`: no input ran it, so the probes say nothing about it;
    `not probeable`: no search ran (`reason` says why)."""
    function: str = ""
    """The function called (the mutated one, or a public one that reaches it)."""
    input: str = ""
    original: str = ""
    mutant: str = ""
    examples: int = 0
    test: str = ""
    """A ready-to-paste pytest test that passes on the original and fails on the mutant
    (checked both ways before it is reported); '' when the values have no literal form."""
    reason: str = ""


class ProbesSection(_Model):
    functions: list[FunctionProbe]
    findings: list[ProbeFinding]
    witnesses: list[Witness]
    counts: dict[str, int]
    """Findings per kind, and witnesses by status (`witness found`, ...)."""
    max_examples: int
    duration: float
    interrupted: bool = False
    """Ctrl-C stopped the stage: the results listed are those that had come in."""
    stopped_by_budget: bool = False
    """The run's time budget ran out before every probe finished (or started)."""


CandidateStage = Literal[
    "generated", "parsed", "clean", "passes", "stable", "adds value", "accepted"
]
"""How far a candidate test got through the filter chain, in order."""


Origin = Literal["model", "repair", "witness"]


class Candidate(_Model):
    """One test the model (or a witness) proposed, and what the filter chain made of it."""

    id: str
    """`<module file>#<round>.<n>`: stable for the same answers."""
    module: str
    """The source file it was asked for."""
    origin: Origin
    round: int
    name: str
    code: str
    targets: list[str] = Field(default_factory=list)
    """Mutant ids it says it kills (the model's claim; `kills` is what it did)."""
    rationale: str = ""
    stage: CandidateStage
    """The last stage it passed."""
    accepted: bool = False
    reason: str = ""
    """Why it stopped where it did (the failing assertion, the smell, 'kills nothing')."""
    suspected_bug: bool = False
    """It failed on the original code with an assertion: a bug in the code, or a wrong
    oracle. Worth a human look either way."""
    kills: list[str] = Field(default_factory=list)
    checked_kills: list[str] = Field(default_factory=list)
    """Mutants the suite detects only by an error, a crash or a timeout that its checks
    catch (an assert, `pytest.raises`): a crash kill turned into evidence."""
    filed_under: str = ""
    """Accepted: the module whose hardened file holds it, the one whose mutants it kills
    most (`module` on a tie or when it kills none)."""
    new_lines: dict[str, list[int]] = Field(default_factory=dict)
    """Source file -> lines it runs that the suite did not."""
    new_arcs: dict[str, list[tuple[int, int]]] = Field(default_factory=dict)
    """Source file -> branches (from line, to line) it takes that the suite did not."""


class EscalatedModule(_Model):
    file: str
    reasons: list[str]
    """Why the policy found it weak."""
    survivors: int
    """Surviving mutants, likely equivalent ones left out: the rank."""
    escalated: bool
    """False when the budget ran out before its turn."""
    request: str = ""
    """The request as written under `.audit/escalation/`, relative to the project root."""
    before: MutationScores | None = None
    after: MutationScores | None = None
    """Measured again with the hardened tests in the suite (same mutants)."""
    newly_killed: list[str] = Field(default_factory=list)
    hardened_files: list[str] = Field(default_factory=list)
    """Its accepted tests, in as few files as they share without a name clash."""
    accepted: int = 0
    """Accepted tests filed under it, whichever module asked for them."""


class ModelUsage(_Model):
    requests: int = 0
    failed_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None


TIME_BUDGET_USED_UP = "the run's time budget was used up"
"""`EscalationSection.budget_exhausted` when the run's time budget stopped the hardening."""


class EscalationSection(_Model):
    mode: Literal["model", "offline"]
    """`model` when an API key was set; `offline` writes the requests out and hardens with
    tests built from the probes' witnesses."""
    model: str = ""
    modules: list[EscalatedModule]
    candidates: list[Candidate]
    """Distinct proposals: one whose code repeats an earlier one's is counted in
    `repeats`, not run again."""
    repeats: int = 0
    funnel: dict[str, int]
    """Candidates that reached each stage, in the chain's order."""
    usage: ModelUsage = Field(default_factory=ModelUsage)
    errors: list[str] = Field(default_factory=list)
    """Requests that failed for good (after retries), one line each."""
    budget_exhausted: str = ""
    """Which limit stopped escalation early, if one did."""
    hardened_files: list[str] = Field(default_factory=list)
    applied_files: list[str] = Field(default_factory=list)
    log_dir: str = ""
    duration: float = 0.0


class SandboxInfo(_Model):
    level: Literal["os", "guard", "none"]
    """`os`: namespaces (read-only files, no network) and the guard; `guard`: the
    audit hook only; `none`: neither."""
    reason: str
    processes_bounded: bool = False
    """Whether something bounds how many processes one sandbox may hold (a fork bomb):
    only the OS sandbox, by RLIMIT_NPROC or a pids cgroup; root without a writable pids
    cgroup has neither."""


class TestOrigin(_Model):
    """Which generator wrote a test file, and what said so."""

    __test__ = False
    file: str
    generator: str
    source: Literal["config glob", "header comment", "git trailer", "git co-author", ""]


class GeneratorCard(_Model):
    """A generator's tests, side by side with the others' (`auditor.evidence.provenance`)."""

    generator: str
    tests: int
    kills_by_check: int
    other_kills: int
    """Kills that needed no check: the code raised, crashed or hung."""
    assertion_share: float | None
    unique_kills: int | None
    """Mutants only its tests kill (no other generator's); None unless the run had
    `--all-killers`."""
    score_alone: float | None
    """Of the mutants its tests cover, the share its tests kill (`--all-killers` only)."""
    smells: int
    smells_per_test: float
    blocked_or_flaky: int


class ProvenanceSection(_Model):
    files: list[TestOrigin]
    generators: list[GeneratorCard]


class TrendPoint(_Model):
    """One whole-project run's headline figures (`.audit/history.jsonl`)."""

    run: int
    """1 for the first run of these test paths recorded in this project, and so on."""
    tests: list[str]
    """The test paths audited: each suite has a trend of its own."""
    commit: str
    """The git commit audited ('' outside git)."""
    mutation_score: float | None
    targeted_score: float | None
    assertion_share: float | None
    line_coverage: float
    survived: int
    smells_high: int


class Report(_Model):
    schema_version: int = SCHEMA_VERSION
    """The version of this layout; it changes whenever a field is added, renamed or goes."""
    status: Literal["complete", "incomplete"]
    """`incomplete` when the run was interrupted or its time budget cut a stage."""
    tool: ToolInfo
    """The versions that produced the report."""
    project: ProjectInfo
    """What discovery found: the root, the pytest configuration, tests and code under test."""
    config: dict[str, Any]
    """The effective configuration ([configuration.md](configuration.md))."""
    timings: dict[str, float]
    """Seconds per stage, in run order."""
    sandbox: SandboxInfo = Field(default_factory=lambda: SandboxInfo(level="guard", reason=""))
    """What contained the test processes."""
    baseline: BaselineSection
    """The suite on the original code, with per-test coverage."""
    coverage: CoverageSection
    """Line and branch coverage of the code under test."""
    smells: SmellsSection
    """The static checks of the test files."""
    sources: dict[str, str] = Field(default_factory=dict)
    """Relative path -> text of each file under test."""
    mutation: MutationSection | None = None
    """Mutation testing; null with `--no-mutation`."""
    probes: ProbesSection | None = None
    """Property-based probes and witnesses; null with `--no-probes`."""
    escalation: EscalationSection | None = None
    """Hardening by the deep model or offline; null without `--escalate`."""
    provenance: ProvenanceSection | None = None
    """Which generator wrote each test file, and a scorecard per generator."""
    gate: GateSection
    """The verdict and every condition checked."""
    cut_by_budget: list[str] = Field(default_factory=list)
    """The stages the time budget stopped before they finished, in run order."""
    trend: list[TrendPoint] = Field(default_factory=list)
    """The project's last whole-project runs, this one included when it is one."""
    store: str = ""
    """Empty when `.audit/cache.sqlite` was sound; else what was wrong with it (not a
    database, locked by another process, cannot be written) and what the run did
    instead. Either way the verdicts are measured; only time is lost."""

    @field_validator("schema_version")
    @classmethod
    def _current_layout(cls, version: int) -> int:
        """A report of another layout is refused, not half read: fields that moved
        would be taken as absent, and the gate would judge what is not there."""
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"it has report schema {version}, written by a newer audit; this one reads "
                f"schema {SCHEMA_VERSION}: upgrade audit"
            )
        if version < SCHEMA_VERSION:
            raise ValueError(
                f"it has report schema {version}, written by an older audit; this one reads "
                f"schema {SCHEMA_VERSION}: run the audit again for a current report"
            )
        return version

    def to_json_bytes(self) -> bytes:
        """UTF-8 JSON serialized by pydantic-core straight to bytes: a large project's
        report is tens of MB, and Python dicts or a str on the way (4 bytes a character
        once one is not Latin-1) would multiply the peak memory. Keys follow the models'
        field order; every dict is built in sorted order. Not indented: one number a line
        made the per-test line and arc lists two thirds of a large report (`jq .` shows it
        indented)."""
        return pydantic_core.to_json(self)

    def write(self, path: Path) -> None:
        """Write atomically, so an interrupted run never leaves half a report."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        with partial.open("wb") as out:
            out.write(self.to_json_bytes())
            out.write(b"\n")
        partial.replace(path)

    @classmethod
    def read(cls, path: Path) -> Report:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


def read_report(path: Path, what: str = "report") -> Report:
    """A saved JSON report, or a one-line error naming the file."""
    from pydantic import ValidationError

    from auditor.errors import ReportError

    try:
        return Report.read(path)
    except OSError as exc:
        raise ReportError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        errors = exc.errors() if isinstance(exc, ValidationError) else []
        layout = [error for error in errors if error["loc"] == ("schema_version",)]
        if layout and "ctx" in layout[0]:
            raise ReportError(f"{path}: {layout[0]['ctx']['error']}") from None
        if errors:
            first = errors[0]
            where = ".".join(str(part) for part in first["loc"]) or "document"
            detail = f"{where}: {first['msg']}"
        else:
            detail = str(exc).splitlines()[0]
        raise ReportError(f"{path} is not an audit JSON report ({detail})") from None


def json_schema() -> dict[str, Any]:
    """The report's JSON Schema, each field described by its docstring."""
    schema = Report.model_json_schema()
    for model in _models():
        defined = schema if model is Report else schema["$defs"].get(model.__name__)
        if defined is None:
            continue
        for name, text in field_docstrings(model).items():
            defined["properties"][name]["description"] = text
    return schema


def field_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """Each field's docstring, the string under its declaration, where it has one."""
    declared = _declared_docstrings()
    found = {}
    for name in model.model_fields:
        owner = next(cls for cls in model.__mro__ if name in inspect.get_annotations(cls))
        if name in declared.get(owner.__name__, {}):
            found[name] = declared[owner.__name__][name]
    return found


@functools.cache
def _declared_docstrings() -> dict[str, dict[str, str]]:
    """{class name: {field: docstring}}, read from this module's source."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    found: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        pairs = itertools.pairwise(node.body)
        found[node.name] = {
            field.target.id: inspect.cleandoc(text.value.value)
            for field, text in pairs
            if isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(text, ast.Expr)
            and isinstance(text.value, ast.Constant)
            and isinstance(text.value.value, str)
        }
    return found


def _models() -> list[type[_Model]]:
    return [
        value
        for value in globals().values()
        if isinstance(value, type) and issubclass(value, _Model)
    ]
