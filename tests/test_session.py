"""The warm audit session the MCP server keeps: one process, audits as on the command
line, started again when it ends."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from auditor.agent.session import WarmSession
from tests.conftest import one_module_project

pytestmark = pytest.mark.slow

SOURCE = "def double(x):\n    return x * 2\n"
TESTS = {
    "test_double.py": (
        "from double import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    )
}
ARGS = ["tests", "--no-probes", "--json", "r.json", "-q"]


@pytest.fixture
def session(tmp_path):
    root = one_module_project(tmp_path / "project", "double", SOURCE, TESTS)
    warm = WarmSession(root)
    warm.start()
    yield warm
    warm.close()


def _pid(session: WarmSession) -> int:
    assert session.process is not None
    return session.process.pid


def test_a_session_answers_each_audit_in_the_same_process(session):
    first = session.audit(ARGS)
    pid = _pid(session)
    second = session.audit(ARGS)
    assert (first.exit_code, second.exit_code) == (0, 0)
    assert _pid(session) == pid
    report = json.loads((session.root / "r.json").read_text())
    assert report["mutation"]["scores"]["counts"]["killed"] > 0


def test_an_audits_error_comes_back_as_its_line_and_exit_code(session):
    done = session.audit(["nope", "--json", "r.json"])
    assert done.exit_code == 2
    assert done.errors.strip() == "audit: discover: test path 'nope' does not exist"


def test_a_session_killed_between_two_audits_is_started_again(session, fault):
    session.audit(ARGS)
    killed = _pid(session)
    os.kill(killed, signal.SIGKILL)
    session.process.wait()
    done = session.audit(ARGS)
    assert done.exit_code == 0
    assert _pid(session) != killed
    fault(
        "processes",
        "SIGKILL of the warm agent session between two requests",
        did="started a new session for the next request",
        exit_code=done.exit_code,
        saw="(the next answer, as without the fault)",
        lost="nothing; the next request pays one cold start (time)",
    )


def test_the_stdout_the_audits_children_inherit_is_not_the_reply_channel(session):
    """A child that writes to descriptor 1 (a test's subprocess, a tool audit starts)
    writes into /dev/null, not between two replies."""
    assert session.audit(ARGS).exit_code == 0
    assert os.readlink(f"/proc/{_pid(session)}/fd/1") == "/dev/null"


def test_closing_the_session_ends_its_process(tmp_path):
    root = one_module_project(tmp_path / "project", "double", SOURCE, TESTS)
    warm = WarmSession(root)
    warm.start()
    process = warm.process
    warm.close()
    assert process is not None and process.poll() == 0


def test_the_session_runs_in_the_projects_folder(session):
    """Relative paths of a call mean what they mean on the command line there."""
    session.audit(ARGS)
    assert Path(os.readlink(f"/proc/{_pid(session)}/cwd")) == session.root


def test_an_audit_in_the_session_prints_nothing_and_hands_over_its_report(
    tmp_path, monkeypatch, capsys
):
    """What the session's audit would print is thrown away: its reply carries the
    headline of the report it hands over. The same command line prints the summary."""
    from auditor.cli import run_command

    root = one_module_project(tmp_path / "project", "double", SOURCE, TESTS)
    monkeypatch.chdir(root)
    args = ["tests", "--no-mutation", "--no-probes", "--json", "r.json", "-q"]
    assert run_command(args) == 0
    assert "audit summary" in capsys.readouterr().out
    written = []
    assert run_command(args, written) == 0
    assert capsys.readouterr().out == ""
    assert [report.baseline.passed for report in written] == [1]
