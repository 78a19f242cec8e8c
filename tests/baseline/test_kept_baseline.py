"""A baseline is kept between runs and used again only when nothing it depends on changed."""

import json
import os
import shutil
from pathlib import Path

import pytest

from auditor.baseline import known
from auditor.discovery.project import discover
from auditor.mutation.cache import ResultCache
from tests.conftest import run_audit

CODE = "def double(x):\n    return x * 2\n"
TESTS = "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "calc"
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "1"\n')
    (root / "calc.py").write_text(CODE)
    (root / "tests" / "test_calc.py").write_text(TESTS)
    (root / "tests" / "conftest.py").write_text("")
    return root


def _baseline(root: Path, *flags: str, env: dict[str, str] | None = None) -> dict:
    """The baseline section of an audit without mutants or probes."""
    out = root.parent / "report.json"
    done = run_audit(
        "tests", "--no-mutation", "--no-probes", "--json", str(out), *flags, cwd=root, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())["baseline"]


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
    assert incremental["reuse"] == "measured: 2 files changed (calc.py, tests/test_calc.py)"
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
    assert again["reuse"] == "measured: 1 file changed (tests/conftest.py)"


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


def test_a_change_names_the_first_files_and_counts_the_rest():
    before = known.Manifest(audit="a", python="p", packages="k", files={"a.py": "1"})
    now = before.model_copy(
        update={"files": {name: "2" for name in ("a.py", "b.py", "c.py", "d.py", "e.py")}}
    )
    assert known.changes(before, now) == ["5 files changed (a.py, b.py, c.py and 2 more)"]
    assert known.changes(before, before) == []
