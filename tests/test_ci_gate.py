"""The CI side, end to end: PR-sized runs (--diff), the ratchet (--baseline), shards and
`audit merge`, sampling with an interval, and the time budget."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_audit


def audit(root: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = root.parent / f"report-{abs(hash(args))}.json"
    result = run_audit(*args, "-q", "--no-probes", "--json", str(out), cwd=root)
    report = json.loads(out.read_text()) if out.exists() else {}
    return result, report


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def shop_repo(project_copy):
    root = project_copy("shop")
    git(root, "init", "-q")
    git(root, "config", "user.email", "ci@example.com")
    git(root, "config", "user.name", "ci")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "shop")
    return root


@pytest.fixture
def shallow_with_cache(fixture_runs, tmp_path):
    """A copy of the shop project whose cache already holds every shallow verdict."""
    _, report, root, _ = fixture_runs["shop", "tests_shallow"]
    copy = tmp_path / "shop"
    shutil.copytree(root, copy)
    return copy, report


@pytest.mark.slow
def test_audits_own_folder_stays_out_of_git_status(shop_repo):
    result, _ = audit(shop_repo, "tests_shallow", "--diff", "HEAD")
    assert result.returncode == 0, result.stderr
    assert (shop_repo / ".audit" / "cache.sqlite").exists()
    status = subprocess.run(
        ["git", "-C", str(shop_repo), "status", "--porcelain", "--untracked-files=all"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert status.stdout == ""


@pytest.mark.slow
def test_diff_runs_only_the_mutants_of_the_changed_lines(shop_repo):
    pricing = shop_repo / "shop" / "pricing.py"
    text = pricing.read_text()
    assert text.count('    return Decimal("0")\n') == 1
    pricing.write_text(text.replace('    return Decimal("0")\n', '    return Decimal("0.00")\n'))
    changed_line = pricing.read_text().splitlines().index('    return Decimal("0.00")') + 1
    result, report = audit(shop_repo, "tests_shallow", "--diff", "HEAD")
    assert result.returncode == 0, result.stderr
    mutation = report["mutation"]
    assert mutation["scope"]["kind"] == "diff"
    assert mutation["scope"]["changed_files"] == ["shop/pricing.py"]
    assert mutation["mutants"]
    assert {(m["file"], m["function"]) for m in mutation["mutants"]} == {
        ("shop/pricing.py", "bulk_discount")
    }
    assert all(m["line"] <= changed_line <= m["end_line"] for m in mutation["mutants"])
    assert mutation["project_known"]["counts"]["killed"] >= mutation["scores"]["counts"]["killed"]


def _committed(root: Path) -> Path:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-qm", "shop")
    return root


def _audit_a_comment_in_bulk_discount(root: Path) -> dict:
    """Commit the project, add a comment to a line of `bulk_discount` (same behaviour),
    and audit the change."""
    pricing = _committed(root) / "shop" / "pricing.py"
    text = pricing.read_text()
    pricing.write_text(text.replace('return Decimal("0")\n', 'return Decimal("0")  # none\n'))
    result, report = audit(root, "tests_shallow", "--diff", "HEAD")
    assert result.returncode == 0, result.stderr
    return report


@pytest.mark.slow
def test_a_diff_run_plans_only_the_functions_its_change_reaches(shallow_with_cache):
    """The changed line is in `bulk_discount`: its mutants are planned, and no other
    function's, nor any other file's."""
    root, whole = shallow_with_cache
    report = _audit_a_comment_in_bulk_discount(root)
    of_function = [
        m
        for m in whole["mutation"]["mutants"]
        if (m["file"], m["function"]) == ("shop/pricing.py", "bulk_discount")
    ]
    assert of_function
    assert report["mutation"]["scope"]["planned"] == len(of_function)


@pytest.mark.slow
def test_a_diff_run_of_one_function_keeps_the_last_known_verdicts_of_the_others(
    shallow_with_cache,
):
    """Its file's other functions were not planned: their verdicts from the full run
    still count in the project's scores (the change keeps behaviour: all the same)."""
    root, whole = shallow_with_cache
    report = _audit_a_comment_in_bulk_discount(root)
    assert report["mutation"]["project_known"] == whole["mutation"]["scores"]


@pytest.mark.slow
def test_a_diff_run_scores_the_whole_project_over_its_last_known_verdicts(shallow_with_cache):
    """Nothing changed since the full run: no mutant is in scope, and the project's
    scores are the full run's."""
    root, whole = shallow_with_cache
    result, report = audit(_committed(root), "tests_shallow", "--diff", "HEAD")
    assert result.returncode == 0, result.stderr
    mutation = report["mutation"]
    assert (mutation["scope"]["planned"], mutation["scope"]["selected"]) == (0, 0)
    assert mutation["project_known"] == whole["mutation"]["scores"]


def _add_a_rounding_test(root: Path) -> None:
    (root / "tests_shallow" / "test_rounding.py").write_text(
        "from decimal import Decimal\n\nfrom shop.pricing import round_money\n\n\n"
        "def test_round_money_rounds_half_up():\n"
        '    assert round_money(Decimal("1.005")) == Decimal("1.01")\n'
    )


@pytest.mark.slow
def test_a_new_test_brings_in_the_functions_it_calls_not_what_its_imports_ran(shop_repo):
    _add_a_rounding_test(shop_repo)
    result, report = audit(shop_repo, "tests_shallow", "--diff", "HEAD")
    assert result.returncode == 0, result.stderr
    scope = report["mutation"]["scope"]
    mutants = report["mutation"]["mutants"]
    assert {(m["file"], m["function"]) for m in mutants} == {("shop/pricing.py", "round_money")}
    assert scope["changed_tests"] == ["tests_shallow/test_rounding.py"]
    assert (scope["on_changed_lines"], scope["called_by_changed_tests"]) == (0, len(mutants))


@pytest.mark.slow
def test_a_diff_run_probes_only_the_functions_of_its_mutants(shop_repo):
    _add_a_rounding_test(shop_repo)
    out = shop_repo.parent / "probed.json"
    result = run_audit("tests_shallow", "--diff", "HEAD", "-q", "--json", str(out), cwd=shop_repo)
    assert result.returncode == 0, result.stderr
    probes = json.loads(out.read_text())["probes"]
    assert [(f["file"], f["function"]) for f in probes["functions"]] == [
        ("shop/pricing.py", "round_money")
    ]
    assert all(finding["function"] == "round_money" for finding in probes["findings"])


def test_a_bad_diff_ref_is_a_one_line_error(shop_repo):
    result, _ = audit(shop_repo, "tests_shallow", "--diff", "no-such-branch")
    assert result.returncode == 2
    assert result.stderr.startswith("audit: diff: ")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_ratchet_fails_when_a_killed_mutant_now_survives(project_copy, tmp_path):
    root = project_copy("shop")
    first, before = audit(root, "tests_strong")
    assert first.returncode == 0, first.stderr
    saved = tmp_path / "before.json"
    saved.write_text(json.dumps(before))

    unchanged, _ = audit(root, "tests_strong", "--baseline", str(saved))
    assert unchanged.returncode == 0, unchanged.stdout

    tests = root / "tests_strong" / "test_pricing.py"
    tests.write_text(
        tests.read_text().replace(
            "    assert bulk_discount(quantity) == Decimal(rate)", "    bulk_discount(quantity)"
        )
    )
    weakened, after = audit(root, "tests_strong", "--baseline", str(saved))
    assert weakened.returncode == 1
    failed = {c["name"]: c for c in after["gate"]["conditions"] if not c["passed"]}
    assert failed["ratchet.killed_now_survive"]["actual"] > 0
    assert "shop/pricing.py::bulk_discount" in failed["ratchet.killed_now_survive"]["message"]
    assert "ratchet.killed_now_survive" in weakened.stdout


@pytest.mark.slow
def test_merging_four_shards_equals_the_unsharded_run(shallow_with_cache, tmp_path):
    root, whole = shallow_with_cache
    shards = []
    for index in range(1, 5):
        result, report = audit(root, "tests_shallow", "--shard", f"{index}/4")
        assert result.returncode == 0, result.stderr
        assert report["mutation"]["scope"]["shard"] == f"{index}/4"
        path = tmp_path / f"shard-{index}.json"
        path.write_text(json.dumps(report))
        shards.append(str(path))
    merged_path = tmp_path / "merged.json"
    merged = run_audit("merge", *shards, "-o", str(merged_path), cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    merged_report = json.loads(merged_path.read_text())["mutation"]
    statuses = {m["id"]: m["status"] for m in merged_report["mutants"]}
    assert statuses == {m["id"]: m["status"] for m in whole["mutation"]["mutants"]}
    for key in ("scores", "files", "functions", "tests", "pseudo_tested", "oracle_gap"):
        assert merged_report[key] == whole["mutation"][key], key


GATES_THAT_READ_MORE_THAN_MUTANTS = """
[tool.audit.generators]
fast = ["tests_shallow/test_cart.py"]

[tool.audit.gate]
max_unhandled_crashes = 0
ratchet_smells = ["high", "medium"]

[tool.audit.gate.generators.fast]
min_assertion_kill_share = 50
max_smells_per_test = 0.1
"""


@pytest.mark.slow
def test_merged_shards_gate_like_the_unsharded_run(shallow_with_cache, tmp_path):
    """The ratchet, the per-generator thresholds and the probes' condition are judged on
    the merged report exactly as on one run of the whole project."""
    root, _ = shallow_with_cache
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + GATES_THAT_READ_MORE_THAN_MUTANTS)
    previous = tmp_path / "previous.json"
    first = run_audit("tests_shallow", "-q", "--json", str(previous), cwd=root)
    assert first.returncode == 1, first.stderr  # shallow tests fail these gates
    tests = root / "tests_shallow" / "test_cart.py"
    tests.write_text(tests.read_text() + "\n\ndef test_new_and_empty():\n    pass\n")

    whole_path = tmp_path / "whole.json"
    ratchet = ("-q", "--baseline", str(previous))
    run_audit("tests_shallow", *ratchet, "--json", str(whole_path), cwd=root)
    shards = []
    for index in (1, 2):
        path = tmp_path / f"shard-{index}.json"
        run_audit("tests_shallow", *ratchet, "--shard", f"{index}/2", "--json", str(path), cwd=root)
        shards.append(str(path))
    merged_path = tmp_path / "merged.json"
    merged = run_audit("merge", *shards, "-o", str(merged_path), cwd=root)

    whole = json.loads(whole_path.read_text())["gate"]
    judged = json.loads(merged_path.read_text())["gate"]
    names = {condition["name"] for condition in whole["conditions"]}
    assert {
        "max_unhandled_crashes",
        "ratchet.killed_now_survive",
        "ratchet.new_smells.high",
        "generators.fast.min_assertion_kill_share",
        "generators.fast.max_smells_per_test",
    } <= names
    assert judged == whole
    assert merged.returncode == 1


@pytest.mark.slow
def test_merge_names_a_missing_shard(shallow_with_cache, tmp_path):
    root, _ = shallow_with_cache
    _, report = audit(root, "tests_shallow", "--shard", "1/2")
    path = tmp_path / "one.json"
    path.write_text(json.dumps(report))
    result = run_audit("merge", str(path), "-o", str(tmp_path / "m.json"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "audit: merge: missing shard(s) 2/2"


@pytest.mark.slow
def test_the_full_score_lies_in_the_sampled_interval_for_most_seeds(shallow_with_cache):
    root, whole = shallow_with_cache
    full = whole["mutation"]["scores"]["score"]
    inside = 0
    for seed in range(6):
        result, report = audit(root, "tests_shallow", "--sample", "60", "--sample-seed", str(seed))
        assert result.returncode == 0, result.stderr
        estimate = report["mutation"]["estimate"]
        assert estimate["sampled"] == 60
        inside += estimate["score_low"] <= full <= estimate["score_high"]
    assert inside >= 5


@pytest.mark.slow
def test_the_gate_of_a_sample_uses_the_lower_bound(shallow_with_cache):
    root, _ = shallow_with_cache
    result, report = audit(root, "tests_shallow", "--sample", "40", "--min-mutation-score", "1")
    assert result.returncode == 0, result.stdout
    estimate = report["mutation"]["estimate"]
    condition = report["gate"]["conditions"][0]
    assert condition["actual"] == estimate["score_low"]
    assert "95% bound of a sampled estimate" in condition["message"]


@pytest.mark.slow
def test_a_run_stopped_by_its_time_budget_is_incomplete(project_copy):
    root = project_copy("shop")
    result, report = audit(root, "tests_shallow", "--time-budget", "0.3s")
    assert result.returncode == 4
    assert report["status"] == "incomplete"
    assert report["mutation"]["stopped_by_budget"]
    assert 0 < len(report["mutation"]["mutants"]) < report["mutation"]["scope"]["selected"]


@pytest.mark.slow
def test_a_time_budget_with_sampling_is_an_estimate_not_a_failure(project_copy):
    # A budget planning alone uses up: each worker still gets its one mutant.
    root = project_copy("shop")
    result, report = audit(
        root, "tests_shallow", "--time-budget", "0.001s", "--sample", "1000", "--jobs", "2"
    )
    assert result.returncode == 0, result.stderr
    assert report["status"] == "complete"
    assert report["mutation"]["stopped_by_budget"]
    assert report["mutation"]["estimate"]["sampled"] == 2


@pytest.mark.slow
def test_the_time_budget_covers_the_probes_and_the_report_says_which_stages_it_cut(
    project_copy,
):
    # The baseline alone uses up a one-second budget: each worker still gets one
    # mutant, and the probes are not started at all.
    root = project_copy("shop")
    out = root.parent / "budget.json"
    result = run_audit("tests_shallow", "--time-budget", "1s", "--json", str(out), cwd=root)
    assert result.returncode == 4, result.stderr
    report = json.loads(out.read_text())
    assert report["status"] == "incomplete"
    assert report["cut_by_budget"] == ["mutate", "probe"]
    assert report["probes"]["stopped_by_budget"]
    assert report["probes"]["functions"] == []
    assert "gate: FAIL" in result.stdout
    assert "the time budget stopped: mutate, probe" in " ".join(result.stdout.split())


@pytest.mark.slow
def test_a_ci_log_gets_a_plain_line_per_stage(project_copy):
    # stderr is a pipe here, as in CI: no progress bars, no control characters.
    root = project_copy("shop")
    result = run_audit("tests_shallow", "--no-probes", "--json", str(root / "r.json"), cwd=root)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert all(line.startswith("audit: ") and line.isprintable() for line in lines)
    for stage in ("discover", "baseline", "smells", "mutate", "gate"):
        assert f"audit: {stage} started" in lines
        assert any(line.startswith(f"audit: {stage} finished in ") for line in lines)


@pytest.fixture
def one_file_broken(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "1"\n')
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_bad.py").write_text("from calc import add\n\n\ndef test_bad(:\n")
    (tmp_path / "tests" / "test_add.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    )
    return tmp_path


@pytest.mark.slow
def test_a_test_file_that_cannot_be_collected_fails_the_gate_by_default(one_file_broken):
    result = run_audit("tests", "--no-mutation", "--no-probes", cwd=one_file_broken)
    assert result.returncode == 1, result.stderr
    assert "tests/test_bad.py:4" in result.stdout
    assert "max_collection_errors: 1 > 0" in result.stdout


@pytest.mark.slow
def test_max_collection_errors_lets_a_known_broken_file_pass(one_file_broken):
    config = one_file_broken / "pyproject.toml"
    config.write_text(config.read_text() + "\n[tool.audit.gate]\nmax_collection_errors = 1\n")
    result = run_audit("tests", "--no-mutation", "--no-probes", cwd=one_file_broken)
    assert result.returncode == 0, result.stdout
