"""The filter chain: every candidate test is untrusted until it has proved its worth.

parse -> no high-severity smell -> imports and passes on the original code, three times
in three orders, together with the whole suite -> stable -> kills a mutant that survived
or covers code the suite did not -> accepted (after `minimize`).

The cheap static checks come first, so that nothing is run that would be rejected
anyway. The runs happen on a temporary copy of the project with the candidates written
into its test folder (conftest fixtures apply as they would to a test a user adds),
through the same sandboxed baseline and mutation stages as the audit itself: the
candidates are run in forked children with timeouts, memory limits and the guard, and
the user's tree is never written.
"""

from __future__ import annotations

import ast
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from auditor.baseline.stage import run_baseline
from auditor.config import AuditConfig
from auditor.context import RunContext
from auditor.discovery.project import Project, discover
from auditor.errors import AuditError
from auditor.mutation.copies import IGNORED
from auditor.mutation.stage import run_mutation
from auditor.report import BaselineSection, Candidate, CandidateStage, Mutant, TestResult
from auditor.smells.analyzer import analyze

STAGES: tuple[CandidateStage, ...] = (
    "generated",
    "parsed",
    "clean",
    "passes",
    "stable",
    "adds value",
    "accepted",
)

_ORACLE_FAILURES = ("assert", "AssertionError", "Failed: DID NOT RAISE", "Regex pattern")
"""How a failed check reads in a test's message (as opposed to an unexpected error)."""


@dataclass
class Proof:
    """What one run of the chain measured, besides each candidate's own verdict."""

    mutants: dict[str, Mutant] = field(default_factory=dict)
    """The re-run targets by id, as they came out with the candidates in the suite."""
    problems: list[str] = field(default_factory=list)


def file_name(candidate: Candidate) -> str:
    stem = Path(candidate.module).stem.lstrip("_") or "module"
    number = candidate.id.rsplit("#", 1)[1].replace(".", "_")
    return f"test_audit_{stem}_{number}.py"


def check_parses(candidate: Candidate) -> None:
    """Stage `parsed`: valid Python with at least one test function."""
    try:
        tree = ast.parse(candidate.code)
    except SyntaxError as exc:
        candidate.reason = f"does not parse: line {exc.lineno}: {exc.msg}"
        return
    tests = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]
    if not tests:
        candidate.reason = "no test function in it"
        return
    candidate.stage = "parsed"


def _check_smells(
    candidates: list[Candidate], scratch: Path, project: Project, config: AuditConfig
) -> None:
    """Stage `clean`: no high-severity smell (assertion-free, tautological, ...)."""
    folder = scratch / "smells"
    folder.mkdir()
    paths = {}
    for candidate in candidates:
        path = folder / file_name(candidate)
        path.write_text(candidate.code, encoding="utf-8")
        paths[path.name] = candidate
    found = analyze(
        list(folder.iterdir()),
        folder,
        set(project.source_package_names),
        config.assertion_helpers,
        config.disable_smells,
    )
    high: dict[str, list[str]] = {}
    for smell in found.findings:
        if smell.severity == "high":
            high.setdefault(smell.file, []).append(f"{smell.code} {smell.name} in {smell.test}")
    for name, candidate in paths.items():
        if name in high:
            candidate.reason = f"high-severity smell: {'; '.join(sorted(high[name]))}"
        else:
            candidate.stage = "clean"


def suite_folder(project: Project) -> Path:
    """Where a test a user adds would go: the first test path, or its folder."""
    first = project.test_paths[0]
    return first if first.is_dir() else first.parent


class Workspace:
    """A temporary copy of the project, the place where candidates are run."""

    def __init__(self, project: Project, scratch: Path) -> None:
        self.project = project
        self.root = scratch / "copy" / project.root.name
        shutil.copytree(project.root, self.root, ignore=IGNORED, symlinks=True)
        self.test_dir = self.root / suite_folder(project).relative_to(project.root)
        self.written: list[Path] = []

    def place(self, files: dict[str, str]) -> None:
        """Put these test files (name -> code) in the copy's test folder, and only these."""
        for path in self.written:
            path.unlink(missing_ok=True)
        self.written = []
        for name, code in files.items():
            path = self.test_dir / name
            path.write_text(code, encoding="utf-8")
            self.written.append(path)

    def run(self, files: dict[str, str], run: RunContext) -> tuple[RunContext, BaselineSection]:
        """The suite with these test files (name -> code) in it, through the baseline
        stage: the run on the copy (for the mutation stage) and the outcomes."""
        self.place(files)
        paths = [str(self.root / p.relative_to(self.project.root)) for p in self.project.test_paths]
        outside = [p for p in self.written if not any(Path(t) in p.parents for t in paths)]
        on_copy = run.on(discover([*paths, *map(str, outside)], run.config.src, self.root))
        baseline, _ = run_baseline(on_copy)
        return on_copy, baseline


def _run_config(config: AuditConfig, runs: int, original: BaselineSection) -> AuditConfig:
    """The audit's config for runs with candidates: `runs` orders (reversed, shuffled),
    a short per-test timeout that still leaves the suite's slowest test room."""
    slowest = max((t.duration for t in original.tests if t.reliable), default=0.0)
    timeout = min(config.test_timeout, max(config.escalation.candidate_timeout, 3 * slowest))
    return config.model_copy(
        update={
            "flaky_reruns": runs - 1,
            "test_timeout": timeout,
            "verify_sample": 0,
            "diff": None,
            "shard": None,
            "sample": None,
            "time_budget": None,
            "executor": "local",
        }
    )


def _judge_runs(
    candidates: dict[str, Candidate], baseline: BaselineSection, errors: dict[str, str]
) -> None:
    """Stages `passes` and `stable` from the outcomes of the runs with the candidates."""
    by_file: dict[str, list[TestResult]] = {}
    for test in baseline.tests:
        by_file.setdefault(Path(test.file).name, []).append(test)
    for name, candidate in candidates.items():
        if name in errors:
            candidate.reason = f"does not import: {errors[name]}"
            continue
        tests = by_file.get(name, [])
        if not tests:
            candidate.reason = "pytest collects no test from it"
            continue
        failing = [t for t in tests if t.outcome != "passed"]
        if failing:
            first = failing[0]
            test_name = first.nodeid.split("::", 1)[-1]
            if first.outcome == "blocked":
                candidate.reason = f"blocked: {first.message} ({test_name})"
            else:
                candidate.reason = (
                    f"fails on the original code: {test_name}: {first.outcome}: {first.message}"
                )
            candidate.suspected_bug = first.outcome == "failed" and first.message.startswith(
                _ORACLE_FAILURES
            )
            continue
        candidate.stage = "passes"
        flaky = [t for t in tests if t.flaky]
        if flaky:
            candidate.reason = f"unstable: {flaky[0].nodeid.split('::', 1)[-1]}: {flaky[0].flaky}"
            continue
        candidate.stage = "stable"


def _broken_tests(original: BaselineSection, now: BaselineSection) -> list[str]:
    """Tests of the suite that were reliable alone and are not with the candidates."""
    after = {t.nodeid: t for t in now.tests}
    return sorted(
        t.nodeid
        for t in original.tests
        if t.reliable and not (after.get(t.nodeid) and after[t.nodeid].reliable)
    )


def prove(
    run: RunContext,
    original: BaselineSection,
    candidates: list[Candidate],
    targets: Iterable[str],
    unchecked: Iterable[str] = (),
) -> Proof:
    """Run the chain on these candidates; each one's `stage`, `reason`, `kills`,
    `checked_kills` and `new_lines` are set. `targets`: the mutant ids a candidate may
    kill (survivors and mutants with no coverage); `unchecked`: those the suite detects
    only by an error, a crash or a timeout, whose catching by a check counts."""
    project, config = run.project, run.config
    proof = Proof()
    for candidate in candidates:
        candidate.stage = "generated"
        check_parses(candidate)
    parsed = [c for c in candidates if c.stage == "parsed"]
    if not parsed:
        return proof
    with tempfile.TemporaryDirectory(prefix="audit-escalate-") as name:
        scratch = Path(name)
        _check_smells(parsed, scratch, project, config)
        clean = {file_name(c): c for c in parsed if c.stage == "clean"}
        if not clean:
            return proof
        workspace = Workspace(project, scratch)
        runs = run.on(config=_run_config(config, config.escalation.candidate_runs, original))
        on_copy, baseline = _measure(workspace, clean, runs)
        stable = {name: c for name, c in clean.items() if c.stage == "stable"}
        if _broken_tests(original, baseline) and stable:
            stable = _drop_breakers(workspace, stable, runs, original)
            on_copy, baseline = _measure(workspace, stable, runs)
            proof.problems.extend(
                f"{n} breaks the suite after all"
                for n in stable
                if n in _broken_tests(original, baseline)
            )
        if not stable or on_copy is None:
            return proof
        to_kill, crash_only = set(targets), set(unchecked)
        mutants = _candidates_on(on_copy, baseline, set(stable), to_kill | crash_only)
        proof.mutants = {m.id: m for m in mutants if m.id in to_kill}
        covered = _covered(original)
        for name, candidate in stable.items():
            _judge_value(candidate, name, baseline, mutants, covered, crash_only)
    return proof


def _measure(
    workspace: Workspace, files: dict[str, Candidate], run: RunContext
) -> tuple[RunContext | None, BaselineSection]:
    """Stages `passes` and `stable` for these candidates, all in the suite at once."""
    try:
        on_copy, baseline = workspace.run({n: c.code for n, c in files.items()}, run)
    except AuditError as exc:
        for candidate in files.values():
            candidate.reason = f"the suite does not run with it: {exc.message}"
        return None, BaselineSection(
            tests=[], collection_errors=[], passed=0, excluded=0, restarts=0, import_time_lines={}
        )
    errors = {Path(e.file).name: e.message for e in baseline.collection_errors}
    _judge_runs(files, baseline, errors)
    return on_copy, baseline


def _drop_breakers(
    workspace: Workspace,
    stable: dict[str, Candidate],
    run: RunContext,
    original: BaselineSection,
) -> dict[str, Candidate]:
    """Some candidate makes a test of the suite fail: try each alone to find which."""
    alone = run.on(config=run.config.model_copy(update={"flaky_reruns": 0}))
    kept = {}
    for name, candidate in stable.items():
        try:
            _, baseline = workspace.run({name: candidate.code}, alone)
        except AuditError:
            continue
        broken = _broken_tests(original, baseline)
        if broken:
            candidate.stage = "passes"
            candidate.reason = f"breaks the suite: {broken[0]} fails with it"
        else:
            kept[name] = candidate
    return kept


def _candidates_on(
    run: RunContext, baseline: BaselineSection, names: set[str], mutants: set[str]
) -> list[Mutant]:
    """These mutants, run with the candidates' tests alone, every one of them: the
    suite's tests pass on a survivor, and would fail first (by an error) on a mutant it
    only crashes on; and a candidate that fails first must not hide another's kill or
    check (with first kills only, minimization would weigh the order tests ran in)."""
    theirs = [t for t in baseline.tests if Path(t.file).name in names]
    alone = baseline.model_copy(update={"tests": theirs})
    every = run.on(config=run.config.model_copy(update={"all_killers": True}))
    return run_mutation(every, alone, only=mutants).section.mutants


def _covered(
    baseline: BaselineSection,
) -> tuple[dict[str, set[int]], dict[str, set[tuple[int, int]]]]:
    lines: dict[str, set[int]] = {}
    arcs: dict[str, set[tuple[int, int]]] = {}
    for test in baseline.tests:
        if test.reliable:
            for file, numbers in test.lines.items():
                lines.setdefault(file, set()).update(numbers)
            for file, pairs in test.arcs.items():
                arcs.setdefault(file, set()).update(map(tuple, pairs))
    return lines, arcs


def _judge_value(
    candidate: Candidate,
    name: str,
    baseline: BaselineSection,
    mutants: list[Mutant],
    covered: tuple[dict[str, set[int]], dict[str, set[tuple[int, int]]]],
    unchecked: set[str],
) -> None:
    """Stage `adds value`: it killed a target, its check caught a mutant the suite only
    crashes on (`unchecked`), or it runs lines or branches no test did."""
    ours = [t for t in baseline.tests if Path(t.file).name == name]
    nodeids = {t.nodeid for t in ours}
    candidate.kills = sorted(
        m.id
        for m in mutants
        if m.id not in unchecked and nodeids & ({k.test for k in m.kills} | set(m.killed_by))
    )
    candidate.checked_kills = sorted(
        m.id
        for m in mutants
        if m.id in unchecked and any(k.kind == "assertion" and k.test in nodeids for k in m.kills)
    )
    lines, arcs = covered
    new_lines: dict[str, set[int]] = {}
    new_arcs: dict[str, set[tuple[int, int]]] = {}
    for test in ours:
        for file, numbers in test.lines.items():
            fresh = set(numbers) - lines.get(file, set())
            if fresh:
                new_lines.setdefault(file, set()).update(fresh)
        for file, pairs in test.arcs.items():
            taken = {(a, b) for a, b in pairs} - arcs.get(file, set())
            if taken:
                new_arcs.setdefault(file, set()).update(taken)
    candidate.new_lines = {file: sorted(numbers) for file, numbers in sorted(new_lines.items())}
    candidate.new_arcs = {file: sorted(pairs) for file, pairs in sorted(new_arcs.items())}
    if candidate.kills or candidate.checked_kills or new_lines or new_arcs:
        candidate.stage = "adds value"
        candidate.reason = ""
    else:
        candidate.reason = (
            "kills no surviving mutant, its checks catch none the suite only crashes on, "
            "and it covers nothing new"
        )


def minimize(candidates: list[Candidate]) -> None:
    """Accept the candidates that add value, dropping any whose kills and new lines other
    accepted candidates already give (most kills first; ties by id, for a stable choice)."""
    valuable = [c for c in candidates if c.stage == "adds value"]
    valuable.sort(key=lambda c: (-len(_gives(c)), -len(_reach(c)), c.id))
    killed: set[str] = set()
    reached: set[tuple[str, object]] = set()
    for candidate in valuable:
        gives = _gives(candidate)
        if gives - killed or _reach(candidate) - reached:
            candidate.stage, candidate.accepted, candidate.reason = "accepted", True, ""
            killed |= gives
            reached |= _reach(candidate)
        else:
            candidate.reason = "redundant: accepted tests already kill and cover what it does"


def measure_files(
    run: RunContext, original: BaselineSection, files: dict[str, str], targets: Iterable[str]
) -> Proof:
    """Test files (name -> code) in the suite, run once, then the targets mutated again."""
    proof = Proof()
    with tempfile.TemporaryDirectory(prefix="audit-escalate-") as name:
        workspace = Workspace(run.project, Path(name))
        try:
            on_copy, baseline = workspace.run(
                files, run.on(config=_run_config(run.config, 1, original))
            )
        except AuditError as exc:
            proof.problems.append(f"the hardened tests do not run with the suite: {exc.message}")
            return proof
        for test in baseline.tests:
            if Path(test.file).name in files and test.outcome != "passed":
                proof.problems.append(
                    f"{test.nodeid} {test.outcome} with the suite: {test.message}"
                )
        proof.problems += [
            f"{t} fails with the hardened tests" for t in _broken_tests(original, baseline)
        ]
        mutation = run_mutation(on_copy, baseline, only=set(targets)).section
        proof.mutants = {m.id: m for m in mutation.mutants}
    return proof


def _gives(candidate: Candidate) -> set[str]:
    """Its kills of survivors, and its checks' catches of mutants the suite crashed on."""
    return set(candidate.kills) | {f"checked {m}" for m in candidate.checked_kills}


def _reach(candidate: Candidate) -> set[tuple[str, object]]:
    """The new lines and branches a candidate takes, as one set."""
    lines = {(f, n) for f, numbers in candidate.new_lines.items() for n in numbers}
    return lines | {(f, tuple(arc)) for f, arcs in candidate.new_arcs.items() for arc in arcs}
