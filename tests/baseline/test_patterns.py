"""The regular expressions the suite compiled are read from its run and compiled once by
each mutation runner, before it forks a child per mutant: code that compiles a pattern
on first use then finds it compiled in every child. Real baselines, real runners."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.baseline.patterns import MAX_PATTERN_CHARS, compiled_patterns
from auditor.baseline.stage import KEPT_WHOLE, run_baseline
from auditor.config import AuditConfig
from auditor.containment import wire
from auditor.context import RunContext
from auditor.discovery.project import discover
from auditor.mutation.cache import ResultCache
from auditor.mutation.executor import PoolSettings, RunnerPool
from auditor.mutation.protocol import BaselineFacts, Job, JobResult
from auditor.probes.protocol import FunctionResult, ProbeWork
from auditor.probes.targets import find_targets
from tests.conftest import one_module_project, probe_spec, target_spec

CODE = """\
import re


def is_code(text):
    return re.fullmatch("[a-z]{3}-[0-9]+", text, re.IGNORECASE) is not None


def has_marker(data):
    return re.search(b"\\xff\\xfe+", data) is not None
"""

TESTS = """\
from codes import has_marker, is_code


def test_is_code():
    assert is_code("ABC-12")


def test_has_marker():
    assert has_marker(b"..\\xff\\xfe")
"""

CODE_PATTERN = ("[a-z]{3}-[0-9]+", 2, False)
"""As the baseline gives it: `re.IGNORECASE` is 2; the pattern is text."""
MARKER_PATTERN = ("\xff\xfe+", 0, True)
"""The bytes pattern, each byte one Latin-1 character."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return one_module_project(tmp_path / "codes", "codes", CODE, {"test_codes.py": TESTS})


def _baseline(root: Path):
    store = ResultCache(root)
    try:
        baseline, _ = run_baseline(
            RunContext.start(discover(["tests"], [], root), AuditConfig()), store
        )
    finally:
        store.close()
    return baseline


def test_the_patterns_the_code_compiled_on_first_use_are_in_the_baseline(project):
    patterns = _baseline(project).compiled_patterns
    assert CODE_PATTERN in patterns
    assert MARKER_PATTERN in patterns
    assert patterns == sorted(patterns)


def test_a_kept_baseline_keeps_its_patterns(project):
    first = _baseline(project)
    again = _baseline(project)
    assert again.reuse == KEPT_WHOLE
    assert again.compiled_patterns == first.compiled_patterns
    assert CODE_PATTERN in again.compiled_patterns


def test_a_partial_baseline_adds_the_patterns_of_the_tests_it_ran(project):
    _baseline(project)
    added = 'import re\n\n\ndef test_a_word():\n    assert re.match("w+", "ww")\n'
    (project / "tests" / "test_words.py").write_text(added)
    again = _baseline(project)
    assert again.reuse.startswith("measured 1 of 3 tests")
    assert CODE_PATTERN in again.compiled_patterns  # from the tests it kept
    assert ("w+", 0, False) in again.compiled_patterns


def test_the_report_leaves_the_patterns_out(project):
    written = json.loads(_baseline(project).model_dump_json())
    assert "compiled_patterns" not in written
    assert "[a-z]{3}-[0-9]+" not in json.dumps(written)


ROUND_TRIP = """\
import json, re, sys
from auditor.baseline.patterns import compile_all, compiled_patterns

re.compile("a+b", re.IGNORECASE | re.MULTILINE)
re.compile(b"\\x00\\xff[\\x80-\\x9f]")
re.compile("caf\\u00e9|\\u732b")
before = compiled_patterns()
re.purge()
compile_all(before)
print(json.dumps([before, compiled_patterns()]))
"""


def test_compiling_what_was_read_fills_the_cache_as_the_suite_left_it():
    done = subprocess.run(
        [sys.executable, "-c", ROUND_TRIP], capture_output=True, text=True, check=True
    )
    before, after = json.loads(done.stdout)
    assert after == before
    assert ["a+b", 10, False] in before  # IGNORECASE | MULTILINE
    assert ["\x00\xff[\x80-\x9f]", 0, True] in before
    assert ["caf\u00e9|\u732b", 0, False] in before


def test_a_pattern_longer_than_the_limit_is_left_out():
    long = "x" * (MAX_PATTERN_CHARS + 1)
    short = "x" * MAX_PATTERN_CHARS
    re.compile(long)
    re.compile(short)
    kept = {text for text, _, _ in compiled_patterns()}
    assert short in kept
    assert long not in kept


WARM_TEST = """\
import re


def test_the_pattern_is_compiled_before_the_test_runs():
    assert (str, "[a-z]{3}-[0-9]+", re.IGNORECASE) in re._cache
"""


@pytest.mark.parametrize(
    ("patterns", "status"),
    [([CODE_PATTERN], "Survived"), ([], "Killed")],
    ids=["given the pattern", "given none"],
)
def test_a_runner_compiles_the_patterns_before_it_forks_a_mutants_child(tmp_path, patterns, status):
    root = one_module_project(tmp_path / "p", "codes", CODE, {"test_warm.py": WARM_TEST})
    test = "tests/test_warm.py::test_the_pattern_is_compiled_before_the_test_runs"
    settings = PoolSettings(
        test_paths=["tests"],
        source_files=["codes.py"],
        source_roots=["."],
        allow_write=[],
        memory_limit_mb=4096,
        facts=BaselineFacts(
            test_seconds={test: 0.001}, patterns=patterns, child_growth_limit_mb=1024
        ),
    )
    # The subprocess path changes nothing in the child: the test runs on the runner's state.
    job = Job(
        id="m",
        path="subprocess",
        file=str(root / "codes.py"),
        module_name="codes",
        tests=[test],
        timeout=30.0,
    )
    answered: list[JobResult] = []
    pool = RunnerPool(root=root, settings=settings, workdir=tmp_path / "work", jobs=1)
    try:
        pool.start()
        pool.run([job], answered.append)
    finally:
        pool.close()
    assert [result.status for result in answered] == [status]


PROBED = """\
import re


def warm(n: int) -> int:
    compiled = (str, "[a-z]{3}-[0-9]+", re.IGNORECASE) in re._cache
    return n // compiled  # ZeroDivisionError in a fork that would compile it itself
"""


@pytest.mark.parametrize(
    ("patterns", "crashes"),
    [([CODE_PATTERN], []), ([], ["unhandled_crash"])],
    ids=["given the pattern", "given none"],
)
def test_a_probe_process_compiles_the_patterns_before_its_first_fork(tmp_path, patterns, crashes):
    (tmp_path / "warmth.py").write_text(PROBED)
    target = find_targets(tmp_path / "warmth.py", "warmth.py", "warmth")[0]
    (tmp_path / "results.jsonl").touch()
    spec = probe_spec(
        root=str(tmp_path),
        source_files=[str(tmp_path / "warmth.py")],
        allowed_roots=[str(tmp_path)],
        results_file=str(tmp_path / "results.jsonl"),
        log_file=str(tmp_path / "output.log"),
        max_examples=5,
        modules=["warmth"],
    )
    work = ProbeWork(
        targets=[target_spec(target.key, str(tmp_path / "warmth.py"), "warmth", target.line)],
        survivors=[],
        items=[("probe", target.key)],
        patterns=patterns,
    )
    wire.write(tmp_path / "spec.json", spec)
    wire.write(tmp_path / "work.json", work)
    done = subprocess.run(
        [sys.executable, "-m", "auditor.probes.child", str(tmp_path / "spec.json")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        input=f"{tmp_path / 'work.json'}\n0\n\n".encode(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, (tmp_path / "output.log").read_text()
    (line,) = (tmp_path / "results.jsonl").read_text().splitlines()
    result = wire.decode(FunctionResult, line)
    assert [finding.kind for finding in result.findings] == crashes
