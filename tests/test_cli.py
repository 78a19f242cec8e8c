"""The `audit` command end to end, as a user runs it."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import (
    burns_under_coverage,
    cached_results,
    copy_fixture,
    one_module_project,
    report_differences,
    run_audit,
    tree_digest,
)

FIXTURES_WITH_TWO_SUITES = ["ledger", "shop", "textkit"]


def test_help_works_outside_any_project():
    result = run_audit("--help", cwd=Path("/"))
    assert result.returncode == 0
    assert "run" in result.stdout and "schema" in result.stdout


def test_run_help_lists_the_options_outside_any_project():
    result = run_audit("run", "--help", cwd=Path("/"))
    assert result.returncode == 0
    assert "--min-line-coverage" in result.stdout


def test_schema_is_a_valid_json_schema():
    result = run_audit("schema", cwd=Path("/"))
    jsonschema.Draft202012Validator.check_schema(json.loads(result.stdout))


def test_the_schema_describes_each_field_by_its_docstring():
    schema = json.loads(run_audit("schema", cwd=Path("/")).stdout)
    witness = schema["$defs"]["Witness"]["properties"]
    called = "The function called (the mutated one, or a public one that reaches it)."
    assert witness["function"]["description"] == called
    assert "description" not in witness["input"]  # declared without a docstring
    baseline = "The suite on the original code, with per-test coverage."
    assert schema["properties"]["baseline"]["description"] == baseline


@pytest.mark.slow
@pytest.mark.parametrize("name", FIXTURES_WITH_TWO_SUITES)
def test_shallow_suite_has_high_coverage_yet_is_flagged(fixture_runs, name):
    result, report, _, _ = fixture_runs[name, "tests_shallow"]
    assert result.returncode == 0, result.stderr
    assert report["coverage"]["totals"]["line_percent"] >= 80
    codes = {smell["code"] for smell in report["smells"]["findings"]}
    assert {"AT001", "AT005", "AT009"} <= codes


@pytest.mark.slow
@pytest.mark.parametrize("name", FIXTURES_WITH_TWO_SUITES)
def test_strong_suite_has_no_smells(fixture_runs, name):
    result, report, _, _ = fixture_runs[name, "tests_strong"]
    assert result.returncode == 0, result.stderr
    assert report["smells"]["findings"] == []
    assert report["coverage"]["totals"]["branch_percent"] == 100.0


@pytest.mark.slow
@pytest.mark.parametrize("name", FIXTURES_WITH_TWO_SUITES)
def test_audit_leaves_the_project_byte_identical(fixture_runs, name):
    _, _, root, before = fixture_runs[name, "tests_strong"]
    assert tree_digest(root) == before


@pytest.mark.slow
def test_report_validates_against_the_printed_schema(fixture_runs):
    _, report, _, _ = fixture_runs["shop", "tests_shallow"]
    schema = json.loads(run_audit("schema", cwd=Path("/")).stdout)
    jsonschema.validate(report, schema)
    assert report["schema_version"] == 17
    assert report["probes"]["functions"]
    assert report["escalation"] is None


@pytest.mark.slow
def test_terminal_summary_shows_coverage_and_top_findings(fixture_runs):
    result, _, _, _ = fixture_runs["shop", "tests_shallow"]
    assert "line coverage" in result.stdout
    assert "AT001 assertion-free" in result.stdout
    assert "rating: SHALLOW" in result.stdout  # no thresholds: never a PASS


@pytest.mark.slow
def test_same_input_gives_the_same_report(project_copy, tmp_path):
    root = project_copy("ledger")
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    run_audit("tests_shallow", "-q", "--no-probes", "--json", str(first), cwd=root)
    run_audit("tests_shallow", "-q", "--no-probes", "--json", str(second), cwd=root)

    assert report_differences(json.loads(first.read_text()), json.loads(second.read_text())) == []


@pytest.mark.slow
def test_a_suite_that_iterates_a_set_of_strings_gets_the_same_report_twice(tmp_path):
    # The order of a set of strings follows the hash seed: each run's processes must use
    # the same one, or the calls observed and the arcs run change from run to run.
    reports = []
    for run in ("first", "second"):
        root = copy_fixture("wordsets", tmp_path / run / "wordsets")
        out = tmp_path / f"{run}.json"
        done = run_audit("tests", "-q", "--no-probes", "--json", str(out), cwd=root)
        assert done.returncode == 0, done.stderr
        reports.append(json.loads(out.read_text()))
    assert reports[0]["baseline"]["observed"]
    assert report_differences(*reports) == []


@pytest.mark.slow
def test_default_report_goes_to_dot_audit(project_copy):
    root = project_copy("textkit")
    result = run_audit("tests_strong", "-q", "--no-mutation", "--no-probes", cwd=root)
    assert result.returncode == 0, result.stderr
    assert (root / ".audit" / "report.json").is_file()


@pytest.mark.slow
def test_gate_failure_exits_1_and_names_the_condition(project_copy, tmp_path):
    root = project_copy("shop")
    result = run_audit(
        "tests_shallow",
        "-q",
        "--no-mutation",
        "--no-probes",
        "--max-smells",
        "high=0",
        "--json",
        str(tmp_path / "r.json"),
        cwd=root,
    )
    assert result.returncode == 1
    assert "gate: FAIL" in result.stdout
    assert "max_smells.high: 11 > 0" in result.stdout
    gate = json.loads((tmp_path / "r.json").read_text())["gate"]
    assert gate["verdict"] == "fail"


@pytest.mark.slow
def test_gate_from_pyproject_passes_on_the_strong_suite(project_copy, tmp_path):
    root = project_copy("shop")
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text()
        + "\n[tool.audit.gate]\nmin_line_coverage = 95\nmax_smells = { high = 0 }\n"
    )
    result = run_audit(
        "tests_strong",
        "-q",
        "--no-mutation",
        "--no-probes",
        "--json",
        str(tmp_path / "r.json"),
        cwd=root,
    )
    assert result.returncode == 0, result.stdout
    assert "gate: PASS (2 conditions)" in result.stdout


@pytest.mark.slow
def test_outputs_from_pyproject_are_written_relative_to_the_project(project_copy, tmp_path):
    root = project_copy("shop")
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.audit.outputs]\njunit = "out/gate.xml"\n')
    work = tmp_path / "elsewhere"
    work.mkdir()
    result = run_audit(
        str(root / "tests_strong"),
        "-q",
        "--no-mutation",
        "--no-probes",
        "--markdown",
        "s.md",
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    assert (root / "out" / "gate.xml").read_text().startswith("<?xml")
    assert (work / "s.md").read_text().startswith("## audit: UNRATED")  # no threshold, no mutants


def test_unknown_config_key_exits_2_naming_it(project_copy):
    root = project_copy("shop")
    (root / "pyproject.toml").write_text("[tool.audit]\nmin_coverage = 3\n")
    result = run_audit("tests_strong", cwd=root)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("unknown key 'min_coverage'")
    assert "Traceback" not in result.stderr


def test_bad_flag_exits_2_naming_the_flag(tmp_path):
    (tmp_path / "tests").mkdir()
    result = run_audit("tests", "--max-smells", "huge=1", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        "audit: config: command line: bad value for --max-smells: expects SEVERITY=N with "
        "high, medium or low; got 'huge=1'\n"
    )


def test_missing_test_folder_exits_2(tmp_path):
    result = run_audit("nothere", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "audit: discover: test path 'nothere' does not exist"


@pytest.mark.slow
def test_unwritable_report_path_is_a_clear_error(project_copy):
    root = project_copy("textkit")
    result = run_audit(
        "tests_strong",
        "-q",
        "--no-mutation",
        "--no-probes",
        "--json",
        "/proc/nope/report.json",
        cwd=root,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("audit: report: cannot write /proc/nope/report.json")


@pytest.mark.slow
def test_ctrl_c_stops_with_exit_4_and_leaves_the_tree_alone(project_copy):
    root = project_copy("hostile")
    before = tree_digest(root)
    process = subprocess.Popen(
        [sys.executable, "-m", "auditor", "hang", "-q", "--timeout", "30"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 4
    assert "interrupted" in stderr
    assert "Traceback" not in stderr
    assert tree_digest(root) == before


def _measuring_again(scratch: Path) -> bool:
    try:
        return any(scratch.glob("audit-run-*/audit-baseline-*/measured-again"))
    except OSError:  # a folder of the run went away while it was listed
        return False


@pytest.mark.slow
def test_ctrl_c_while_the_baseline_measures_a_test_again_stops_at_once(tmp_path):
    root = tmp_path / "calc"
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.audit]\nsrc = ["calc.py"]\n')
    (root / "calc.py").write_text("def double(x):\n    return x * 2\n")
    (root / "tests" / "test_calc.py").write_text(
        burns_under_coverage("double", "double(2) == 4", 60, 0.4)
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "auditor", "tests", "-q", "--timeout", "2", "--no-mutation"],
        cwd=root,
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not _measuring_again(scratch) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _measuring_again(scratch), "the slowed test was never measured again"
    # Timed out at 2 s under coverage, 0.4 s untraced: measured again with a limit of
    # 10 s or more, which the interrupt must not wait for.
    process.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 4, stderr
    assert time.monotonic() - interrupted < 4


def test_ctrl_c_while_the_command_loads_stops_with_exit_4_and_one_line(project_copy):
    root = project_copy("hostile")
    # `-X importtime` writes a line as each module is loaded: once click's is read, the
    # command's own modules are loading.
    process = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "auditor", "hang", "-q"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    loaded = _lines_up_to(process.stderr, " click.core")
    process.send_signal(signal.SIGINT)
    stderr = process.stderr.read()
    process.wait(timeout=30)
    assert loaded[-1].endswith("click.core")
    assert process.returncode == 4
    assert stderr.splitlines()[-1] == "audit: interrupted; no report written"
    assert "Traceback" not in stderr


def test_an_interrupt_handled_after_it_left_an_exec_still_exits_4_under_python_m(tmp_path):
    # A Ctrl-C that lands while `dataclasses` builds a method leaves an `exec` of a
    # string; CPython then marks the process to end by SIGINT under `python -m`.
    (tmp_path / "interrupted_in_exec.py").write_text(
        "import auditor.__main__, auditor.cli\n"
        "def run_command(args=None):\n"
        "    try:\n"
        "        exec('raise KeyboardInterrupt')\n"
        "    except KeyboardInterrupt:\n"
        "        return 4\n"
        "auditor.cli.run_command = run_command\n"
        "auditor.__main__.main()\n"
    )
    finished = subprocess.run(
        [sys.executable, "-m", "interrupted_in_exec"], cwd=tmp_path, timeout=60
    )
    assert finished.returncode == 4


def test_a_broken_pipe_inside_the_run_is_an_internal_error_not_a_silent_exit_1(tmp_path):
    # Click takes any broken pipe for the reader of audit's output gone: exit 1, nothing
    # said, no report; one to a probe process that died ended runs so.
    one_module_project(tmp_path / "calc", "calc", "def one():\n    return 1\n", {})
    (tmp_path / "broken_pipe.py").write_text(
        "import auditor.__main__, auditor.pipeline\n"
        "def run_audit(*args, **kwargs):\n"
        "    raise BrokenPipeError(32, 'Broken pipe')\n"
        "auditor.pipeline.run_audit = run_audit\n"
        "auditor.__main__.main()\n"
    )
    finished = subprocess.run(
        [sys.executable, str(tmp_path / "broken_pipe.py"), "tests", "-q"],
        cwd=tmp_path / "calc",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 4
    assert finished.stderr.startswith("audit: internal error: RuntimeError: a pipe to one of")


def _lines_up_to(stream, ending: str) -> list[str]:
    """The lines of `stream` up to the first that ends with `ending`."""
    lines = []
    for line in stream:
        lines.append(line.rstrip())
        if lines[-1].endswith(ending):
            break
    return lines


def _stopped_during_mutation(root: Path, report: Path, stop: signal.Signals) -> dict:
    """The shop's shallow suite audited (no probes) and sent `stop` once 20 mutants have
    a verdict: the partial report, after checking that the run said it wrote one."""
    command = [sys.executable, "-m", "auditor", "tests_shallow", "-q", "--no-probes"]
    process = subprocess.Popen(
        [*command, "--json", str(report)], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 90
    while cached_results(root) < 20 and time.monotonic() < deadline:
        time.sleep(0.05)  # until some mutants have a verdict
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 4, stderr.decode()
    assert b"partial report written" in stderr
    partial = json.loads(report.read_text())
    assert partial["status"] == "incomplete"
    assert partial["mutation"]["interrupted"]
    return partial


@pytest.mark.slow
def test_ctrl_c_during_mutation_writes_a_partial_report_and_the_rerun_resumes(project_copy):
    root = project_copy("shop")
    before = tree_digest(root)
    report = root.parent / "partial.json"
    partial = _stopped_during_mutation(root, report, signal.SIGINT)
    done = len(partial["mutation"]["mutants"])
    full = partial["mutation"]["scope"]["selected"]
    assert 20 <= done < full
    rerun = run_audit("tests_shallow", "-q", "--no-probes", "--json", str(report), cwd=root)
    assert rerun.returncode == 0, rerun.stderr
    resumed = json.loads(report.read_text())["mutation"]
    assert resumed["cache_hits"] > 0
    assert len(resumed["mutants"]) == full
    assert tree_digest(root) == before


@pytest.mark.slow
def test_sigterm_during_mutation_writes_a_partial_report_as_ctrl_c_does(project_copy):
    # What a CI job's timeout sends: it ended audit at once, the run's findings lost.
    root = project_copy("shop")
    partial = _stopped_during_mutation(root, root.parent / "partial.json", signal.SIGTERM)
    assert 20 <= len(partial["mutation"]["mutants"]) < partial["mutation"]["scope"]["selected"]


def test_smells_command_fails_on_high_severity_smells_without_running_tests(tmp_path):
    from tests.conftest import FIXTURES

    shallow = FIXTURES / "shop" / "tests_shallow" / "test_cart.py"
    result = run_audit("smells", str(shallow), cwd=tmp_path)
    assert result.returncode == 1
    assert "tests_shallow/test_cart.py:16: AT001 high" in result.stdout


def test_smells_command_names_a_file_it_cannot_read_and_fails(tmp_path):
    (tmp_path / "test_latin.py").write_bytes(b"# caf\xe9\ndef test_a():\n    assert 1\n")
    result = run_audit("smells", "test_latin.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "test_latin.py:1: cannot parse: invalid or missing encoding declaration" in (
        result.stdout
    )
    assert "internal error" not in result.stderr


def test_smells_command_reads_the_files_pytest_would_collect(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\npython_files = check_*.py\n")
    (tmp_path / "checks").mkdir()
    for name in ("check_rates.py", "test_helpers.py"):
        (tmp_path / "checks" / name).write_text("def test_rate():\n    rate(2)\n")
    result = run_audit("smells", "checks", cwd=tmp_path)
    assert result.returncode == 1
    assert "checks/check_rates.py:1: AT001 high" in result.stdout
    assert "test_helpers.py" not in result.stdout


def test_smells_command_passes_a_strong_suite(tmp_path):
    from tests.conftest import FIXTURES

    result = run_audit("smells", str(FIXTURES / "shop" / "tests_strong"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""


def test_pre_commit_hook_runs_the_smells_command():
    import yaml

    hooks = yaml.safe_load((Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text())
    assert [hook["entry"] for hook in hooks] == ["audit smells"]


@pytest.fixture
def slow_suite(tmp_path):
    """A project whose one test takes a minute: a command that fails before any test
    runs returns long before that."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "slow"\nversion = "1"\n')
    (tmp_path / "slow.py").write_text("def one():\n    return 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_slow.py").write_text(
        "import time\n\nfrom slow import one\n\n\ndef test_one():\n"
        "    time.sleep(60)\n    assert one() == 1\n"
    )
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--json", "pyproject.toml/r.json"],
            "audit: report: cannot write {root}/pyproject.toml/r.json: "
            "{root}/pyproject.toml is a file, not a folder",
        ),
        (["--html", "tests"], "audit: report: cannot write {root}/tests: it is a folder"),
        (["--mutators", "nope"], "audit: config: unknown mutator family: nope"),
        (["--diff", "nope"], "audit: diff: unknown git ref 'nope'"),
        (
            ["--compare", "missing.json"],
            "audit: report: cannot read previous report {root}/missing.json: No such file",
        ),
    ],
)
def test_a_bad_argument_fails_before_any_test_runs(slow_suite, flags, message):
    import subprocess

    subprocess.run(["git", "init", "-q", str(slow_suite)], check=True)
    result = run_audit("tests", "-q", *flags, cwd=slow_suite, timeout=30)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(message.format(root=slow_suite.resolve()))
    assert len(result.stderr.strip().splitlines()) == 1
