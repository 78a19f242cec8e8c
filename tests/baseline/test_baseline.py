"""The baseline stage on real fixture projects, in real child processes."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.baseline.stage import run_baseline
from auditor.config import AuditConfig
from auditor.context import RunContext
from auditor.discovery.project import discover
from tests.conftest import burns_under_coverage


def baseline_of(root: Path, tests: str, **config):
    project = discover([tests], [], root)
    return run_baseline(RunContext.start(project, AuditConfig(**config)))


@pytest.fixture(scope="module")
def textkit_strong(tmp_path_factory):

    from tests.conftest import copy_fixture

    root = tmp_path_factory.mktemp("tk") / "textkit"
    copy_fixture("textkit", root)
    baseline, coverage = baseline_of(root, "tests_strong")
    return root, baseline, coverage


def by_hand_coverage(root: Path, tests: str) -> dict[str, dict[str, set[int]]]:
    """coverage.py's own per-test-function contexts, from a `coverage run` by hand."""
    rc = root.parent / "by-hand.coveragerc"
    rc.write_text(
        f"[run]\nbranch = True\nsource = {root / 'src' / 'textkit'}\n"
        f"dynamic_context = test_function\ndata_file = {root.parent / 'by-hand.sqlite'}\n"
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "coverage",
            "run",
            f"--rcfile={rc}",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            tests,
        ],
        cwd=root,
        check=True,
        capture_output=True,
        env={
            "PYTHONPATH": str(root / "src"),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PATH": "/usr/bin:/bin",
        },
    )
    out = root.parent / "by-hand.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "coverage",
            "json",
            f"--rcfile={rc}",
            "--show-contexts",
            "-o",
            str(out),
        ],
        cwd=root,
        check=True,
        capture_output=True,
    )
    per_test: dict[str, dict[str, set[int]]] = {}
    for file, data in json.loads(out.read_text())["files"].items():
        for line, contexts in data["contexts"].items():
            for context in contexts:
                if context:
                    per_test.setdefault(context, {}).setdefault(file, set()).add(int(line))
    return per_test


@pytest.fixture(scope="module")
def by_hand(textkit_strong):
    """coverage.py's per-test lines from a run by hand, and the data file it wrote."""
    root, _, _ = textkit_strong
    return by_hand_coverage(root, "tests_strong"), root.parent / "by-hand.sqlite"


@pytest.mark.slow
def test_per_test_lines_agree_with_coverage_run_by_hand(textkit_strong, by_hand):
    _, baseline, _ = textkit_strong
    by_hand, _ = by_hand
    compared = 0
    for test in baseline.tests:
        if "[" in test.nodeid:
            continue  # coverage's test_function context merges parametrized cases
        module = Path(test.file).stem
        function = test.nodeid.split("::")[-1]
        expected = by_hand.get(f"{module}.{function}", {})
        ours = {file: set(lines) for file, lines in test.lines.items()}
        assert ours == expected, test.nodeid
        compared += 1
    assert compared >= 20


@pytest.mark.slow
def test_every_context_read_at_once_equals_coverage_apis_answers(by_hand):
    from coverage.data import CoverageData

    from auditor.baseline.coverage_data import _every_context

    _, data_file = by_hand
    at_once = _every_context(data_file)
    data = CoverageData(str(data_file))
    data.read()
    assert len(data.measured_contexts()) > 20
    for context in data.measured_contexts():
        data.set_query_context(context)
        asked = {file: set(data.arcs(file)) for file in data.measured_files() if data.arcs(file)}
        assert at_once.get(context, {}) == asked, context


def test_data_without_arcs_is_read_through_coverages_api(tmp_path):
    from coverage.data import CoverageData

    from auditor.baseline.coverage_data import _every_context

    lines_only = CoverageData(str(tmp_path / "lines.sqlite"))
    lines_only.add_lines({"/x.py": [1, 2]})
    assert _every_context(tmp_path / "lines.sqlite") is None


@pytest.mark.slow
def test_each_passing_test_records_lines_and_arcs(textkit_strong):
    _, baseline, _ = textkit_strong
    test = next(t for t in baseline.tests if t.nodeid.endswith("test_wrap_of_blank_text_is_empty"))
    assert test.outcome == "passed"
    assert test.lines["src/textkit/wrap.py"] == [8, 10, 11, 12, 26, 28]
    assert (26, 28) in test.arcs["src/textkit/wrap.py"]


@pytest.mark.slow
def test_tests_that_ran_the_same_arc_share_one_object_for_it(textkit_strong):
    """The report holds every test's arcs for the whole run: tabulate's 319 tests hold
    117,561 of them, 41 MB of the audit process when each was its own tuple."""
    _, baseline, _ = textkit_strong
    objects: dict[tuple[int, int], set[int]] = {}
    holders: dict[tuple[int, int], int] = {}
    for test in baseline.tests:
        for arcs in test.arcs.values():
            for arc in arcs:
                objects.setdefault(arc, set()).add(id(arc))
                holders[arc] = holders.get(arc, 0) + 1
    assert max(holders.values()) >= 10
    assert all(len(ids) == 1 for ids in objects.values())


@pytest.mark.slow
def test_import_time_lines_are_kept_apart(textkit_strong):
    _, baseline, _ = textkit_strong
    import_time = baseline.import_time_lines["src/textkit/wrap.py"]
    assert 3 in import_time  # `from __future__ import annotations`
    assert 8 not in import_time  # the body of wrap() runs only in tests


@pytest.mark.slow
def test_file_and_function_coverage_are_reported(textkit_strong):
    _, _, coverage = textkit_strong
    wrap = next(f for f in coverage.files if f.path == "src/textkit/wrap.py")
    assert wrap.counts.line_percent == 100.0
    assert [f.qualname for f in wrap.functions] == ["wrap", "align", "truncate"]


@pytest.mark.slow
def test_failing_tests_are_excluded_with_their_message(project_copy):
    root = project_copy("hostile")
    baseline, _ = baseline_of(root, "red")
    outcomes = {t.nodeid.split("::")[-1]: (t.outcome, t.message) for t in baseline.tests}
    assert outcomes["test_wrong_expectation"] == ("failed", "assert 4 == 5")
    assert outcomes["test_fixture_error"] == ("error", "RuntimeError: fixture exploded")
    assert baseline.passed == 2
    assert baseline.excluded == 2


@pytest.mark.slow
def test_failing_tests_contribute_no_coverage(project_copy):
    root = project_copy("hostile")
    baseline, _ = baseline_of(root, "red")
    failing = [t for t in baseline.tests if t.outcome != "passed"]
    assert all(t.lines == {} and t.arcs == {} for t in failing)


@pytest.mark.slow
def test_hypothesis_runs_derandomized_without_a_database(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("def ident(x):\n    return x\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_h.py").write_text(
        "from hypothesis import given, settings, strategies as st\n"
        "from pkg import ident\n\n"
        "@given(st.integers())\n"
        "def test_ident(x):\n"
        "    assert ident(x) == x\n"
        "    assert settings.default.derandomize\n"
        "    assert settings.default.database is None\n"
    )
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    baseline, _ = baseline_of(tmp_path, "tests")
    assert [t.outcome for t in baseline.tests] == ["passed"]
    assert not (tmp_path / ".hypothesis").exists()


def how_a_run_ends(root: Path, skip_summary: bool) -> tuple[bool, bool]:
    """Whether a pytest run of `root` had imported Hypothesis when it ended, and
    whether Hypothesis's plugin was still there to summarize it."""
    script = (
        "import sys, pytest\n"
        "from auditor.baseline.plugin import _skip_unused_hypothesis_summary\n"
        "class Ends:\n"
        "    def pytest_sessionfinish(self, session):\n"
        "        if sys.argv[1] == 'skip':\n"
        "            _skip_unused_hypothesis_summary(session.config)\n"
        "    def pytest_unconfigure(self, config):\n"
        "        plugin = config.pluginmanager.has_plugin('hypothesispytest')\n"
        "        open('ended', 'w').write(f\"{'hypothesis' in sys.modules} {plugin}\")\n"
        "pytest.main(['-q', '-p', 'no:cacheprovider', '.'], plugins=[Ends()])\n"
    )
    mode = "skip" if skip_summary else "keep"
    subprocess.run([sys.executable, "-c", script, mode], cwd=root, check=True, capture_output=True)
    imported, registered = (root / "ended").read_text().split()
    return imported == "True", registered == "True"


def test_a_suite_that_never_imports_hypothesis_ends_without_importing_it(tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert 1\n")
    assert how_a_run_ends(tmp_path, skip_summary=False) == (True, True)  # the summary did
    assert how_a_run_ends(tmp_path, skip_summary=True) == (False, False)


def test_a_suite_that_uses_hypothesis_keeps_its_summary(tmp_path):
    (tmp_path / "test_drawn.py").write_text(
        "from hypothesis import given, strategies as st\n\n"
        "@given(st.integers())\n"
        "def test_drawn(x):\n    assert x == x\n"
    )
    assert how_a_run_ends(tmp_path, skip_summary=True) == (True, True)


def full_collections_after_the_session(root: Path, skip: bool) -> int:
    """How many garbage collections a pytest run of `root` made after its session
    finished (none run by themselves: the threshold is 0 from then on)."""
    script = (
        "import gc, sys, pytest\n"
        "from auditor.baseline.plugin import _skip_final_collections\n"
        "made = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and made.append(1))\n"
        "class Ends:\n"
        "    @pytest.hookimpl(trylast=True)\n"
        "    def pytest_sessionfinish(self, session):\n"
        "        if sys.argv[1] == 'skip':\n"
        "            _skip_final_collections(session.config)\n"
        "        gc.set_threshold(0)\n"
        "        made.clear()\n"
        "pytest.main(['-q', '-p', 'no:cacheprovider', '.'], plugins=[Ends()])\n"
        "print(len(made))\n"
    )
    mode = "skip" if skip else "keep"
    done = subprocess.run(
        [sys.executable, "-c", script, mode], cwd=root, check=True, capture_output=True, text=True
    )
    return int(done.stdout.split()[-1])


def test_a_session_the_baseline_plugin_ends_makes_no_final_collections(tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert 1\n")
    assert full_collections_after_the_session(tmp_path, skip=False) > 0  # pytest's own
    assert full_collections_after_the_session(tmp_path, skip=True) == 0


@pytest.mark.slow
def test_code_a_test_runs_in_a_python_subprocess_is_attributed_to_it(project_copy):
    root = project_copy("traps")
    baseline, coverage = baseline_of(root, "tests")
    tests = {test.nodeid: test for test in baseline.tests}
    cli = tests["tests/test_cli.py::test_cli_doubles_its_argument"]
    main_body = [7, 8, 9]  # number = ..., print(render(number)), return 0
    assert set(main_body) <= set(cli.subprocess_lines["traps/cli.py"])
    assert not set(main_body) & set(cli.lines.get("traps/cli.py", []))
    assert tests["tests/test_core.py::test_spin_counts_up"].subprocess_lines == {}
    by_path = {file.path: file for file in coverage.files}
    assert by_path["traps/cli.py"].missing_lines == []


@pytest.mark.slow
def test_the_baseline_measures_how_much_the_tests_grew_their_process(tmp_path):
    (tmp_path / "blocks.py").write_text("def block(n):\n    return b'x' * n\n")
    (tmp_path / "test_memory.py").write_text(
        "from blocks import block\n\n\n"
        "def test_small():\n    assert 1\n\n\n"
        "def test_sixty_megabytes():\n    assert len(block(60 << 20)) == 60 << 20\n"
    )
    baseline, _ = baseline_of(tmp_path, "test_memory.py")
    assert 60 <= baseline.memory_growth_mb < 90


@pytest.mark.slow
def test_a_test_calling_a_method_thousands_of_times_builds_its_objects_repr_a_few_times(
    tmp_path,
):
    """The argument recorder describes a call with each argument's repr: built at every
    call, a cache's repr of thousands of items made cachetools' copy tests 50x slower."""
    (tmp_path / "store.py").write_text(
        "class Store:\n"
        "    reprs = 0\n\n"
        "    def __init__(self):\n        self.items = dict.fromkeys(range(1000))\n\n"
        "    def __repr__(self):\n        Store.reprs += 1\n        return repr(self.items)\n\n"
        "    def get(self, key):\n        return self.items[key]\n"
    )
    (tmp_path / "test_store.py").write_text(
        "from store import Store\n\n\n"
        "def test_many_reads():\n"
        "    store = Store()\n"
        "    assert [store.get(1) for _ in range(5000)] == [None] * 5000\n\n\n"
        "def test_the_store_was_shown_a_few_times():\n"
        "    assert Store.reprs <= 100\n"
    )
    baseline, _ = baseline_of(tmp_path, "test_store.py")
    assert baseline.passed == 2, [test.message for test in baseline.tests]
    assert "Store.get" in [function.qualname for function in baseline.observed]


def test_the_environments_own_sitecustomize_still_runs_in_subprocesses(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['THEIRS'] = 'loaded'\n")
    ours = Path(__file__).parents[2] / "auditor" / "baseline" / "subprocess_site"
    env = {"PYTHONPATH": f"{ours}{':'}{site}", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", "import os; print(os.environ.get('THEIRS'))"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.stdout.strip() == "loaded", result.stderr


def test_a_child_that_hangs_while_stopping_after_a_timeout_loses_only_that_test(tmp_path):
    from auditor.baseline import protocol
    from auditor.baseline.runner import BaselineRunner, _Attempt

    runner = BaselineRunner(
        tmp_path,
        tmp_path,
        test_paths=["tests"],
        source_dirs=[],
        source_roots=[],
        allow_write=[],
        test_timeout=2.0,
        memory_limit_mb=512,
    )
    timed_out = protocol.Result(
        nodeid="t.py::slow", file="t.py", outcome="timeout", duration=2.0, message=""
    )
    attempt = _Attempt(events=[protocol.Start(nodeid="t.py::slow"), timed_out], hung=True)
    assert runner._culprit(attempt, "") == timed_out


def _two_modules(root: Path, tests: str) -> Path:
    """`calc.py` and `other.py` under test, one test file."""
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "calc"\nversion = "1"\n\n[tool.audit]\nsrc = ["calc.py", "other.py"]\n'
    )
    (root / "calc.py").write_text("def double(x):\n    return x * 2\n")
    (root / "other.py").write_text("def triple(x):\n    return x * 3\n")
    (root / "tests" / "test_calc.py").write_text(tests)
    return root


@pytest.mark.slow
def test_a_file_under_test_no_test_imports_counts_as_uncovered(tmp_path):
    tests = "from calc import double\n\n\ndef test_double():\n    assert double(1) == 2\n"
    _, coverage = baseline_of(_two_modules(tmp_path, tests), "tests")

    by_path = {f.path: f.counts.line_percent for f in coverage.files}
    assert by_path == {"calc.py": 100.0, "other.py": 0.0}
    assert coverage.totals.line_percent == 50.0


@pytest.mark.slow
def test_a_suite_that_imports_none_of_the_code_is_measured_as_covering_nothing(tmp_path):
    tests = "def test_arithmetic():\n    assert 1 + 1 == 2\n"
    baseline, coverage = baseline_of(_two_modules(tmp_path, tests), "tests")

    assert [test.outcome for test in baseline.tests] == ["passed"]
    assert coverage.totals.covered_lines == 0
    assert coverage.totals.statements == 4


_LEFT_RUNNING = """
import threading

import calc

go = threading.Event()
threads = []


def test_starts_a_consumer_and_returns():
    thread = threading.Thread(target=lambda: go.wait() and calc.double(2))
    thread.start()
    threads.append(thread)
"""

_AT_SESSION_END = """
def pytest_sessionfinish(session):
    from tests import test_calc

    test_calc.go.set()
    for thread in test_calc.threads:
        thread.join()
"""


@pytest.mark.slow
def test_code_a_thread_runs_after_its_test_ended_is_not_import_time_code(tmp_path):
    # more-itertools: 100 threads of a test stopped by its timeout ran on, and their
    # calls passed for import-time calls, sending 18 mutants down the module path.
    root = _two_modules(tmp_path, _LEFT_RUNNING)
    (root / "calc.py").write_text('"""Arithmetic."""\n\n\ndef double(x):\n    return x * 2\n')
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "conftest.py").write_text(_AT_SESSION_END)
    baseline, _ = baseline_of(root, "tests")

    assert [test.outcome for test in baseline.tests] == ["passed"]
    assert baseline.import_time_calls["calc.py"] == [1]  # the module itself, not double
    assert 5 not in baseline.import_time_lines["calc.py"]


# Over ten times slower under coverage, past the 2 s timeout (threads under the tracer);
# untraced, far within it even on a loaded machine.
_SLOW_WHEN_TRACED = burns_under_coverage("double", "double(2) == 4", 2.5, 0.2) + (
    "\n\ndef test_hangs():\n    time.sleep(30)\n\n\ndef test_double():\n    assert double(3) == 6\n"
)


@pytest.fixture(scope="module")
def slowed_by_tracing(tmp_path_factory):
    root = _two_modules(tmp_path_factory.mktemp("slowed") / "calc", _SLOW_WHEN_TRACED)
    baseline, _ = baseline_of(root, "tests", test_timeout=2.0)
    return {test.nodeid.rsplit("::", 1)[1]: test for test in baseline.tests}


@pytest.mark.slow
def test_a_test_that_times_out_only_under_coverage_is_measured_again_and_kept(
    slowed_by_tracing,
):
    slowed = slowed_by_tracing["test_slowed_by_tracing"]
    assert slowed.outcome == "passed"
    assert slowed.lines == {"calc.py": [2]}
    assert slowed.duration > 2.0
    assert re.match(r"^timed out under coverage; passed in [0-9.]+s untraced", slowed.message)


@pytest.mark.slow
def test_a_test_that_also_times_out_untraced_stays_a_timeout(slowed_by_tracing):
    hangs = slowed_by_tracing["test_hangs"]
    assert (hangs.outcome, hangs.message) == ("timeout", "timed out after 2s in call")


_TICKING_REPR = """
class Clock:
    def __init__(self):
        self.now = 0

    def __repr__(self):
        self.now += 1  # cachetools' TTLCache: its repr reads an auto-ticking timer
        return f"Clock({self.now})"

    def read(self):
        return self.now
"""


@pytest.mark.slow
def test_a_test_passes_in_the_baseline_when_a_repr_of_the_code_would_change_its_state(
    tmp_path,
):
    tests = "from calc import Clock\n\n\ndef test_read():\n    assert Clock().read() == 0\n"
    root = _two_modules(tmp_path, tests)
    (root / "calc.py").write_text(_TICKING_REPR)
    baseline, _ = baseline_of(root, "tests")
    assert [(test.outcome, test.message) for test in baseline.tests] == [("passed", "")]
