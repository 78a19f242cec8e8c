"""What a pull request gets from a real `--diff` run in a git repository: annotations on
the changed lines, a sticky comment body, a badge, SonarQube issues; and the trend."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from auditor.report import Report
from reports.pr_comment import MARKER
from tests.conftest import FIXTURES, copy_fixture, run_audit

SMALL_ORDERS = """from shop.pricing import bulk_discount


def test_small_order_discount():
    assert bulk_discount(6) is not None
"""
_ANNOTATION = re.compile(r"^::(warning|error|notice) file=([^,]+),line=(\d+)[^:]*::(.+)$")


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=ci@example.com", "-c", "user.name=ci", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def pull_request(tmp_path_factory) -> dict:
    """The shop fixture committed, then a pull request's change: a new discount tier in
    shop/pricing.py and a new test that checks it weakly; audited with --diff HEAD."""
    root = tmp_path_factory.mktemp("pr") / "shop"
    copy_fixture("shop", root)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    pricing = root / "shop" / "pricing.py"
    pricing.write_text(
        pricing.read_text().replace(
            '    if quantity >= 10:\n        return Decimal("0.05")',
            '    if quantity >= 5:\n        return Decimal("0.02")\n'
            '    if quantity >= 10:\n        return Decimal("0.05")',
        )
    )
    (root / "tests_shallow" / "test_small_orders.py").write_text(SMALL_ORDERS)
    result = run_audit(
        "tests_shallow",
        "--diff",
        "HEAD",
        "-q",
        "--no-probes",
        "--json",
        "r.json",
        "--github-annotations",
        "--pr-comment",
        "pr.md",
        "--badge",
        "badge.json",
        "--sonarqube",
        "sonar.json",
        cwd=root,
    )
    assert result.returncode == 0, result.stderr
    annotations = [m.groups() for m in map(_ANNOTATION.match, result.stdout.splitlines()) if m]
    return {"root": root, "report": Report.read(root / "r.json"), "annotations": annotations}


@pytest.mark.slow
def test_annotations_mark_only_the_lines_the_pull_request_changed(pull_request):
    changed = pull_request["report"].mutation.scope.changed_lines
    assert changed == {
        "shop/pricing.py": [35, 36],
        "tests_shallow/test_small_orders.py": [1, 2, 3, 4, 5],
    }
    places = {(file, int(line)) for _, file, line, _ in pull_request["annotations"]}
    assert places and all(line in changed[file] for file, line in places)


@pytest.mark.slow
def test_a_survivor_on_a_changed_line_is_annotated_with_the_change(pull_request):
    report = pull_request["report"]
    survivors = [m for m in report.mutation.mutants if m.status == "Survived" and m.line == 35]
    [(level, _, _, text)] = [
        a for a in pull_request["annotations"] if a[1:3] == ("shop/pricing.py", "35")
    ]
    assert level == "warning"
    assert text.startswith(f"{len(survivors)} changes to this line survived every test.")
    assert survivors[0].id in text


@pytest.mark.slow
def test_the_new_weak_test_is_annotated_with_its_smell(pull_request):
    [(level, _, _, text)] = [
        a for a in pull_request["annotations"] if a[1] == "tests_shallow/test_small_orders.py"
    ]
    assert level == "warning" and text.startswith("weak oracle: only weak checks such as")


@pytest.mark.slow
def test_the_comment_body_is_the_markdown_summary_under_its_marker(pull_request):
    # docs/ci.md: the Markdown summary under a hidden marker, which the workflow finds.
    first, *rest = (pull_request["root"] / "pr.md").read_text().splitlines()
    assert first == "<!-- audit: sticky pull-request comment -->" == MARKER
    assert rest[0] == "## audit: SHALLOW suite"
    assert "| figure | value |" in rest
    survivors = rest[rest.index(next(line for line in rest if line.startswith("### Surviving"))) :]
    assert any("`shop/pricing.py:" in line for line in survivors)


@pytest.mark.slow
def test_the_badge_shows_the_rated_score_in_the_ratings_colour(pull_request):
    # docs/ci.md: with no threshold set, the badge says the rating and takes its colour;
    # the shallow suite's change is rated shallow, which is red.
    rating = pull_request["report"].gate.rating
    badge = json.loads((pull_request["root"] / "badge.json").read_text())
    assert rating.level == "shallow"
    assert badge == {
        "schemaVersion": 1,
        "label": "mutation score",
        "message": f"{rating.score:.1f}% (shallow)",
        "color": "red",
    }


@pytest.mark.slow
def test_sonarqube_issues_each_name_a_described_rule_and_a_place(pull_request):
    sonar = json.loads((pull_request["root"] / "sonar.json").read_text())
    rules = {rule["id"]: rule for rule in sonar["rules"]}
    assert {"AM001", "AT005"} <= set(rules)
    for rule in rules.values():
        assert rule["engineId"] == "audit" and rule["cleanCodeAttribute"] == "TESTED"
        assert rule["impacts"][0]["severity"] in ("HIGH", "MEDIUM", "LOW")
    assert sonar["issues"]
    for issue in sonar["issues"]:
        assert issue["ruleId"] in rules
        location = issue["primaryLocation"]
        assert (pull_request["root"] / location["filePath"]).is_file()
        assert location["textRange"]["startLine"] >= 1 and location["message"]


@pytest.mark.slow
def test_a_diff_run_adds_no_point_to_the_trend(pull_request):
    assert pull_request["report"].trend == []
    assert not (pull_request["root"] / ".audit" / "history.jsonl").exists()


@pytest.mark.slow
def test_each_whole_run_adds_a_point_and_the_html_draws_the_trend(project_copy):
    root = project_copy("shop")
    for _ in range(2):
        result = run_audit("tests_shallow", "-q", "--no-probes", "--html", "r.html", cwd=root)
        assert result.returncode == 0, result.stderr
    report = Report.read(root / ".audit" / "report.json")
    assert [point.run for point in report.trend] == [1, 2]
    assert report.trend[1].mutation_score == report.mutation.scores.score
    assert report.trend[1].survived == report.mutation.scores.counts.survived
    html = (root / "r.html").read_text()
    assert 'id="trend"' in html and html.count("<polyline") == 2


@pytest.mark.slow
def test_each_suite_has_a_trend_of_its_own(project_copy):
    root = project_copy("shop")
    for suite in ("tests_shallow", "tests_strong", "tests_shallow"):
        result = run_audit(suite, "-q", "--no-probes", cwd=root)
        assert result.returncode == 0, result.stderr
    report = Report.read(root / ".audit" / "report.json")
    assert [(point.run, point.tests) for point in report.trend] == [
        (1, ["tests_shallow"]),
        (2, ["tests_shallow"]),
    ]


@pytest.mark.slow
def test_a_torn_line_in_the_history_is_skipped(project_copy):
    root = project_copy("shop")
    (root / ".audit").mkdir()
    (root / ".audit" / "history.jsonl").write_text('{"run": 1, "commit": "", "mutation_sc\n')
    result = run_audit("tests_shallow", "-q", "--no-probes", cwd=root)
    assert result.returncode == 0, result.stderr
    assert [point.run for point in Report.read(root / ".audit" / "report.json").trend] == [1]


def test_the_documented_workflow_uses_every_pull_request_output():
    workflow = yaml.safe_load((FIXTURES.parent / "docs" / "github-actions.yml").read_text())
    steps = workflow["jobs"]["audit"]["steps"]
    audit_step = next(step for step in steps if "audit tests/" in step.get("run", ""))
    for flag in ("--diff", "--pr-comment", "--badge", "--sonarqube", "--sarif", "--markdown"):
        assert flag in audit_step["run"]
    sticky = next(step for step in steps if step.get("name") == "sticky pull-request comment")
    assert f"MARKER='{MARKER}'" in sticky["run"]
    assert workflow["permissions"]["pull-requests"] == "write"
