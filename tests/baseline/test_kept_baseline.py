"""A baseline is kept between runs and used again only when nothing it depends on changed."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.baseline import known
from auditor.discovery.project import discover
from auditor.mutation.cache import ResultCache
from auditor.report import BaselineSection, CoverageCounts, CoverageSection, TestResult
from tests.conftest import burns_under_coverage, one_module_project, run_audit

CODE = "def double(x):\n    return x * 2\n"
TESTS = "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return one_module_project(
        tmp_path / "calc", "calc", CODE, {"test_calc.py": TESTS, "conftest.py": ""}
    )


def _report(root: Path, *flags: str, env: dict[str, str] | None = None) -> dict:
    """The report of an audit without mutants or probes."""
    out = root.parent / "report.json"
    done = run_audit(
        "tests", "--no-mutation", "--no-probes", "--json", str(out), *flags, cwd=root, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _baseline(root: Path, *flags: str, env: dict[str, str] | None = None) -> dict:
    return _report(root, *flags, env=env)["baseline"]


def _measured(baseline: dict) -> dict:
    """The section without what differs between two runs of the same suite."""
    kept = {
        key: value for key, value in baseline.items() if key not in ("reuse", "memory_growth_mb")
    }
    kept["tests"] = [
        {k: v for k, v in test.items() if k != "duration"} for test in baseline["tests"]
    ]
    return kept


def _durations(baseline: dict) -> list[float]:
    return [test["duration"] for test in baseline["tests"]]


@pytest.mark.slow
def test_a_rerun_with_nothing_changed_runs_no_test(project):
    first = _baseline(project)
    again = _baseline(project)
    assert first["reuse"] == "measured: no baseline kept for these settings"
    assert again["reuse"] == "kept from an earlier run: nothing it depends on changed"
    # A test's duration is measured to the microsecond: equal only when not run again.
    assert _durations(again) == _durations(first)


def _other_name_of_this_interpreter() -> Path:
    """The interpreter as its folder names it otherwise (`python`, `python3`, `python3.X`
    are links to one file in every virtual environment and install), as `audit`'s script
    and `python -m auditor` may start it."""
    here = Path(sys.executable)
    names = ("python", "python3", f"python3.{sys.version_info.minor}")
    others = [
        here.parent / name
        for name in names
        if name != here.name
        and os.path.realpath(here.parent / name) == os.path.realpath(sys.executable)
    ]
    assert others, f"no other name of {sys.executable} in its folder"
    return others[0]


@pytest.mark.slow
def test_the_same_interpreter_through_a_link_keeps_the_baseline(project):
    link = _other_name_of_this_interpreter()
    first = _baseline(project)
    out = project / "linked.json"
    flags = ("-q", "--no-mutation", "--no-probes", "--json", str(out))
    done = subprocess.run(
        [str(link), "-m", "auditor", "tests", *flags],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    again = json.loads(out.read_text())["baseline"]
    assert first["reuse"] == "measured: no baseline kept for these settings"
    assert again["reuse"] == "kept from an earlier run: nothing it depends on changed"


@pytest.mark.slow
def test_an_edit_that_changes_behaviour_is_measured_as_a_cold_run_measures_it(project):
    _baseline(project)
    (project / "calc.py").write_text(
        "def double(x):\n    return x * 2\n\n\ndef half(x):\n    return x / 2\n"
    )
    (project / "tests" / "test_calc.py").write_text(
        TESTS + "\n\ndef test_half():\n    assert half(2) == 1\n"
    )
    incremental = _baseline(project)
    shutil.rmtree(project / ".audit")
    cold = _baseline(project)
    assert incremental["reuse"] == "measured: calc.py: a function was added or removed"
    outcomes = {test["nodeid"]: test["outcome"] for test in incremental["tests"]}
    assert outcomes == {
        "tests/test_calc.py::test_double": "passed",
        "tests/test_calc.py::test_half": "failed",
    }
    assert _measured(incremental) == _measured(cold)


@pytest.mark.slow
def test_a_changed_conftest_measures_again(project):
    _baseline(project)
    (project / "tests" / "conftest.py").write_text("import pytest\n")
    again = _baseline(project)
    assert again["reuse"] == (
        "measured: tests/conftest.py changed (not a test file, nor a function of the code under"
        " test)"
    )


@pytest.mark.slow
def test_a_changed_config_file_measures_again(project):
    """pytest reads its options there: any test may run otherwise."""
    _baseline(project)
    with (project / "pyproject.toml").open("a") as config:
        config.write('\n[tool.pytest.ini_options]\nmarkers = ["slow: a slow test"]\n')
    again = _baseline(project)
    assert again["reuse"] == (
        "measured: pyproject.toml changed (not a test file, nor a function of the code under test)"
    )


@pytest.mark.slow
def test_other_settings_keep_a_baseline_of_their_own(project):
    first = _baseline(project)
    other = _baseline(project, "--timeout", "7s")
    back = _baseline(project)
    assert other["reuse"] == "measured: no baseline kept for these settings"
    assert back["reuse"].startswith("kept")
    assert _durations(back) == _durations(first)


@pytest.mark.slow
def test_a_changed_installed_package_measures_again(project, tmp_path):
    site = tmp_path / "site"
    (site / "helper-1.0.dist-info").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(site)}
    _baseline(project, env=env)
    (site / "helper-1.0.dist-info").rename(site / "helper-1.1.dist-info")
    again = _baseline(project, env=env)
    assert again["reuse"] == "measured: the installed packages changed"


def test_the_files_a_run_depends_on_leave_out_what_runs_and_tools_leave_behind(project):
    (project / "tests" / "data.json").write_text("{}")
    (project / "audit-report.json").write_text("{}")
    for left in (".audit", ".venv", "tests/__pycache__"):
        (project / left).mkdir(parents=True)
        (project / left / "kept.py").write_text("")
    (project / "env").mkdir()
    (project / "env" / "pyvenv.cfg").write_text("")
    (project / "env" / "site.py").write_text("")
    files = known.depended_on(discover(["tests"], [], project))
    assert [path.relative_to(project).as_posix() for path in files] == [
        "calc.py",
        "pyproject.toml",
        "tests/conftest.py",
        "tests/data.json",
        "tests/test_calc.py",
    ]


def test_a_kept_baseline_that_does_not_read_as_one_is_measured_again(project):
    store = ResultCache(project)
    try:
        store.put_baseline("settings", '{"manifest": "from another version"}')
        assert known.kept(store, "settings") is None
    finally:
        store.close()


def _kept_baseline(test: str) -> known.KeptBaseline:
    """A kept baseline of one passing test."""
    totals = CoverageCounts(
        statements=1,
        covered_lines=1,
        branches=0,
        covered_branches=0,
        line_percent=100.0,
        branch_percent=100.0,
    )
    result = TestResult(nodeid=test, file="tests/test_calc.py", outcome="passed", duration=0.1)
    return known.KeptBaseline(
        manifest=known.Manifest(audit="a", python="p", packages="k", files={}),
        baseline=BaselineSection(
            tests=[result],
            collection_errors=[],
            passed=1,
            excluded=0,
            restarts=0,
            import_time_lines={},
        ),
        coverage=CoverageSection(totals=totals, files=[]),
    )


@pytest.fixture
def store(tmp_path: Path):
    cache = ResultCache(tmp_path)
    yield cache
    cache.close()


@pytest.fixture
def validations(monkeypatch) -> list[str]:
    """The kept baselines validated from their JSON from now on."""
    validated: list[str] = []
    validate = known.KeptBaseline.model_validate_json

    def counted(value: str) -> known.KeptBaseline:
        validated.append(value)
        return validate(value)

    monkeypatch.setattr(known.KeptBaseline, "model_validate_json", counted)
    return validated


def test_a_kept_baseline_prepared_between_runs_is_the_next_runs_once(store, validations):
    kept = _kept_baseline("tests/test_calc.py::test_double")
    known.keep(store, "settings", kept)
    known.prepare_next_load()
    assert len(validations) == 1
    prepared = known.kept(store, "settings")
    assert prepared == kept
    assert len(validations) == 1  # the run took it as prepared
    again = known.kept(store, "settings")
    assert again == kept
    assert again is not prepared  # the run that took it changes it
    assert len(validations) == 2


def test_a_prepared_baseline_is_not_handed_to_a_run_that_reads_another(store):
    known.keep(store, "settings", _kept_baseline("tests/test_calc.py::test_double"))
    known.prepare_next_load()
    other = _kept_baseline("tests/test_calc.py::test_triple")
    store.put_baseline("settings", other.model_dump_json())  # another run wrote it since
    assert known.kept(store, "settings") == other


def test_a_change_names_the_first_files_and_counts_the_rest():
    before = known.Manifest(audit="a", python="p", packages="k", files={"a.py": "1"})
    now = before.model_copy(
        update={"files": {name: "2" for name in ("a.py", "b.py", "c.py", "d.py", "e.py")}}
    )
    assert known.changes(before, now) == ["5 files changed (a.py, b.py, c.py and 2 more)"]
    assert known.changes(before, before) == []


TWO_FUNCTIONS = "def double(x):\n    return x * 2\n\n\ndef triple(x):\n    return x * 3\n"


@pytest.fixture
def two_functions(project: Path) -> Path:
    (project / "calc.py").write_text(TWO_FUNCTIONS)
    (project / "tests" / "test_triple.py").write_text(
        "from calc import triple\n\n\ndef test_triple():\n    assert triple(2) == 6\n"
    )
    return project


def _by_test(baseline: dict) -> dict[str, dict]:
    return {test["nodeid"]: test for test in baseline["tests"]}


@pytest.mark.slow
def test_a_changed_function_body_runs_only_the_tests_that_ran_it(two_functions):
    first = _by_test(_baseline(two_functions))
    (two_functions / "calc.py").write_text(TWO_FUNCTIONS.replace("x * 3", "x * 4"))
    incremental = _report(two_functions)
    again = _by_test(incremental["baseline"])
    assert incremental["baseline"]["reuse"] == (
        "measured 1 of 2 tests: 1 file changed (calc.py); the others kept their results"
    )
    double, triple = "tests/test_calc.py::test_double", "tests/test_triple.py::test_triple"
    assert again[double]["duration"] == first[double]["duration"]
    assert (first[triple]["outcome"], again[triple]["outcome"]) == ("passed", "failed")
    shutil.rmtree(two_functions / ".audit")
    cold = _report(two_functions)
    assert _measured(incremental["baseline"]) == _measured(cold["baseline"])
    assert incremental["coverage"] == cold["coverage"]


@pytest.mark.slow
def test_a_new_test_file_runs_alone(two_functions):
    first = _by_test(_baseline(two_functions))
    (two_functions / "tests" / "test_zero.py").write_text(
        "from calc import double\n\n\ndef test_zero():\n    assert double(0) == 0\n"
    )
    again = _by_test(_baseline(two_functions))
    assert sorted(again) == sorted([*first, "tests/test_zero.py::test_zero"])
    assert all(again[nodeid]["duration"] == test["duration"] for nodeid, test in first.items())


CALLS_DOUBLE = "def double(x):\n    return x * 2\n\n\ndef triple(x):\n    return x + double(x)\n"


@pytest.mark.slow
def test_an_edit_that_keeps_behaviour_keeps_the_observed_calls_a_cold_run_records(project):
    """The tests run again make the calls they made before: the calls stay in the order
    the whole suite made them, as a cold run records them."""
    (project / "calc.py").write_text(CALLS_DOUBLE)
    (project / "tests" / "test_triple.py").write_text(
        "from calc import triple\n\n\ndef test_triple():\n    assert triple(5) == 15\n"
    )
    _baseline(project)
    (project / "calc.py").write_text(CALLS_DOUBLE.replace("x + double(x)", "double(x) + x"))
    incremental = _baseline(project)
    assert incremental["reuse"].startswith("measured 1 of 2 tests")
    shutil.rmtree(project / ".audit")
    cold = _baseline(project)
    double = [entry for entry in cold["observed"] if entry["qualname"] == "double"]
    assert double[0]["calls"] == [{"x": ["2", "int"]}, {"x": ["5", "int"]}]
    assert incremental["observed"] == cold["observed"]


REFUSES_IMPORT = (
    "import os\n\nfrom calc import double\n\n"
    "if os.environ.get('TEST_DOUBLE_REFUSES_IMPORT'):\n"
    "    raise RuntimeError('collected')\n\n\n"
    "def test_double_again():\n    assert double(3) == 6\n"
)


@pytest.mark.slow
def test_a_test_file_whose_tests_all_keep_their_results_is_not_collected(two_functions):
    """Collecting marshmallow's 1,200 tests costs a change's run more than running the
    few it touches: a file none of whose tests runs again is not imported (here its
    import would be a collection error)."""
    (two_functions / "tests" / "test_double.py").write_text(REFUSES_IMPORT)
    first = _by_test(_baseline(two_functions))
    (two_functions / "calc.py").write_text(TWO_FUNCTIONS.replace("x * 3", "3 * x"))
    refusing = {**os.environ, "TEST_DOUBLE_REFUSES_IMPORT": "1"}
    again = _baseline(two_functions, env=refusing)
    assert again["collection_errors"] == []
    assert again["reuse"].startswith("measured 1 of 3 tests")
    kept = "tests/test_double.py::test_double_again"
    assert _by_test(again)[kept]["duration"] == first[kept]["duration"]


@pytest.mark.slow
def test_a_module_only_an_uncollected_file_imports_keeps_its_import_time_coverage(
    two_functions,
):
    """`table` is imported by test_table.py alone, which the run after the change does
    not collect: its import-time lines and coverage are the earlier run's, as a cold run
    measures them."""
    (two_functions / "table.py").write_text(
        "from calc import double\n\nROWS = [1, 2]\n\n\ndef total():\n"
        "    return sum(double(row) for row in ROWS)\n"
    )
    (two_functions / "tests" / "test_table.py").write_text(
        "import table\n\n\ndef test_rows():\n    assert table.ROWS == [1, 2]\n"
    )
    _baseline(two_functions)
    (two_functions / "calc.py").write_text(TWO_FUNCTIONS.replace("x * 3", "3 * x"))
    incremental = _report(two_functions)
    shutil.rmtree(two_functions / ".audit")
    cold = _report(two_functions)
    assert incremental["baseline"]["reuse"].startswith("measured 1 of 3 tests")
    assert incremental["baseline"]["import_time_lines"]["table.py"] == [1, 3, 6]
    assert _measured(incremental["baseline"]) == _measured(cold["baseline"])
    assert incremental["coverage"] == cold["coverage"]


@pytest.mark.slow
def test_a_test_file_that_no_longer_calls_the_code_at_import_is_measured_as_cold(
    two_functions,
):
    """test_table.py called `total` at import, and no longer does: what the earlier run
    ran at import is not carried over, and the lines of `total` are not import time."""
    (two_functions / "table.py").write_text(
        "ROWS = [1, 2]\n\n\ndef total():\n    return sum(ROWS)\n"
    )
    calls_at_import = "import table\n\nTOTAL = table.total()\n\n\ndef test_rows():\n"
    (two_functions / "tests" / "test_table.py").write_text(
        calls_at_import + "    assert table.ROWS == [1, 2]\n"
    )
    first = _baseline(two_functions)
    assert first["import_time_lines"]["table.py"] == [1, 4, 5]
    (two_functions / "tests" / "test_table.py").write_text(
        "import table\n\n\ndef test_rows():\n    assert table.ROWS == [1, 2]\n"
    )
    incremental = _report(two_functions)
    shutil.rmtree(two_functions / ".audit")
    cold = _report(two_functions)
    assert incremental["baseline"]["reuse"].startswith("measured 1 of 3 tests")
    assert incremental["baseline"]["import_time_lines"]["table.py"] == [1, 4]
    assert _measured(incremental["baseline"]) == _measured(cold["baseline"])
    assert incremental["coverage"] == cold["coverage"]


@pytest.mark.slow
def test_a_changed_function_that_ran_at_import_runs_every_test(two_functions):
    with_table = TWO_FUNCTIONS + "\n\nTABLE = [double(1)]\n"
    (two_functions / "calc.py").write_text(with_table)
    _baseline(two_functions)
    (two_functions / "calc.py").write_text(with_table.replace("x * 2", "x + x"))
    again = _baseline(two_functions)
    assert again["reuse"] == "measured: calc.py: a changed function ran at import"


@pytest.mark.slow
def test_a_case_named_at_collection_runs_again_and_is_listed_once(two_functions):
    """A kept case whose id this collection does not have (made from the clock) is not
    left out: it runs under its new id, and its old one is gone. (Its file is collected
    because another of its tests runs the changed function.)"""
    (two_functions / "tests" / "test_stamped.py").write_text(
        "import time\n\nimport pytest\n\nfrom calc import double, triple\n\n\n"
        "@pytest.mark.parametrize('n', [1], ids=[str(time.time_ns())])\n"
        "def test_stamped(n):\n    assert double(n) == 2\n\n\n"
        "def test_triple_too():\n    assert triple(1) == 3\n"
    )
    first = _baseline(two_functions)
    (two_functions / "calc.py").write_text(TWO_FUNCTIONS.replace("x * 3", "3 * x"))
    again = _baseline(two_functions)
    stamped = [nodeid for nodeid in _by_test(again) if "::test_stamped[" in nodeid]
    assert len(stamped) == 1
    assert stamped[0] not in _by_test(first)
    assert again["reuse"].startswith("measured 3 of 4 tests")


@pytest.mark.slow
def test_a_partial_baseline_measures_again_a_test_that_timed_out_only_under_coverage(
    two_functions,
):
    slowed = burns_under_coverage("triple", "triple(2) == 6", 2.5, 0.2)
    (two_functions / "tests" / "test_triple.py").write_text(slowed)
    _baseline(two_functions, "--timeout", "2")
    (two_functions / "calc.py").write_text(TWO_FUNCTIONS.replace("x * 3", "3 * x"))
    again = _report(two_functions, "--timeout", "2")
    triple = _by_test(again["baseline"])["tests/test_triple.py::test_slowed_by_tracing"]
    assert again["baseline"]["reuse"].startswith("measured 1 of 2 tests")
    assert triple["outcome"] == "passed"
    assert triple["message"].startswith("timed out under coverage; passed in ")
    assert triple["lines"] == {"calc.py": [6]}


FUNCTIONS_AND_A_CLASS = (
    "X = 1\n\n\ndef f(a=1):\n    '''Doc.'''\n    return a\n\n\n"
    "class C:\n    def m(self):\n        return 2\n"
)


def test_a_change_inside_function_bodies_gives_their_spans():
    new = FUNCTIONS_AND_A_CLASS.replace("return a", "return 3").replace("return 2", "return 4")
    assert known.changed_bodies(FUNCTIONS_AND_A_CLASS, new).spans == [(6, 6), (11, 11)]


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [("X = 1", "X = 2", 1), ("a=1", "a=2", 4), ("Doc.", "Other.", 5), ("X = 1", "# X", 1)],
)
def test_a_change_outside_function_bodies_is_named_by_its_line(old, new, line):
    changed = FUNCTIONS_AND_A_CLASS.replace(old, new)
    assert known.changed_bodies(FUNCTIONS_AND_A_CLASS, changed) == (
        f"line {line} changed outside a function's body"
    )


def test_comments_and_blank_lines_change_no_body():
    code = FUNCTIONS_AND_A_CLASS
    assert known.changed_bodies(code, code + "\n").spans == []
    assert known.changed_bodies(code + "# a\n", code + "# b\n").spans == []


def test_lines_added_in_a_body_move_the_lines_below_it():
    new = FUNCTIONS_AND_A_CLASS.replace(
        "    return a\n", "    if a:\n        a += 1\n    return a\n"
    )
    edit = known.changed_bodies(FUNCTIONS_AND_A_CLASS, new)
    assert edit.spans == [(6, 6)]
    assert (edit.lines[5], edit.lines[10], edit.lines[11]) == (5, 12, 13)


def test_a_function_added_or_a_line_added_outside_bodies_is_more_than_an_edit():
    code = FUNCTIONS_AND_A_CLASS
    added = code + "\n\ndef g():\n    return 1\n"
    assert known.changed_bodies(code, added) == "a function was added or removed"
    assert known.changed_bodies(code, code.replace("X = 1\n", "X = 1\nY = 2\n")) == (
        "line 2 changed outside a function's body"
    )


@pytest.mark.slow
def test_lines_added_to_a_function_move_the_lines_the_kept_tests_ran(two_functions):
    """test_triple ran lines below the edited `double`: it keeps its result, its lines
    and arcs numbered as the file is now, and the sections equal a cold run's."""
    _baseline(two_functions)
    longer = TWO_FUNCTIONS.replace(
        "    return x * 2\n", "    doubled = x * 2\n    return doubled\n"
    )
    (two_functions / "calc.py").write_text(longer)
    incremental = _report(two_functions)
    shutil.rmtree(two_functions / ".audit")
    cold = _report(two_functions)
    assert incremental["baseline"]["reuse"].startswith("measured 1 of 2 tests")
    assert _measured(incremental["baseline"]) == _measured(cold["baseline"])
    assert incremental["coverage"] == cold["coverage"]


CLI_TEST = (
    "import subprocess\nimport sys\n\n\ndef test_cli():\n"
    "    code = 'import calc; print(calc.double(2))'\n"
    "    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)\n"
    "    assert done.stdout == '4\\n'\n"
)


@pytest.mark.slow
def test_a_test_whose_python_subprocess_ran_no_changed_function_keeps_its_result(
    two_functions,
):
    """Its subprocesses' arcs are kept with the baseline: they join the coverage (only
    the subprocess runs `quadruple`)."""
    code = TWO_FUNCTIONS + "\n\ndef quadruple(x):\n    return double(double(x))\n"
    (two_functions / "calc.py").write_text(code)
    (two_functions / "tests" / "test_cli.py").write_text(
        CLI_TEST.replace("calc.double(2)", "calc.quadruple(1)")
    )
    first = _by_test(_baseline(two_functions))
    assert 10 in first["tests/test_cli.py::test_cli"]["subprocess_lines"]["calc.py"]
    (two_functions / "calc.py").write_text(code.replace("x * 3", "3 * x"))
    incremental = _report(two_functions)
    assert incremental["baseline"]["reuse"].startswith("measured 1 of 3 tests")
    cli = "tests/test_cli.py::test_cli"
    assert _by_test(incremental["baseline"])[cli]["duration"] == first[cli]["duration"]
    shutil.rmtree(two_functions / ".audit")
    assert incremental["coverage"] == _report(two_functions)["coverage"]


@pytest.mark.slow
def test_a_test_whose_python_subprocess_ran_a_changed_function_runs_again(two_functions):
    (two_functions / "tests" / "test_cli.py").write_text(CLI_TEST)
    first = _by_test(_baseline(two_functions))
    (two_functions / "calc.py").write_text(TWO_FUNCTIONS.replace("x * 2", "2 * x"))
    again = _baseline(two_functions)
    assert again["reuse"].startswith("measured 2 of 3 tests")
    kept = _by_test(again)["tests/test_triple.py::test_triple"]
    assert kept["duration"] == first["tests/test_triple.py::test_triple"]["duration"]


@pytest.mark.slow
def test_a_kept_test_whose_id_begins_another_leaves_that_one_to_run(two_functions):
    """pytest's `--deselect` takes prefixes: keeping `test_double` must not leave out
    `test_double_and_triple`, which runs the changed function."""
    (two_functions / "tests" / "test_calc.py").write_text(
        TESTS + "\n\ndef test_double_and_triple():\n    assert triple(double(1)) == 6\n"
    )
    (two_functions / "tests" / "test_calc.py").write_text(
        "from calc import double, triple\n"
        + (two_functions / "tests" / "test_calc.py").read_text().split("\n", 1)[1]
    )
    first = _by_test(_baseline(two_functions))
    (two_functions / "calc.py").write_text(TWO_FUNCTIONS.replace("x * 3", "3 * x"))
    again = _by_test(_baseline(two_functions))
    assert sorted(again) == sorted(first)
    both = "tests/test_calc.py::test_double_and_triple"
    assert again[both]["duration"] != first[both]["duration"]


def test_a_line_of_a_string_that_reads_like_a_comment_is_code():
    old = 'TEMPLATE = """\n# header\n"""\n\n\ndef f():\n    return TEMPLATE\n'
    new = old.replace("# header", "# footer")
    assert known.changed_bodies(old, new) == "line 2 changed outside a function's body"
