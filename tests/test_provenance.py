"""Which generator wrote each test: config globs, a header comment, git trailers; and a
scorecard per generator."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from auditor.evidence.provenance import origins
from auditor.report import Report
from tests.conftest import copy_fixture, run_audit

GIT = ["git", "-c", "user.name=QA", "-c", "user.email=qa@example.com"]


def _git(root: Path, *args: str) -> None:
    subprocess.run([*GIT, "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """shop with one suite of four files: one under a generator's glob, one with a
    header, one added by a commit a model co-authored, one nobody claims."""
    root = tmp_path_factory.mktemp("provenance") / "shop"
    copy_fixture("shop", root)
    tests = root / "tests"
    (tests / "gen").mkdir(parents=True)
    shutil.copy(root / "tests_shallow" / "test_cart.py", tests / "gen" / "test_cart_fast.py")
    header = "# generated-by: deep-model\n"
    strong_pricing = (root / "tests_strong" / "test_pricing.py").read_text()
    (tests / "test_pricing_deep.py").write_text(header + strong_pricing)
    shutil.copy(root / "tests_shallow" / "test_pricing.py", tests / "test_pricing_plain.py")
    with (root / "pyproject.toml").open("a") as config:
        config.write('\n[tool.audit.generators]\nfast = ["tests/gen/**"]\n')
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "Shop and its first tests")
    shutil.copy(root / "tests_strong" / "test_inventory.py", tests / "test_inventory_bot.py")
    _git(root, "add", "tests/test_inventory_bot.py")
    message = "Add inventory tests\n\nCo-authored-by: Claude <noreply@anthropic.com>"
    _git(root, "commit", "-q", "-m", message)
    return root


def test_each_source_names_its_generator_in_order(project):
    found = {
        origin.file: (origin.generator, origin.source)
        for origin in origins(
            project,
            [
                "tests/gen/test_cart_fast.py",
                "tests/test_pricing_deep.py",
                "tests/test_inventory_bot.py",
                "tests/test_pricing_plain.py",
            ],
            {"fast": ["tests/gen/**"]},
        )
    }
    assert found == {
        "tests/gen/test_cart_fast.py": ("fast", "config glob"),
        "tests/test_pricing_deep.py": ("deep-model", "header comment"),
        "tests/test_inventory_bot.py": ("Claude", "git co-author"),
        "tests/test_pricing_plain.py": ("unattributed", ""),
    }


def test_a_trailer_naming_the_generator_wins_over_co_authors(project, tmp_path):
    root = tmp_path / "repo"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text("def test_a():\n    assert 1\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    message = "Tests\n\nGenerated-by: fast-model-v2\nCo-authored-by: Copilot <bot@example.com>"
    _git(root, "commit", "-q", "-m", message)
    (found,) = origins(root, ["tests/test_a.py"], {})
    assert (found.generator, found.source) == ("fast-model-v2", "git trailer")


def test_outside_a_repository_nothing_comes_from_git(tmp_path):
    (tmp_path / "test_a.py").write_text("def test_a():\n    assert 1\n")
    (found,) = origins(tmp_path, ["test_a.py"], {})
    assert found.generator == "unattributed"


@pytest.fixture(scope="module")
def audited(project) -> tuple[Report, str]:
    result = run_audit(
        "tests",
        "--no-probes",
        "--all-killers",
        "--json",
        "r.json",
        "--markdown",
        "s.md",
        cwd=project,
    )
    return Report.read(project / "r.json"), result.stdout


@pytest.mark.slow
def test_the_report_holds_a_scorecard_per_generator(audited):
    report, _ = audited
    cards = {card.generator: card for card in report.provenance.generators}
    assert set(cards) == {"fast", "deep-model", "Claude", "unattributed"}
    by_test = {t.nodeid: t for t in report.mutation.tests}
    fast = [n for n in by_test if n.startswith("tests/gen/")]
    assert cards["fast"].tests == len(fast)
    assert cards["fast"].kills_by_check == sum(by_test[n].killed for n in fast)
    # the fast model's shallow tests check less than the deep model's
    assert cards["fast"].assertion_share < cards["deep-model"].assertion_share
    assert cards["deep-model"].score_alone is not None
    only_fast = [
        m
        for m in report.mutation.mutants
        if m.status == "Killed" and all(t.startswith("tests/gen/") for t in m.killed_by)
    ]
    assert cards["fast"].unique_kills == len(only_fast)


@pytest.mark.slow
def test_the_terminal_and_markdown_show_the_generators(audited, project):
    _, stdout = audited
    assert "generators" in stdout and "deep-model" in stdout
    assert "### Generators" in (project / "s.md").read_text()


@pytest.mark.slow
def test_the_gate_takes_thresholds_per_generator(audited):
    from auditor.config import GateConfig
    from auditor.gate import _generator_conditions

    report, _ = audited
    config = GateConfig.model_validate(
        {"generators": {"fast": {"max_smells_per_test": 0}, "nobody": {"min_score_alone": 90}}}
    )
    (condition,) = _generator_conditions(config, report.provenance)
    assert condition.name == "generators.fast.max_smells_per_test"
    assert not condition.passed
