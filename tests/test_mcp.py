"""`audit mcp`, driven by the MCP SDK's own client over stdio, on the shop fixture."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from auditor.agent.feedback import build, next_tests
from auditor.report import Report
from tests.conftest import copy_fixture, one_module_project, tree_digest

pytestmark = pytest.mark.slow

TOOLS = ["audit", "explain_mutant", "feedback", "next_tests", "test_smells"]


def call(root: Path, *calls: tuple[str, dict[str, Any]] | Callable[[], Any]) -> list[Any]:
    """One session with `audit mcp` in `root`: the tool list, then each call's result (a
    function among the calls runs between two of them; its result is listed too)."""

    async def session() -> list[Any]:
        server = StdioServerParameters(
            command=sys.executable, args=["-m", "auditor", "mcp"], cwd=str(root)
        )
        async with Client(server) as client:
            listed = await client.list_tools()
            results: list[Any] = [sorted(tool.name for tool in listed.tools)]
            for step in calls:
                if callable(step):
                    results.append(step())
                else:
                    results.append(await client.call_tool(*step))
            return results

    return asyncio.run(session())


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> tuple[Path, Any, dict[str, str]]:
    """The shop fixture audited through the `audit` tool: (root, the call's result, the
    project's files before)."""
    root = tmp_path_factory.mktemp("mcp") / "shop"
    copy_fixture("shop", root)
    before = tree_digest(root)
    _, result = call(root, ("audit", {"tests": ["tests_shallow"]}))
    return root, result, before


@pytest.fixture(scope="module")
def report(audited) -> Report:
    root, _, _ = audited
    return Report.read(root / ".audit" / "report.json")


def test_the_server_lists_its_tools(audited):
    root, _, _ = audited
    [tools] = call(root)
    assert tools == TOOLS


def test_the_audit_tool_returns_the_reports_figures_and_feedback(audited, report):
    _, result, _ = audited
    assert not result.is_error
    summary = result.structured_content
    assert summary["exit_code"] == 0 and summary["status"] == "complete"
    assert summary["report"] == ".audit/report.json"
    assert summary["mutation_score"] == report.mutation.scores.score
    assert summary["assertion_share"] == report.mutation.scores.assertion_share
    assert summary["mutants"] == len(report.mutation.mutants)
    assert summary["survived"] == report.mutation.scores.counts.survived
    assert (summary["verdict"], summary["rating"]) == ("pass", report.gate.rating.level)
    assert summary["smells"] == report.smells.counts
    assert summary["feedback"] == build(report).render(4000)


def test_the_audit_tool_leaves_the_project_as_it_was(audited):
    root, _, before = audited
    assert tree_digest(root) == before


def test_explain_mutant_gives_the_change_the_witness_and_a_test(audited, report):
    root, _, _ = audited
    witness = next(w for w in report.probes.witnesses if w.status == "found" and w.test)
    _, result = call(root, ("explain_mutant", {"mutant_id": witness.mutant_id}))
    explained = result.structured_content
    mutant = next(m for m in report.mutation.mutants if m.id == witness.mutant_id)
    assert explained["mutant"]["diff"] == mutant.diff
    assert explained["covered_by"] == mutant.covered_by
    assert explained["witness"]["input"] == witness.input
    assert explained["suggested_test"] == witness.test


def test_an_unknown_mutant_is_a_one_line_error_naming_the_report(audited):
    root, _, _ = audited
    _, result = call(root, ("explain_mutant", {"mutant_id": "shop/nope.py::f::x@1:1#0"}))
    assert result.is_error
    [content] = result.content
    assert content.text.endswith(
        "explain: no mutant 'shop/nope.py::f::x@1:1#0' in .audit/report.json"
    )


def test_next_tests_rank_the_input_catching_most_changes_first(audited, report):
    root, _, _ = audited
    _, result = call(root, ("next_tests", {"limit": 3}))
    listed = result.structured_content["result"]
    expected = next_tests(report)[:3]
    assert [t["kills"] for t in listed] == [[m.id for m in g.mutants] for g in expected]
    assert len(listed[0]["kills"]) >= len(listed[1]["kills"]) > 1
    assert listed[0]["suggested_test"].startswith("from ")


def test_test_smells_lists_a_files_smells_with_their_fixes(audited):
    root, _, _ = audited
    _, result = call(root, ("test_smells", {"test_file": "tests_shallow/test_cart.py"}))
    smells = result.structured_content["smells"]
    assert {"code": "AT001", "line": 16, "test": "test_cart_add_invalid"}.items() <= next(
        s for s in smells if s["code"] == "AT001"
    ).items()
    assert all(s["file"] == "tests_shallow/test_cart.py" and s["hint"] for s in smells)


def test_feedback_is_the_same_text_as_the_command_gives(audited, report):
    root, _, _ = audited
    _, result = call(root, ("feedback", {"max_chars": 1500, "file": "shop/cart.py"}))
    assert result.structured_content["result"] == build(report, {"shop/cart.py"}).render(1500)


def test_a_tool_before_any_audit_says_to_run_the_audit_first(tmp_path):
    _, result = call(tmp_path, ("next_tests", {}))
    assert result.is_error
    assert "no report at .audit/report.json: call the `audit` tool first" in (
        result.content[0].text
    )


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _audit_reuse(root: Path, **arguments: Any) -> Report:
    """The `audit` tool called in a session of its own (the agent's next question)."""
    _, result = call(root, ("audit", {"tests": ["tests_shallow"], **arguments}))
    assert not result.is_error
    return Report.read(root / ".audit" / "report.json")


def test_the_agents_loop_through_the_audit_tool_reruns_what_changed(tmp_path):
    """Asked again with nothing changed, the server's audit keeps the baseline; after a
    changed conftest it measures everything again; about a new test (`diff`) it runs
    that test and names the functions it calls."""
    root = tmp_path / "shop"
    copy_fixture("shop", root)
    with (root / "pyproject.toml").open("a") as pyproject:
        pyproject.write("probes = false\n")  # under [tool.audit]: this is about reuse
    _git(root, "init", "-q")
    _git(root, "-c", "user.email=a@b", "-c", "user.name=a", "add", "-A")
    _git(root, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "shop")
    _audit_reuse(root)

    unchanged = _audit_reuse(root)
    (root / "tests_shallow" / "conftest.py").write_text("import pytest\n")
    conftest = _audit_reuse(root)
    _git(root, "-c", "user.email=a@b", "-c", "user.name=a", "add", "-A")
    _git(root, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "conftest")
    (root / "tests_shallow" / "test_round.py").write_text(NEW_TEST)
    change = _audit_reuse(root, diff="HEAD")

    assert unchanged.baseline.reuse == "kept from an earlier run: nothing it depends on changed"
    assert conftest.baseline.reuse.startswith("measured: ")
    assert "tests_shallow/conftest.py" in conftest.baseline.reuse
    assert change.baseline.reuse.startswith("measured 1 of ")
    assert change.mutation.scope.changed_tests == ["tests_shallow/test_round.py"]
    assert {m.function for m in change.mutation.mutants} == {"round_money"}


NEW_TEST = """\
from decimal import Decimal

from shop.pricing import round_money


def test_round_money_rounds_half_up():
    assert round_money(Decimal("1.005")) == Decimal("1.01")
"""


def _session_of(root: Path) -> int:
    """The pid of the warm audit session the server in `root` keeps."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
            where = os.readlink(proc / "cwd")
        except OSError:
            continue
        if b"auditor.agent.session" in command and Path(where) == root:
            found.append(int(proc.name))
    [pid] = found
    return pid


def _small(root: Path) -> Path:
    """A project audited in a second or two: what a test of the session itself needs."""
    test = "from double import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    one_module_project(root, "double", "def double(x):\n    return x * 2\n", {"test_d.py": test})
    with (root / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n[tool.audit]\nprobes = false\n")
    return root


def test_one_warm_session_answers_the_audits_of_a_server(tmp_path):
    root = _small(tmp_path / "double")
    audit = ("audit", {"tests": ["tests"]})
    _, first, pid, second, again = call(
        root, audit, lambda: _session_of(root), audit, lambda: _session_of(root)
    )
    assert not first.is_error and not second.is_error
    assert pid == again
    assert second.structured_content == first.structured_content


def test_a_session_killed_between_two_audits_costs_nothing_but_its_warm_start(tmp_path):
    root = _small(tmp_path / "double")
    audit = ("audit", {"tests": ["tests"]})

    def kill() -> int:
        pid = _session_of(root)
        os.kill(pid, signal.SIGKILL)
        return pid

    _, first, killed, second, started = call(root, audit, kill, audit, lambda: _session_of(root))
    assert not second.is_error
    assert second.structured_content == first.structured_content
    assert started != killed


def test_an_audit_cut_by_its_time_budget_returns_its_partial_report(tmp_path):
    root = tmp_path / "shop"
    copy_fixture("shop", root)
    _, result = call(root, ("audit", {"tests": ["tests_shallow"], "time_budget": "1s"}))
    assert not result.is_error
    summary = result.structured_content
    assert (summary["exit_code"], summary["status"]) == (4, "incomplete")


def test_a_failed_audit_is_its_error_not_the_report_an_earlier_audit_left(tmp_path):
    root = _small(tmp_path / "double")
    (root / "tests_failing").mkdir()
    (root / "tests_failing" / "test_no.py").write_text("def test_no():\n    assert False\n")
    _, earlier, failed = call(
        root,
        ("audit", {"tests": ["tests"]}),
        ("audit", {"tests": ["tests_failing"]}),
    )
    assert not earlier.is_error
    assert failed.is_error
    assert "audit: baseline: no test passes on the original code" in failed.content[0].text
