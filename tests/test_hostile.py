"""Every hostile suite gets its documented status, message and exit code, and leaves the
fixture byte-identical."""

import json
import os
import random
from pathlib import Path

import pytest

from tests.conftest import mutants_of, run_audit, tree_digest

pytestmark = pytest.mark.slow


@pytest.fixture
def hostile(project_copy):
    root = project_copy("hostile")
    return root, tree_digest(root)


def audit_suite(root: Path, suite: str, tmp_path: Path, *, mutation: bool = False):
    """The baseline is where hazards show; the mutants run only where a check is about
    which tests may kill."""
    report = tmp_path / f"{suite}.json"
    options = () if mutation else ("--no-mutation",)
    result = run_audit(
        suite, "--quiet", "--no-probes", *options, "--timeout", "2", "--json", str(report), cwd=root
    )
    return result, report


def outcomes(report: Path) -> dict[str, tuple[str, str]]:
    data = json.loads(report.read_text())
    return {
        t["nodeid"].split("::")[-1]: (t["outcome"], t["message"]) for t in data["baseline"]["tests"]
    }


def test_hanging_test_times_out_and_the_rest_is_audited(hostile, tmp_path):
    root, before = hostile
    result, report = audit_suite(root, "hang", tmp_path)
    assert result.returncode == 0, result.stderr
    found = outcomes(report)
    assert found["test_hangs_forever"] == ("timeout", "timed out after 2s in call")
    assert found["test_fine"][0] == "passed"
    assert tree_digest(root) == before


def test_threads_a_timed_out_test_leaves_behind_do_not_reach_the_tests_after_it(hostile, tmp_path):
    root, before = hostile
    result, report = audit_suite(root, "threads_left_running", tmp_path)
    assert result.returncode == 0, result.stderr
    found = outcomes(report)
    assert found.pop("test_leaves_a_thread_behind") == ("timeout", "timed out after 2s in call")
    assert {outcome for outcome, _ in found.values()} == {"passed"}
    assert len(found) == 30
    data = json.loads(report.read_text())
    assert data["baseline"]["restarts"] == 1  # resumed once, after the timed-out test
    by_test = {t["nodeid"].split("::")[-1]: t for t in data["baseline"]["tests"]}
    assert by_test["test_after_it[29]"]["lines"]  # coverage of the resumed child is kept
    assert tree_digest(root) == before


def test_a_test_that_catches_its_timeout_is_stopped_soon_after_it(hostile, tmp_path):
    root, before = hostile
    result, report = audit_suite(root, "catches_timeout", tmp_path)
    assert result.returncode == 0, result.stderr
    found = outcomes(report)
    assert found["test_each_case_sleeps"] == (
        "timeout",
        "timed out after 2s, and caught the timeout and ran on",
    )
    assert found["test_fine"][0] == "passed"
    assert tree_digest(root) == before


def test_past_the_time_budget_a_crashed_suite_is_not_run_again(hostile, tmp_path):
    root, before = hostile
    result = run_audit("os_exit", "-q", "--no-probes", "--time-budget", "0.1s", cwd=root)
    assert result.returncode == 4, result.stderr
    assert "baseline: the time budget ran out; the suite would run again" in result.stderr
    assert "Traceback" not in result.stderr
    assert tree_digest(root) == before


def test_os_exit_crashes_only_its_test(hostile, tmp_path):
    root, before = hostile
    result, report = audit_suite(root, "os_exit", tmp_path)
    assert result.returncode == 0, result.stderr
    found = outcomes(report)
    assert found["test_exits_the_process"] == ("crashed", "the test process exited with code 7")
    assert found["test_after_exit"][0] == "passed"
    assert "Traceback" not in result.stderr
    assert tree_digest(root) == before


def test_segfault_crashes_only_its_test(hostile, tmp_path):
    root, before = hostile
    result, report = audit_suite(root, "segfault", tmp_path)
    assert result.returncode == 0, result.stderr
    assert outcomes(report)["test_segfaults"] == (
        "crashed",
        "the test process was killed by SIGSEGV",
    )
    assert not list(root.rglob("core*"))
    assert tree_digest(root) == before


def test_writes_outside_tmp_are_blocked_and_nothing_changes(hostile, tmp_path):
    root, before = hostile
    env_mode = os.stat("/usr/bin/env").st_mode
    result, report = audit_suite(root, "writes_outside_tmp", tmp_path)
    assert result.returncode == 0, result.stderr
    found = outcomes(report)
    assert found["test_writes_to_etc"] == (
        "blocked",
        "blocked by audit guard: open-for-write /etc/audit-hostile-marker",
    )
    assert found["test_chmods_a_system_file"] == (
        "blocked",
        "blocked by audit guard: os.chmod /usr/bin/env",
    )
    assert found["test_writes_into_the_project"][0] == "blocked"
    assert found["test_fine"][0] == "passed"
    assert not Path("/etc/audit-hostile-marker").exists()
    assert os.stat("/usr/bin/env").st_mode == env_mode
    assert tree_digest(root) == before


def test_network_access_is_blocked(hostile, tmp_path):
    root, before = hostile
    result, report = audit_suite(root, "network", tmp_path)
    assert result.returncode == 0, result.stderr
    outcome, message = outcomes(report)["test_opens_a_socket"]
    assert outcome == "blocked"
    assert message.startswith("blocked by audit guard: network")
    assert tree_digest(root) == before


def test_red_tests_are_listed_and_the_rest_audited(hostile, tmp_path):
    root, before = hostile
    result, report = audit_suite(root, "red", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "test_wrong_expectation" in result.stdout
    assert json.loads(report.read_text())["baseline"]["passed"] == 2
    assert tree_digest(root) == before


@pytest.mark.parametrize(
    ("suite", "message"),
    [
        (
            "syntax_error",
            "audit: baseline: cannot collect syntax_error/test_syntax.py: SyntaxError",
        ),
        ("non_utf8", "audit: baseline: cannot collect non_utf8/test_latin1.py: SyntaxError"),
        (
            "import_error",
            "audit: baseline: cannot collect import_error/test_import.py: "
            "ModuleNotFoundError: No module named 'calc.missing'",
        ),
        (
            "sys_exit_at_import",
            "audit: baseline: pytest stopped while collecting "
            "sys_exit_at_import/test_exit_at_import.py: SystemExit: 5",
        ),
        ("empty", "audit: baseline: no tests collected from empty"),
    ],
)
def test_unusable_suite_exits_3_naming_the_file(hostile, tmp_path, suite, message):
    root, before = hostile
    result, report = audit_suite(root, suite, tmp_path)
    assert result.returncode == 3
    assert result.stderr.strip().startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1
    assert not report.exists()
    assert tree_digest(root) == before


def test_an_order_dependent_test_is_marked_flaky_and_kills_nothing(hostile, tmp_path):
    root, before = hostile
    result, report = audit_suite(root, "order_dependent", tmp_path, mutation=True)
    assert result.returncode == 0, result.stderr
    data = json.loads(report.read_text())
    flaky = {t["nodeid"].split("::")[-1]: t["flaky"] for t in data["baseline"]["tests"]}
    assert flaky["test_relies_on_the_test_before_it"].startswith(
        "failed when the suite ran in another order (reversed)"
    )
    assert flaky["test_add_records_a_sum"] == flaky["test_independent"] == ""
    assert data["baseline"]["flaky"] == [
        "order_dependent/test_order.py::test_relies_on_the_test_before_it"
    ]
    killers = {test for m in mutants_of(data) for test in m["killed_by"] + m["covered_by"]}
    assert not any("test_relies_on_the_test_before_it" in test for test in killers)
    assert tree_digest(root) == before


def test_tests_failing_at_random_are_marked_flaky_and_kill_nothing(hostile, tmp_path):
    """flaky_random: 20 tests, each failing when its draw from random.Random(30) is
    below 0.3; the rerun (reversed order) hands the draws out the other way round."""
    root, before = hostile
    generator = random.Random(30)
    draws = [generator.random() for _ in range(20)]
    first_run_failures = {n for n in range(20) if draws[n] < 0.3}
    expected_flaky = {n for n in range(20) if n not in first_run_failures and draws[19 - n] < 0.3}
    assert 3 <= len(first_run_failures) <= 9 and expected_flaky  # the seed gives both

    result, report = audit_suite(root, "flaky_random", tmp_path, mutation=True)
    assert result.returncode == 0, result.stderr
    data = json.loads(report.read_text())
    tests = {int(t["nodeid"].split("[")[1].rstrip("]")): t for t in data["baseline"]["tests"]}
    assert {n for n, t in tests.items() if t["outcome"] == "failed"} == first_run_failures
    assert {n for n, t in tests.items() if t["flaky"]} == expected_flaky
    killers = {test for m in data["mutation"]["mutants"] for test in m["killed_by"]}
    assert not any(f"[{n}]" in test for test in killers for n in expected_flaky)
    assert tree_digest(root) == before


def _under(suite: str, sandbox: str):
    """A case of a hazard under a sandbox: both for a hazard the sandbox changes, where
    the `os` case skips without an OS sandbox, saying so (or fails, in CI); the machine's
    best (`auto`) for the others."""
    if sandbox == "os":
        return pytest.param(suite, sandbox, marks=pytest.mark.needs("os-sandbox"))
    return pytest.param(suite, sandbox)


HAZARDS = {
    "sys_exit_in_test": {"test_calls_sys_exit": ("failed", "SystemExit: 3")},
    "kills_parent": {
        "test_kills_the_process_that_runs_it": ("blocked", "blocked by audit guard: signal kill(")
    },
    "closes_stdout": {"test_closes_stdout_and_stderr": ("passed", "")},
    "huge_output": {"test_prints_fifty_megabytes": ("passed", "")},
    "deep_recursion": {
        "test_recursion_error": ("failed", "RecursionError: maximum recursion depth"),
        "test_overflows_the_c_stack": ("crashed", "the test process was killed by SIGSEGV"),
    },
    "memory_hog": {"test_asks_for_a_hundred_gigabytes": ("failed", "MemoryError")},
    "spawns_subprocess": {
        "test_runs_a_program": ("passed", ""),
        "test_runs_python": ("passed", ""),
    },
    "crlf_tabs": {"test_crlf_and_tabs": ("passed", "")},
}
SANDBOX_SENSITIVE = {"kills_parent", "spawns_subprocess", "closes_stdout", "memory_hog"}


@pytest.mark.parametrize(
    ("suite", "sandbox"),
    [
        _under(suite, sandbox)
        for suite in HAZARDS
        for sandbox in (("guard", "os") if suite in SANDBOX_SENSITIVE else ("auto",))
    ],
)
def test_each_hazard_gets_its_status_and_the_run_completes(hostile, tmp_path, suite, sandbox):
    root, before = hostile
    report = tmp_path / "r.json"
    result = run_audit(
        suite,
        "-q",
        "--no-probes",
        "--no-mutation",
        "--timeout",
        "15",  # above what the C-stack overflow takes on a busy machine (~4 s alone)
        "--sandbox",
        sandbox,
        "--json",
        str(report),
        cwd=root,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    found = outcomes(report)
    for test, (outcome, message) in HAZARDS[suite].items():
        assert found[test][0] == outcome, found[test]
        assert found[test][1].startswith(message), found[test]
    assert found.get("test_fine", ("passed",))[0] == "passed"
    assert tree_digest(root) == before


def test_five_thousand_tiny_tests_are_audited(hostile, tmp_path):
    root, before = hostile
    report = tmp_path / "r.json"
    result = run_audit(
        "many_tests", "-q", "--no-mutation", "--no-probes", "--json", str(report), cwd=root
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(report.read_text())
    assert data["baseline"]["passed"] == 5000
    assert all(test["lines"] for test in data["baseline"]["tests"])
    assert tree_digest(root) == before
