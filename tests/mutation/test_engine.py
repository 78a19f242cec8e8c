"""The mutation engine end to end: real runners, real forks, real verdicts."""

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from auditor.mutation.estimates import overheads
from auditor.mutation.protocol import JobResult
from tests.conftest import (
    cached_results,
    children_running,
    mutants_of,
    one_module_project,
    report_differences,
    run_audit,
    tree_digest,
)

SOME_MUTATORS = ("--mutators", "constants,comparison")
"""For checks of the cache, which need killed and surviving mutants but not all of them:
a third of ledger's mutants."""


def audit_json(root: Path, suite: str, out: Path, *flags: str) -> dict:
    result = run_audit(suite, "-q", "--no-probes", "--json", str(out), *flags, cwd=root)
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def traps(tmp_path_factory):
    import shutil

    from tests.conftest import FIXTURES

    root = tmp_path_factory.mktemp("traps") / "traps"
    shutil.copytree(FIXTURES / "traps", root)
    report = audit_json(root, "tests", root.parent / "r.json", "--timeout", "5")
    return {m["id"]: m for m in mutants_of(report)}


@pytest.mark.slow
def test_a_mutant_that_loops_forever_times_out(traps):
    mutant = traps["traps/core.py::spin::augmented.swap@3:8#0"]
    assert mutant["status"] == "Timeout"


@pytest.mark.slow
def test_a_timeout_names_the_test_that_was_running_and_its_kind(traps):
    mutant = traps["traps/core.py::spin::augmented.swap@3:8#0"]
    assert mutant["kill_kind"] == "timeout"
    assert mutant["killed_by"] and mutant["killed_by"][0] in mutant["status_reason"]


@pytest.mark.slow
def test_a_mutant_that_grows_memory_without_bound_is_stopped_by_the_memory_watch(traps, fault):
    mutant = traps["traps/core.py::buffers::augmented.swap@4:8#0"]
    assert mutant["status"] == "Timeout"
    assert mutant["status_reason"].endswith("(runaway memory)")
    fault(
        "processes",
        "out of memory in a child: a mutant whose test allocates without bound",
        did="stopped the child by its memory watch, under its address-space limit",
        exit_code=0,
        saw=f"{mutant['status']}: {mutant['status_reason']}",
        lost="nothing: the mutant's verdict is that timeout",
    )


@pytest.mark.slow
def test_a_mutant_may_use_the_memory_its_tests_needed_in_the_baseline(traps):
    # test_a_block_of_a_hundred_megabytes needs 100 MB; the mutant asks 100.1 MB
    mutant = traps["traps/core.py::block::constants.number@3:34#0"]
    assert (mutant["status"], mutant["kill_kind"]) == ("Killed", "assertion")


@pytest.mark.slow
def test_a_mutant_that_segfaults_is_killed_by_the_running_test(traps):
    mutant = traps["traps/core.py::crash::boolean.condition@1:7#1"]
    assert mutant["status"] == "Killed"
    assert mutant["killed_by"] == ["tests/test_core.py::test_crash_returns_one_when_flagged"]
    assert mutant["status_reason"] == "test process killed by SIGSEGV"


@pytest.mark.slow
def test_a_mutant_that_calls_os_exit_is_killed(traps):
    mutant = traps["traps/core.py::leave::boolean.condition@1:7#1"]
    assert (mutant["status"], mutant["status_reason"]) == (
        "Killed",
        "test process exited with code 3",
    )


@pytest.mark.slow
def test_decorated_and_reexported_functions_are_swapped(traps):
    mutant = traps["traps/core.py::double::arithmetic.swap@1:11#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "swap")


@pytest.mark.slow
def test_module_constants_take_the_module_path(traps):
    mutant = traps["traps/core.py::<module>::constants.number@7:7#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "module")


@pytest.mark.slow
def test_subtest_failures_kill(traps):
    mutant = traps["traps/core.py::triple::arithmetic.swap@1:11#0"]
    assert mutant["status"] == "Killed"


@pytest.mark.slow
def test_dropping_the_last_closure_variable_still_swaps(traps):
    mutant = traps["traps/core.py::Greeter.greet::extreme.body@1:8#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "swap")


@pytest.mark.slow
def test_a_survivor_in_process_is_killed_by_the_test_whose_subprocess_runs_it(traps):
    mutant = traps["traps/cli.py::render::arithmetic.swap@1:15#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "swap")
    assert mutant["killed_by"] == ["tests/test_cli.py::test_cli_doubles_its_argument"]
    assert "tests/test_cli.py::test_render_gives_text" in mutant["covered_by"]


@pytest.fixture(scope="module")
def spawner(tmp_path_factory):
    """fixtures/spawner: code that only the Python subprocesses of its tests run."""
    import shutil

    from tests.conftest import FIXTURES

    root = tmp_path_factory.mktemp("spawner") / "spawner"
    shutil.copytree(FIXTURES / "spawner", root)
    out = root.parent / "r.json"
    result = run_audit("tests", "--no-probes", "--verify-sample", "6", "--json", str(out), cwd=root)
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    return report, {m["id"]: m for m in mutants_of(report)}, result.stdout


@pytest.mark.slow
def test_code_only_a_python_m_subprocess_runs_is_killed_when_its_test_checks_the_output(
    spawner,
):
    _, mutants, _ = spawner
    mutant = mutants["spawner/shout.py::shout::extreme.body@1:4#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "subprocess")
    assert mutant["killed_by"] == ["tests/test_commands.py::test_shout_prints_the_text_in_capitals"]


@pytest.mark.slow
def test_code_only_a_python_m_subprocess_runs_survives_when_its_test_checks_nothing(spawner):
    _, mutants, _ = spawner
    mutant = mutants["spawner/whisper.py::whisper::constants.string@1:26#0"]
    assert (mutant["status"], mutant["path"]) == ("Survived", "subprocess")
    assert mutant["covered_by"] == ["tests/test_commands.py::test_whisper_runs"]


@pytest.mark.slow
def test_a_test_reaching_code_in_process_and_in_its_subprocess_gets_the_mutant_in_both(
    spawner,
):
    _, mutants, _ = spawner
    mutant = mutants["spawner/echo.py::echo::extreme.body@1:4#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "swap")
    assert mutant["killed_by"] == [
        "tests/test_commands.py::test_echo_in_process_then_through_its_command"
    ]


@pytest.mark.slow
def test_code_a_subprocess_with_a_cleared_environment_runs_falls_back_to_a_copy(spawner):
    _, mutants, _ = spawner
    mutant = mutants["spawner/hidden.py::hide::extreme.body@1:4#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "copy")


@pytest.mark.slow
def test_a_script_run_by_its_path_gets_the_mutant_too(spawner):
    _, mutants, _ = spawner
    mutant = mutants["spawner/script.py::count::extreme.body@1:4#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "subprocess")
    assert mutant["killed_by"] == ["tests/test_commands.py::test_script_counts_words"]


@pytest.mark.slow
def test_a_file_the_subprocess_runs_without_importing_it_falls_back_to_a_copy(spawner):
    # runpy.run_path reads the file itself: there is no import for the hook to serve.
    _, mutants, _ = spawner
    mutant = mutants["spawner/loose.py::initials::extreme.body@1:4#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "copy")


@pytest.mark.slow
def test_the_summary_line_counts_the_mutants_run_on_a_project_copy(spawner):
    report, mutants, stdout = spawner
    on_copy = sum(m["path"] == "copy" for m in mutants.values())
    assert on_copy == report["mutation"]["paths"]["copy"] > 0
    assert f"{on_copy} on a project copy" in " ".join(stdout.split())


@pytest.mark.slow
def test_verdicts_on_code_run_in_subprocesses_agree_with_fresh_runs_of_the_suite(spawner):
    report, _, _ = spawner
    verification = report["mutation"]["verification"]
    assert (verification["checked"], verification["agreed"]) == (6, 6)


@pytest.mark.slow
def test_without_the_copy_path_a_survivor_the_hook_missed_says_so(project_copy, tmp_path):
    root = project_copy("spawner")
    report = audit_json(root, "tests", tmp_path / "r.json", "--no-copy-path")
    mutants = {m["id"]: m for m in report["mutation"]["mutants"]}
    missed = mutants["spawner/loose.py::initials::extreme.body@1:4#0"]
    assert (missed["status"], missed["path"]) == ("Survived", "subprocess")
    assert "never imported the mutated file" in missed["status_reason"]
    unmeasured = mutants["spawner/hidden.py::hide::extreme.body@1:4#0"]
    assert (unmeasured["status"], unmeasured["path"]) == ("NoCoverage", "none")
    assert report["mutation"]["paths"]["copy"] == 0


@pytest.mark.slow
def test_doctests_collected_by_the_project_config_kill_mutants(traps):
    mutant = traps["traps/core.py::halve::arithmetic.swap@6:11#0"]
    assert (mutant["status"], mutant["path"]) == ("Killed", "swap")
    assert mutant["killed_by"] == ["traps/core.py::traps.core.halve"]


@pytest.mark.slow
def test_identical_mutants_run_once(traps):
    duplicate = traps["traps/core.py::Greeter.greet::returns.value@1:15#0"]
    assert duplicate["status"] == "Ignored"
    assert duplicate["status_reason"].startswith("duplicate of ")


@pytest.mark.slow
def test_uncovered_code_is_no_coverage_and_not_run(traps):
    uncovered = [m for m in traps.values() if m["status"] == "NoCoverage"]
    assert uncovered
    assert all(m["path"] == "none" and m["covered_by"] == [] for m in uncovered)


def test_a_mutant_stopped_by_its_timeout_spent_its_wait_in_the_tests():
    ran = [
        JobResult(id="a", status="Killed", duration=0.02, tests_seconds=0.01),
        JobResult(id="b", status="Timeout", duration=2.0),
    ]
    # 2 workers x 1.02 s of stage, less 0.01 s + 2.0 s in tests, over 2 mutants.
    assert overheads(ran, duration=1.02, jobs=2)["overhead_ms"] == 15.0


@pytest.mark.slow
def test_overhead_beyond_the_tests_own_time_is_measured(fixture_runs):
    mutation = fixture_runs["shop", "tests_strong"][1]["mutation"]
    assert mutation["child_overhead_ms"] > 0
    assert mutation["overhead_ms"] > 0


@pytest.mark.slow
def test_the_physical_floor_is_below_the_stage_s_time(fixture_runs):
    mutation = fixture_runs["shop", "tests_strong"][1]["mutation"]
    assert 0 < mutation["floor_seconds"] < mutation["duration"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ledger", "shop", "textkit"])
def test_shallow_suite_scores_clearly_lower_than_strong(fixture_runs, name):
    shallow = fixture_runs[name, "tests_shallow"][1]["mutation"]["scores"]["score"]
    strong = fixture_runs[name, "tests_strong"][1]["mutation"]["scores"]["score"]
    assert strong - shallow >= 15, (shallow, strong)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ledger", "shop", "textkit"])
def test_assertion_free_tests_never_kill(fixture_runs, name):
    report = fixture_runs[name, "tests_shallow"][1]
    assertion_free = {
        f"{smell['file']}::{smell['test'].replace('.', '::')}"
        for smell in report["smells"]["findings"]
        if smell["code"] == "AT001"
    }
    states = {test["nodeid"]: test["state"] for test in report["mutation"]["tests"]}
    assert assertion_free
    for nodeid in assertion_free:
        assert states[nodeid] == "covering", nodeid


@pytest.mark.slow
def test_verify_sample_agrees_with_fresh_runs(project_copy, tmp_path):
    root = project_copy("ledger")
    report = audit_json(root, "tests_shallow", tmp_path / "r.json", "--verify-sample", "8")
    verification = report["mutation"]["verification"]
    assert verification["checked"] == 8
    assert verification["disagreements"] == []


@pytest.mark.slow
def test_rerun_with_nothing_changed_comes_from_the_cache(project_copy, tmp_path):
    root = project_copy("ledger")
    first = audit_json(root, "tests_strong", tmp_path / "a.json", *SOME_MUTATORS)
    second = audit_json(root, "tests_strong", tmp_path / "b.json", *SOME_MUTATORS)
    runnable = [m for m in second["mutation"]["mutants"] if m["path"] != "none"]
    assert second["mutation"]["cache_hits"] == len(runnable)
    assert report_differences(first, second) == []


STAMPED_CODE = """\
def double(x):
    return x * 2


def clamp(x):
    return max(x, 0)
"""

STAMPED_TESTS = """\
import time

import pytest

from calc import clamp, double


@pytest.mark.parametrize("stamp", [str(time.time_ns())])
def test_double(stamp):
    assert double(2) == 4
    assert clamp(5) == 5
"""


@pytest.mark.slow
def test_verdicts_whose_tests_are_named_at_collection_come_from_the_cache(tmp_path):
    """marshmallow parametrizes with the time: every rerun had new test ids, and every
    mutant its tests cover ran again. A cached kill names this session's case."""
    (tmp_path / "calc.py").write_text(STAMPED_CODE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(STAMPED_TESTS)
    first = audit_json(tmp_path, "tests", tmp_path / "a.json")
    second = audit_json(tmp_path, "tests", tmp_path / "b.json")
    before = {m["id"]: m for m in first["mutation"]["mutants"] if m["path"] != "none"}
    after = {m["id"]: m for m in second["mutation"]["mutants"] if m["path"] != "none"}
    assert {m["status"] for m in before.values()} == {"Killed", "Survived"}
    assert all(m["cached"] for m in after.values())
    assert {i: m["status"] for i, m in after.items()} == {i: m["status"] for i, m in before.items()}
    (stamped,) = [test["nodeid"] for test in second["baseline"]["tests"]]
    assert {m["killed_by"][0] for m in after.values() if m["killed_by"]} == {stamped}


@pytest.mark.slow
def test_a_corrupted_cache_is_rebuilt_not_trusted(project_copy, tmp_path):
    root = project_copy("ledger")
    first = audit_json(root, "tests_strong", tmp_path / "a.json", *SOME_MUTATORS)
    cache = root / ".audit" / "cache.sqlite"
    with sqlite3.connect(cache) as connection:
        for table in ("results", "earlier"):  # each verdict is kept under both keys
            connection.execute(f"update {table} set value = replace(value, 'Killed', 'Survived')")
    second = audit_json(root, "tests_strong", tmp_path / "b.json", *SOME_MUTATORS)
    untouched_rows = [
        m for m in first["mutation"]["mutants"] if m["path"] != "none" and m["status"] != "Killed"
    ]
    assert second["mutation"]["cache_hits"] == len(untouched_rows)
    assert report_differences(first, second) == []
    cache.write_bytes(b"this is not a database")
    third = audit_json(root, "tests_strong", tmp_path / "c.json", *SOME_MUTATORS)
    assert third["mutation"]["cache_hits"] == 0
    assert report_differences(first, third) == []


@pytest.mark.slow
def test_sigkill_during_mutation_leaves_the_tree_alone_and_the_rerun_resumes(
    project_copy, tmp_path, fault
):
    """Kill early (baseline or planning), in the middle of mutation, and at seeded random
    moments; after every kill the tree is unchanged, and the final rerun resumes and
    equals an uninterrupted run."""
    root = project_copy("shop")
    before = tree_digest(root)
    moments = [
        lambda started: time.monotonic() - started > 1.0,
        lambda started: cached_results(root) >= 30 or time.monotonic() - started > 60,
    ]
    for delay in random.Random(8).sample([x / 10 for x in range(3, 80)], 4):
        moments.append(lambda started, delay=delay: time.monotonic() - started > delay)
    for trial, moment_has_come in enumerate(moments):
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "auditor",
                "tests_strong",
                "-q",
                "--json",
                str(tmp_path / f"killed-{trial}.json"),
            ],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        started = time.monotonic()
        while not moment_has_come(started) and process.poll() is None:
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):  # a rerun may end before the moment
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert tree_digest(root) == before
    assert cached_results(root) >= 30
    resumed = audit_json(root, "tests_strong", tmp_path / "resumed.json")
    assert resumed["mutation"]["cache_hits"] >= 30
    uninterrupted = audit_json(
        project_copy("shop", "shop-uninterrupted"), "tests_strong", tmp_path / "fresh.json"
    )
    assert uninterrupted["mutation"]["cache_hits"] == 0
    assert report_differences(resumed, uninterrupted) == []
    assert tree_digest(root) == before
    fault(
        "processes",
        "SIGKILL of audit itself (its process group), at 6 moments from baseline to mutation",
        did="left the project untouched; the rerun took the finished verdicts from the cache",
        exit_code="killed, then 0",
        saw="(nothing: it was killed); the rerun's report equals an uninterrupted run's",
        lost="nothing finished; the rerun measures the verdicts in flight (time)",
    )


def _runners_started_by(pid: int) -> list[int]:
    """The mutation runners `pid` started."""
    return children_running(pid, "auditor.mutation.runner")


def _runners_at_smells(root: Path, edits: list[Callable[[], None]]) -> list[list[int]]:
    """Audit `root` in this process once, then again after each edit: the runners each
    audit had started when its smell check began."""
    from auditor.config import AuditConfig
    from auditor.pipeline import run_audit as audit_in_process
    from auditor.progress import SilentProgress

    runners_at_smells: list[list[int]] = []

    class WatchStages(SilentProgress):
        def start(self, stage: str, total: int | None = None) -> None:
            if stage == "smells":
                runners_at_smells.append(_runners_started_by(os.getpid()))

    config = AuditConfig(probes=False, jobs=2)
    for edit in [lambda: None, *edits]:
        edit()
        audit_in_process(["tests_strong"], config, root, WatchStages())
    return runners_at_smells


@pytest.mark.slow
def test_a_first_run_starts_its_runners_before_the_smell_check_and_a_rerun_none(
    project_copy,
):
    first, rerun = _runners_at_smells(project_copy("ledger"), [lambda: None])
    assert len(first) == 2
    assert rerun == []


@pytest.mark.slow
def test_a_run_after_a_change_starts_one_runner_before_the_smell_check(project_copy):
    # The changed function's mutants have no verdict yet: waiting for planning to find
    # that out put the runners' start (the suite collected) after it. One runner: a
    # change's mutants may be a handful, and the pool adds runners when the work calls
    # for them.
    root = project_copy("ledger")
    accounts = root / "ledger" / "accounts.py"
    edited = "return (debit - credit) if self.kind.debit_normal else (credit - debit)"

    def rewrite() -> None:
        text = accounts.read_text()
        old = "return debit - credit if self.kind.debit_normal else credit - debit"
        accounts.write_text(text.replace(old, edited))

    _, after_the_change = _runners_at_smells(root, [rewrite])
    assert edited in accounts.read_text()
    assert len(after_the_change) == 1


@pytest.mark.slow
def test_a_change_starts_its_runner_while_the_baseline_still_measures(tmp_path):
    """After a change, the flaky rerun (untraced) ends before the measured run; a runner
    starts on the core it leaves, and collects the tests while the baseline goes on."""
    from auditor.config import AuditConfig
    from auditor.pipeline import run_audit as audit_in_process
    from auditor.progress import SilentProgress

    slow_where_measured = (
        "import time\n\nimport coverage\n\nfrom pricing import total\n\n\n"
        "def test_total_adds_the_fee():\n"
        "    assert total(2, 3) == 7\n\n\n"
        "def test_total_of_nothing_is_the_fee():\n"
        "    if coverage.Coverage.current() is not None:\n"
        "        time.sleep(3)  # the measured run only: the rerun ends long before\n"
        "    assert total(0, 3) == 1\n"
    )
    root = one_module_project(
        tmp_path,
        "pricing",
        "def total(price, count):\n    return price * count + 1\n",
        {"test_pricing.py": slow_where_measured},
    )
    during_baseline: list[list[int]] = []

    class WatchTheBaseline(SilentProgress):
        stage = ""

        def start(self, stage: str, total: int | None = None) -> None:
            self.stage = stage

        def update(self, done: int, total: int | None = None, summary: str = "") -> None:
            if self.stage == "baseline":
                during_baseline.append(_runners_started_by(os.getpid()))

    config = AuditConfig(probes=False, jobs=2)
    audit_in_process(["tests"], config, root, SilentProgress())
    pricing = root / "pricing.py"
    pricing.write_text(pricing.read_text().replace("price * count + 1", "1 + price * count"))
    report = audit_in_process(["tests"], config, root, WatchTheBaseline())

    assert report.baseline.reuse.startswith("measured 2 of 2 tests")
    assert during_baseline
    assert len(during_baseline[-1]) == 1


@pytest.mark.slow
def test_a_runner_killed_between_two_jobs_costs_the_job_it_held_its_time_not_its_verdict(
    tmp_path, fault
):
    """The audit sends the next job after each answer; a runner dead by then (its whole
    process tree gone) cannot take it: the job it held and the one behind it go to the
    runner replacing it, and every verdict equals an undisturbed run's."""
    from auditor.config import AuditConfig
    from auditor.pipeline import run_audit as audit_in_process
    from auditor.progress import SilentProgress

    for root in (tmp_path / "killed", tmp_path / "undisturbed"):
        root.mkdir()
        (root / "pricing.py").write_text("def total(price, count):\n    return price * count + 1\n")
        (root / "test_pricing.py").write_text(
            "import time\n\nfrom pricing import total\n\n\n"
            "def test_total_adds_the_fee():\n"
            "    time.sleep(0.3)  # the runner is still on its next job when it is killed\n"
            "    assert total(2, 3) == 7\n"
        )
    killed: list[int] = []

    class KillTheRunnerOnce(SilentProgress):
        def update(self, done: int, total: int | None = None, summary: str = "") -> None:
            if done == 3 and not killed and (runners := _runners_started_by(os.getpid())):
                tree = _process_tree(runners[0])
                os.kill(runners[0], signal.SIGKILL)
                killed.append(runners[0])
                while not all(_finished(pid) for pid in tree):
                    time.sleep(0.01)

    config = AuditConfig(probes=False, jobs=1, src=["pricing.py"])
    run = ["test_pricing.py"]
    report = audit_in_process(run, config, tmp_path / "killed", KillTheRunnerOnce())
    undisturbed = audit_in_process(run, config, tmp_path / "undisturbed", SilentProgress())
    assert killed
    assert report.status == "complete"
    assert report.mutation.scores.counts.runtime_error == 0
    assert {m.id: m.status for m in report.mutation.mutants} == {
        m.id: m.status for m in undisturbed.mutation.mutants
    }
    fault(
        "processes",
        "SIGKILL of a mutation runner between two jobs",
        did="started another runner and gave it the job the dead one held",
        exit_code=0,
        saw="(the run's summary, as without the fault)",
        lost="nothing: every verdict equals an undisturbed run's",
    )


def _process_tree(pid: int) -> list[int]:
    from auditor.containment.isolation import _children_of

    return [pid, *(p for child in _children_of(pid) for p in _process_tree(child))]


def _finished(pid: int) -> bool:
    """Exited (a zombie holds no file descriptors) or reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.slow
def test_a_test_reading_stdin_in_a_mutants_child_reads_nothing(tmp_path):
    """The runner's stdin carries its next job, never the test's."""
    from auditor.config import AuditConfig
    from auditor.pipeline import run_audit as audit_in_process

    (tmp_path / "doubling.py").write_text("def double(x):\n    return x * 2\n")
    (tmp_path / "test_doubling.py").write_text(
        "import sys\n\nfrom doubling import double\n\n\n"
        "def test_double_reads_no_input():\n"
        "    try:\n"
        "        given = sys.stdin.read()\n"
        "    except OSError:  # pytest's capture, in the baseline\n"
        "        given = ''\n"
        "    assert given == ''\n"
        "    assert double(3) == 6\n"
    )
    config = AuditConfig(probes=False, jobs=1, src=["doubling.py"], mutant_timeout_constant=5.0)
    report = audit_in_process(["test_doubling.py"], config, tmp_path)
    statuses = {m.status for m in report.mutation.mutants if m.status != "Ignored"}
    assert len(report.mutation.mutants) >= 3
    assert statuses == {"Killed"}


@pytest.mark.slow
def test_verify_sample_rechecks_a_dropped_argument_that_takes_the_comma_before_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pick"\nversion = "1"\n')
    (tmp_path / "pick.py").write_text(
        "def larger(a, b):\n    return max(\n        a,\n        b)\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_pick.py").write_text(
        "from pick import larger\n\n\ndef test_larger():\n    assert larger(1, 2) == 2\n"
    )
    report = audit_json(tmp_path, "tests", tmp_path / "r.json", "--verify-sample", "100")
    dropped = [m for m in report["mutation"]["mutants"] if m["original"].startswith(",")]
    assert dropped, "the operators no longer drop a last argument with its comma"
    verification = report["mutation"]["verification"]
    assert verification["checked"] == verification["agreed"] > 0


@pytest.mark.slow
def test_import_time_values_are_checked_by_tests_that_never_run_their_file(tmp_path):
    # RATES is read through `prices`, so no test runs a line of rates.py once it is
    # imported: only the weak test of `describe` does.
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "1"\n')
    (tmp_path / "rates.py").write_text(
        "RATES = {'tea': 2}\n\n\ndef describe():\n    return f'{len(RATES)} rates'\n"
    )
    (tmp_path / "prices.py").write_text(
        "from rates import RATES\n\n\ndef price(item, count):\n    return RATES[item] * count\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shop.py").write_text(
        "from prices import price\nfrom rates import describe\n\n\n"
        "def test_describe_says_something():\n    assert describe()\n\n\n"
        "def test_three_teas_cost_six():\n    assert price('tea', 3) == 6\n"
    )
    report = audit_json(tmp_path, "tests", tmp_path / "r.json")
    mutant = next(
        m for m in report["mutation"]["mutants"] if m["file"] == "rates.py" and m["line"] == 1
        and m["replacement"] == "3"
    )  # fmt: skip
    assert (mutant["status"], mutant["path"]) == ("Killed", "module")
    assert mutant["killed_by"] == ["tests/test_shop.py::test_three_teas_cost_six"]


@pytest.mark.slow
def test_import_time_mutants_run_only_the_tests_that_can_read_what_they_bind(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "1"\n')
    (tmp_path / "rates.py").write_text("RATES = {'tea': 2}\nTAX = 3\n")
    (tmp_path / "prices.py").write_text(
        "from rates import RATES\n\n\ndef price(item, count):\n    return RATES[item] * count\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_prices.py").write_text(
        "from prices import price\n\n\ndef test_three_teas_cost_six():\n"
        "    assert price('tea', 3) == 6\n"
    )
    (tmp_path / "tests" / "test_tax.py").write_text(
        "from rates import TAX\n\n\ndef test_tax_is_three():\n    assert TAX == 3\n"
    )
    report = audit_json(tmp_path, "tests", tmp_path / "r.json")
    by_line = {
        m["line"]: m for m in mutants_of(report)
        if m["file"] == "rates.py" and m["status"] != "Ignored"
    }  # fmt: skip
    assert by_line[1]["covered_by"] == ["tests/test_prices.py::test_three_teas_cost_six"]
    assert by_line[2]["covered_by"] == ["tests/test_tax.py::test_tax_is_three"]
    assert {m["status"] for m in by_line.values()} == {"Killed"}


@pytest.mark.slow
def test_code_under_test_outside_the_test_folder_of_a_bare_project_is_mutated(tmp_path):
    # No pyproject.toml: the project root is the test folder, and --src names a file
    # beside it.
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    result = run_audit(
        "tests", "--src", "calc.py", "--no-probes", "-q", "--json", "r.json", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    statuses = {
        m["status"] for m in json.loads((tmp_path / "r.json").read_text())["mutation"]["mutants"]
    }
    assert "Killed" in statuses


@pytest.mark.slow
def test_a_doctest_whose_output_differs_kills_by_assertion(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "calc"\nversion = "1"\n\n'
        '[tool.pytest.ini_options]\naddopts = "--doctest-modules"\n'
    )
    (tmp_path / "calc.py").write_text(
        'def double(x):\n    """\n    >>> double(2)\n    4\n    """\n    return x * 2\n'
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import double\n\n\ndef test_double_runs():\n    double(1)\n"
    )
    report = audit_json(tmp_path, "tests", tmp_path / "r.json", "--src", "calc.py")
    doubled = next(m for m in report["mutation"]["mutants"] if m["replacement"] == "x / 2")
    assert doubled["killed_by"] == ["calc.py::calc.double"]
    assert doubled["kill_kind"] == "assertion"


@pytest.mark.slow
def test_a_mutant_that_lets_an_interrupt_escape_its_test_is_killed_by_that_test(tmp_path):
    (tmp_path / "cli.py").write_text(
        "def main(work):\n"
        "    try:\n"
        "        work()\n"
        "    except KeyboardInterrupt:\n"
        "        return 130\n"
        "    return 0\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_cli.py").write_text(
        "from cli import main\n\n\n"
        "def interrupted():\n"
        "    raise KeyboardInterrupt\n\n\n"
        "def test_an_interrupt_exits_with_130():\n"
        "    assert main(interrupted) == 130\n"
    )
    report = audit_json(tmp_path, "tests", tmp_path / "r.json", "--mutators", "exceptions")
    (handler,) = [m for m in report["mutation"]["mutants"] if m["operator"] == "exceptions.handler"]
    assert (handler["status"], handler["killed_by"]) == (
        "Killed",
        ["tests/test_cli.py::test_an_interrupt_exits_with_130"],
    )
