"""The MCP server's warm audit session: one long-lived process that runs its audits.

A coding agent asks for an audit 10-50 times an hour. A new `audit` process per call
pays Python's start and audit's imports every time; the session pays them once, while
the server starts, and runs each audit as the command line does (`cli.run_command`):
the same containment of every child, the same time budget, exit code and report file.

It is a process of its own, not the server's: nothing an audit or its children print
can reach the MCP channel, and a session that ends (killed, out of memory) is started
again by the next call, which then pays a cold start and loses nothing else.

The wire is the one of every audit child (`auditor.containment.wire`): a request per
line on the session's stdin, a reply per line on the descriptor that was its stdout. The
reply carries the written report's headline, made from the report the session holds:
the server then answers without reading the report back (megabytes of JSON, checked
field by field, on every call).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from auditor.containment import wire
from auditor.containment.launch import own_module
from auditor.errors import McpError

if TYPE_CHECKING:
    from auditor.report import Report

FEEDBACK_CHARS = 4000
"""The feedback text an audit's answer carries, at most (the `feedback` tool takes any
size)."""


@dataclass(frozen=True)
class AuditRequest:
    args: list[str]
    """An `audit` command line, without the program: `["tests", "--json", "r.json"]`."""


class Headline(BaseModel):
    """What the answer to an audit shows of the report it wrote."""

    status: str
    verdict: str
    rating: str
    mutation_score: float | None
    assertion_share: float | None
    """Of the mutants the tests noticed, the share a failing check noticed (in percent)."""
    mutants: int
    survived: int
    smells: dict[str, int]
    feedback: str

    @classmethod
    def of(cls, report: Report) -> Headline:
        from auditor.agent import feedback

        scores = report.mutation.scores if report.mutation else None
        return cls(
            status=report.status,
            verdict=report.gate.verdict,
            rating=report.gate.rating.level if report.gate.rating else "",
            mutation_score=scores.score if scores else None,
            assertion_share=scores.assertion_share if scores else None,
            mutants=len(report.mutation.mutants) if report.mutation else 0,
            survived=scores.counts.survived if scores else 0,
            smells=dict(report.smells.counts),
            feedback=feedback.build(report).render(FEEDBACK_CHARS),
        )


@dataclass(frozen=True)
class AuditReply:
    exit_code: int
    errors: str
    """What the audit wrote on stderr: its one-line error, when it failed."""
    headline: Headline | None = None
    """The written report's; None when the audit wrote none."""


class WarmSession:
    """The server's side: starts the session, sends it one audit at a time, and starts
    it again when it has ended."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.process: subprocess.Popen[str] | None = None
        self.lock = threading.Lock()

    def start(self) -> None:
        """Start the session now, so that it is warm by the first call."""
        with self.lock:
            self._running()

    def audit(self, args: list[str]) -> AuditReply:
        """Run `audit ARGS` in the session. A session that ended since the last call is
        started again; one that ends during this call is too, and the call retried
        once: an audit leaves no half-written state behind to retry over."""
        with self.lock:
            try:
                return self._ask(args)
            except EOFError:
                self.process = None
            try:
                return self._ask(args)
            except EOFError as ended:
                raise McpError(f"the audit session ended during the audit ({ended})") from None

    def close(self) -> None:
        with self.lock:
            if self.process is not None:
                _end(self.process)
                self.process = None

    def _running(self) -> subprocess.Popen[str]:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(
                own_module("auditor.agent.session"),
                cwd=self.root,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # the audit's errors come in the reply
                text=True,
            )
        return self.process

    def _ask(self, args: list[str]) -> AuditReply:
        process = self._running()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(wire.encode(AuditRequest(args)) + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
        except OSError:  # the pipe to a session that has ended
            line = ""
        if not line:
            raise EOFError(f"exit code {_end(process)}")
        try:
            return wire.decode(AuditReply, line)
        except ValueError:
            raise McpError("the audit session sent a reply that is not one") from None


def _end(process: subprocess.Popen[str]) -> int:
    """Close the session's stdin (its signal to stop) and wait for it."""
    with contextlib.suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    try:
        return process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def serve() -> None:
    """The session's side: answer each request on stdin until stdin closes."""
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    # What audit's children inherit as stdout is not the reply channel.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)

    from auditor.baseline import known
    from auditor.cli import run_command
    from auditor.containment.layout import fix_child_address_layout
    from auditor.containment.scratch import use_run_folder

    use_run_folder()
    fix_child_address_layout()
    _import_stages()
    for line in sys.stdin:
        request = wire.build(AuditRequest, line)
        errors = io.StringIO()
        written: list[Report] = []
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(errors):
            code = run_command(request.args, written)
        headline = Headline.of(written[-1]) if written else None
        replies.write(wire.encode(AuditReply(int(code), errors.getvalue(), headline)) + "\n")
        replies.flush()
        known.prepare_next_load()  # while the agent reads the answer


_WARM_MODULES = (
    "auditor.pipeline",
    "auditor.baseline.stage",
    "auditor.smells.analyzer",
    "auditor.mutation.stage",
    "auditor.probes.stage",
    "auditor.evidence.history",
    "reports.outputs",
    "reports.terminal",
)
"""What an audit imports on its way, imported before the first call needs it."""


def _import_stages() -> None:
    for name in _WARM_MODULES:
        importlib.import_module(name)


if __name__ == "__main__":
    serve()
