"""Shared helpers: copies of the fixture projects, running the real `audit` command."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from auditor import pipeline
from auditor.cli import cli
from auditor.containment import pids
from auditor.containment.isolation import choose
from auditor.errors import ExitCode
from auditor.probes.calls import Subject
from auditor.probes.protocol import ProbeSpec, TargetSpec
from auditor.report import Mutant
from auditor.stages import STAGES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def computed_once(
    tmp_path_factory: pytest.TempPathFactory,
    names: Sequence[str],
    compute: Callable[[Path, str], Any],
) -> dict[str, Any]:
    """`compute(folder, name)` for each name, once per test run, shared by the
    pytest-xdist workers (each has a session of its own). A worker takes the names no
    other worker is computing first, then waits for the rest: two workers that need the
    same results compute them side by side instead of one waiting for the other."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # each worker's basetemp lies in the run's
    results: dict[str, Any] = {}
    for blocking in (False, True):
        for name in names:
            if name not in results:
                result = _computed_once(base, name, compute, blocking)
                if result is not None:
                    results[name] = result
    return results


def _computed_once(
    base: Path, name: str, compute: Callable[[Path, str], Any], blocking: bool
) -> Any | None:
    done = base / f"{name}.json"
    with (base / f"{name}.lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            return None  # another worker is computing it
        if not done.exists():
            folder = base / name
            folder.mkdir(exist_ok=True)
            partial = base / f"{name}.partial"
            partial.write_text(json.dumps(compute(folder, name)))
            partial.rename(done)
        return json.loads(done.read_text())


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under root (and its mode) with a hash of its bytes.

    `.audit/` is left out: it is where audit writes its cache and report by design."""
    digest = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative == ".audit" or relative.startswith(".audit/"):
            continue
        if path.is_file():
            content = hashlib.sha256(path.read_bytes()).hexdigest()
            digest[relative] = f"{oct(path.stat().st_mode)} {content}"
        else:
            digest[relative] = f"{oct(path.stat().st_mode)} dir"
    return digest


REQUIRED_PARTS = frozenset(
    part.strip() for part in os.environ.get("AUDIT_TEST_REQUIRE", "").split(",") if part.strip()
)
"""The parts of the machine a test run insists on (`.ci/run` names them all): where one is
missing, the tests that need it fail instead of skipping."""


@functools.cache
def _part_available(part: str) -> tuple[bool, str]:
    """Whether this machine has the part, and if not, why."""
    if part == "os-sandbox":
        isolation = choose("auto")
        return isolation.level == "os", isolation.reason
    if part == "cgroup":
        return bool(pids.run_cgroup()), "no writable pids cgroup (not root, or not mounted)"
    if part == "chromium":
        found = shutil.which("chromium") or shutil.which("chromium-browser")
        return found is not None, "Debian's `chromium` is not installed (.ci/run installs it)"
    raise ValueError(f"unknown part {part!r}: os-sandbox, cgroup or chromium")


def needs(part: str) -> None:
    """Skip the test, saying why, where this machine lacks the part; fail it where the
    run requires the part (AUDIT_TEST_REQUIRE): there a missing part is a broken machine
    or a broken probe, never a reason to test less."""
    available, why = _part_available(part)
    if available:
        return
    if part in REQUIRED_PARTS:
        pytest.fail(f"needs {part}, which AUDIT_TEST_REQUIRE requires, but: {why}")
    pytest.skip(f"no {part} here: {why}")


_fast_tier_test: str | None = None
"""The node id of the test running now when it is in the fast tier (not marked slow)."""

_SHARED_AUDITS = frozenset({"fixture_runs"})
"""Fixtures that hand out whole audits: a fast-tier test that asks for one fails, whether
or not an earlier test already paid for them."""


def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.needs("os-sandbox")`: see `needs`. And the fast tier's guard, set
    before any fixture: a module or session fixture that runs an audit for a fast-tier
    test fails it as the test itself would."""
    global _fast_tier_test
    slow = item.get_closest_marker("slow") is not None
    _fast_tier_test = None if slow else item.nodeid
    asked = _SHARED_AUDITS.intersection(getattr(item, "fixturenames", ()))
    if not slow and asked:
        pytest.fail(f"{item.nodeid} uses {', '.join(sorted(asked))}, whole audits: mark it slow")
    for marker in item.iter_markers("needs"):
        for part in marker.args:
            needs(part)


def pytest_runtest_teardown(item: pytest.Item) -> None:
    global _fast_tier_test
    _fast_tier_test = None


_SUBCOMMANDS = frozenset(cli.commands) - {"run"}
_AUDIT_RAN = (ExitCode.PASSED, ExitCode.GATE_FAILED, ExitCode.INCOMPLETE)
"""The exit codes of an audit whose stages ran (passed, failed the gate, or were cut)."""


@pytest.fixture(autouse=True)
def _fast_tier_runs_no_audit(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """A test of the fast tier that runs a whole audit in process fails and says to mark
    it `slow`: the fast tier is for the seconds-long loop (`run_audit` does the same on
    the command line, armed by `pytest_runtest_setup`)."""
    if request.node.get_closest_marker("slow") is not None:
        yield
        return

    def forbidden(run: Any, draft: Any) -> Any:
        pytest.fail(f"{request.node.nodeid} runs a whole audit in process: mark it slow")

    monkeypatch.setattr(
        pipeline, "STAGES", tuple(dataclasses.replace(stage, step=forbidden) for stage in STAGES)
    )
    yield


@pytest.fixture
def fault(request: pytest.FixtureRequest) -> Callable[..., None]:
    """`fault(group, injected, did=..., exit_code=..., saw=..., lost=...)`: this test's row
    of docs/reliability.md, recorded once its checks have passed (`tests/faults/table.py`
    gathers the rows of a run)."""

    def record(
        group: str, injected: str, *, did: str, exit_code: int | str, saw: str, lost: str
    ) -> None:
        row = {"group": group, "injected": injected, "did": did, "exit_code": exit_code}
        row |= {"saw": saw, "lost": lost, "test": request.node.nodeid}
        request.node.user_properties.append(("fault", json.dumps(row)))

    return record


def run_audit(
    *args: str, cwd: Path, timeout: float = 180, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real command line, in a fresh process, as a user would run it."""
    done = subprocess.run(
        [sys.executable, "-m", "auditor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**(os.environ if env is None else env), "COLUMNS": "200"},
    )
    command = next((arg for arg in args if not arg.startswith("-")), "run")
    audited = command not in _SUBCOMMANDS and not {"-h", "--help", "--version"} & set(args)
    if _fast_tier_test and audited and done.returncode in _AUDIT_RAN:
        shown = " ".join(args)
        pytest.fail(f"{_fast_tier_test} runs a whole audit (`audit {shown}`): mark it slow")
    return done


def one_module_project(root: Path, name: str, source: str, tests: dict[str, str]) -> Path:
    """A project of one module `name` at `root`, with these files under `tests/`."""
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "1"\n')
    (root / f"{name}.py").write_text(source)
    for file, text in tests.items():
        (root / "tests" / file).write_text(text)
    return root


def burns_under_coverage(function: str, check: str, traced: float, untraced: float) -> str:
    """A test file whose `test_slowed_by_tracing` burns `traced` CPU seconds under
    coverage and `untraced` without (what tracing does to a loop), then asserts
    `check`; `function` is imported from the module `calc`."""
    return (
        "import time\n\nimport coverage\n\n"
        f"from calc import {function}\n\n\n"
        "def test_slowed_by_tracing():\n"
        "    traced = coverage.Coverage.current() is not None\n"
        f"    end = time.process_time() + ({traced} if traced else {untraced})\n"
        "    while time.process_time() < end:\n"
        "        pass\n"
        f"    assert {check}\n"
    )


def one_module_mutants(root: Path, name: str, source: str, tests: str, mutators: str) -> list[dict]:
    """The mutants of a one-module project `name` with one test file."""
    one_module_project(root, name, source, {f"test_{name}.py": tests})
    out = root / "r.json"
    flags = ("--no-probes", "--mutators", mutators, "-q", "--json", str(out))
    result = run_audit("tests", *flags, cwd=root)
    assert result.returncode == 0, result.stderr
    return mutants_of(json.loads(out.read_text()))


def cached_results(root: Path) -> int:
    """Verdicts in a project's result cache (read-only: the run may still be writing)."""
    cache = root / ".audit" / "cache.sqlite"
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True) as connection:
            return connection.execute("select count(*) from results").fetchone()[0]
    except sqlite3.Error:
        return 0


def mutants_of(report: dict) -> list[dict]:
    """A JSON report's mutants, each with its `covered_by` (the JSON stores each set of
    covering tests once, in `mutation.coverage_sets`)."""
    mutation = report["mutation"]
    sets = [[mutation["covering_tests"][i] for i in group] for group in mutation["coverage_sets"]]
    return [
        {**mutant, "covered_by": sets[mutant["coverage"]] if mutant["coverage"] >= 0 else []}
        for mutant in mutation["mutants"]
    ]


def stable(report: dict) -> dict:
    """The report without what legitimately differs between runs: times, memory, cache
    use (a kept baseline included), where the project lies, the wording of timeouts, and
    the trend (one more point per run)."""
    report = json.loads(json.dumps(report))
    report.pop("timings")
    report.pop("trend")
    report.pop("store")  # what was wrong with the cache: costs time, not verdicts
    report["project"].pop("root")
    report["baseline"].pop("memory_growth_mb")
    report["baseline"].pop("reuse")  # measured, then kept
    for test in report["baseline"]["tests"]:
        test.pop("duration")
    mutation = report["mutation"]
    if mutation is not None:
        varying = ("duration", "mutants_per_second", "cache_hits", "overhead_ms")
        for key in (*varying, "child_overhead_ms", "floor_seconds"):
            mutation.pop(key)
        if mutation["type_check"] is not None:
            mutation["type_check"].pop("duration")
            mutation["type_check"].pop("cached")
            mutation["type_check"].pop("saved")  # estimated from the mutants' times
        for mutant in mutation["mutants"]:
            mutant.pop("duration")
            mutant.pop("cached")
            if mutant["status"] == "Timeout":
                mutant["status_reason"] = ""
    if report.get("probes") is not None:
        report["probes"].pop("duration")
    return report


def report_differences(first: dict, second: dict) -> list[str]:
    """Where two reports differ beyond what may (see `stable`), one line per value: a
    failing comparison then names the fields instead of printing two whole reports."""
    return differences(stable(first), stable(second))


def differences(first: Any, second: Any, where: str = "report") -> list[str]:
    """One line per value that differs between two JSON documents, with its path."""
    if isinstance(first, dict) and isinstance(second, dict):
        lines = []
        for key in sorted(first.keys() | second.keys()):
            if key not in first or key not in second:
                lines.append(f"{where}.{key}: only in the {'first' if key in first else 'second'}")
            else:
                lines += differences(first[key], second[key], f"{where}.{key}")
        return lines
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        return [
            line
            for index, (a, b) in enumerate(zip(first, second, strict=True))
            for line in differences(a, b, f"{where}[{index}]")
        ]
    if first == second:
        return []
    return [f"{where}: {repr(first)[:300]} != {repr(second)[:300]}"]


def children_running(pid: int, module: str) -> list[int]:
    """The processes `pid` started (each its direct child) that run `module`, in a
    sandbox or not (the sandbox's wrapper names it in its command line)."""
    found = []
    for child in _children_by_parent().get(pid, []):
        with contextlib.suppress(OSError):
            if module.encode() in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
    return found


def descendants(pid: int) -> list[int]:
    """The processes running now that `pid` started, or that they started, and so on."""
    children = _children_by_parent()
    found, waiting = [], list(children.get(pid, []))
    while waiting:
        found.append(waiting.pop(0))
        waiting += children.get(found[-1], [])
    return found


def _children_by_parent() -> dict[int, list[int]]:
    """Every process running now, by the pid of its parent."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        try:
            pid = int(entry.name)
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(pid)
    return children


def copy_fixture(name: str, target: Path) -> Path:
    """A fixture project copied to `target`, without what runs leave in it (`.audit/`
    from the README's demo run, bytecode)."""
    shutil.copytree(FIXTURES / name, target, ignore=shutil.ignore_patterns("__pycache__", ".audit"))
    return target


@pytest.fixture
def project_copy(tmp_path: Path):
    """Copy a fixture project into tmp_path (under `as_name`) and return the copy's path."""

    def copy(name: str, as_name: str = "") -> Path:
        target = tmp_path / (as_name or name)
        copy_fixture(name, target)
        return target

    return copy


@pytest.fixture(scope="session")
def fixture_runs(tmp_path_factory):
    """One real audit of each fixture's shallow and strong suite, shared by the checks
    (and by the xdist workers): {(fixture, suite): (completed process, report, project
    copy, digest before)}."""
    names = ("ledger", "shop", "textkit")
    computed = computed_once(tmp_path_factory, [f"e2e-{name}" for name in names], _audit_fixture)
    return {
        (run["name"], run["suite"]): (
            subprocess.CompletedProcess(
                run["args"], run["returncode"], run["stdout"], run["stderr"]
            ),
            json.loads(Path(run["report"]).read_text()),
            Path(run["root"]),
            run["before"],
        )
        for runs in computed.values()
        for run in runs
    }


def _audit_fixture(base: Path, key: str) -> list[dict]:
    """Both suites of one fixture, audited one after the other in one copy."""
    name = key.removeprefix("e2e-")
    root = base / name
    copy_fixture(name, root)
    before = tree_digest(root)
    runs = []
    for suite in ("tests_shallow", "tests_strong"):
        report = base / f"{name}-{suite}.json"
        result = run_audit(suite, "-q", "--json", str(report), cwd=root)
        runs.append(
            {
                "name": name,
                "suite": suite,
                "args": result.args,
                "returncode": result.returncode,
                "stdout": result.stdout,
                "stderr": result.stderr,
                "report": str(report),
                "root": str(root),
                "before": before,
            }
        )
    return runs


def a_mutant(mutant_id: str, **fields: Any) -> Mutant:
    """A report mutant (a surviving constant change in `pkg/m.py::f`), with `fields`
    changed, for checks that read mutants without running any."""
    defaults: dict[str, Any] = {
        "file": "pkg/m.py",
        "function": "f",
        "operator": "constants.number",
        "family": "constants",
        "line": 1,
        "col": 0,
        "end_line": 1,
        "original": "1",
        "replacement": "2",
        "description": "1 -> 2",
        "diff": "",
        "status": "Survived",
        "path": "swap",
    }
    return Mutant(id=mutant_id, **{**defaults, **fields})


def probe_spec(**fields: Any) -> ProbeSpec:
    """A probe process's spec with nothing to do and no limit in the way; `fields` set
    what a test needs."""
    defaults: dict[str, Any] = {
        "root": "/",
        "source_files": [],
        "allowed_roots": [],
        "guard": False,
        "memory_limit_mb": 1024,
        "log_file": "",
        "results_file": "",
        "max_examples": 40,
        "witness_examples": 40,
        "time_budget": 10.0,
        "call_timeout": 0.5,
        "expected_exceptions": [],
    }
    return ProbeSpec(**{**defaults, **fields})


def source_module(source: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """`source` as an importable module of a name of its own in `folder`: (name, path)."""
    name = f"module_{abs(hash(folder)) % 10**8}"
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(folder))
    return name, path


def target_spec(key: str, path: str, module: str, line: int = 1) -> TargetSpec:
    """A probe target as the probe stage describes one, for a plain function."""
    file, _, qualname = key.partition("::")
    return TargetSpec(
        key=key,
        file=file,
        path=path,
        module=module,
        qualname=qualname,
        line=line,
        kind="function",
        raises=[],
        unreached_raise_lines=[],
        documented_raises=[],
        doc_literals=[],
        observed=[],
    )


def subject_of(module: tuple[str, Path], qualname: str, kind: str = "function") -> Subject:
    """The function `qualname` of a `source_module` (name, path), callable as a probe
    calls it."""
    name, path = module
    target = target_spec(f"{path.name}::{qualname}", str(path.resolve()), name)
    return Subject(dataclasses.replace(target, kind=kind), {str(path.resolve())})
