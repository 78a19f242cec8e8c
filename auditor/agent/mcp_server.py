"""`audit mcp`: the audit as tools a coding agent calls over MCP (stdio).

An agent that writes tests in a loop asks: how good is this suite, what did it miss,
which test should I write next, what is wrong with this test file. Each tool answers
from the same report model the CLI writes (structured content, with the JSON schema of
the models), and the audit itself runs as `audit` does on the command line, with its
containment, its time budget and its report file, in a warm session process
(`auditor.agent.session`) started with the server. The server keeps no state of its
own between calls: the report on disk is the state.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from auditor.agent import feedback
from auditor.agent.session import Headline, WarmSession
from auditor.errors import AuditError, ExitCode, McpError
from auditor.report import Mutant, Report, Smell, Witness, read_report

DEFAULT_REPORT = ".audit/report.json"


class AuditResult(Headline):
    """What one audit gave: the headline figures, the gate, and the feedback text."""

    exit_code: int
    """0 gate passed, 1 gate failed, 4 incomplete (the time budget ran out): as the CLI's."""
    report: str
    """Where the JSON report is, relative to the project root: the other tools read it."""


class MutantExplanation(BaseModel):
    mutant: Mutant
    """The change (`diff`), its status, and the tests that noticed it."""
    covered_by: list[str]
    """The reliable tests that run its line."""
    witness: Witness | None
    """For a survivor: an input on which the code as it is and the mutant differ."""
    suggested_test: str
    """A pytest test that fails on the mutant and passes on the code ('' when none)."""


class TestToWrite(BaseModel):
    """One test worth writing: the call that shows the most unnoticed changes at once."""

    file: str
    line: int
    function: str
    input: str
    """The call to make ('' when no input was found: the mutants are listed alone)."""
    expected: str
    """What the code as it is does on that input: the value to assert."""
    kills: list[str]
    """The surviving mutants a test of this input catches."""
    suggested_test: str


class SmellsResult(BaseModel):
    smells: list[Smell] = Field(default_factory=list)
    """Each with its fix in `hint`."""
    unparsable: list[str] = Field(default_factory=list)


def serve(root: Path) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        raise McpError(
            "the MCP server needs the `mcp` package: pip install 'audit-tests[mcp]'"
        ) from None

    server = MCPServer(
        "audit",
        log_level="WARNING",
        instructions=(
            "Audit a pytest suite: mutation testing, smells and probes. Call `audit` on a "
            "test folder first; the other tools read the report it writes."
        ),
    )

    def load(report: str, file: str | None = None) -> Report:
        path = root / report
        if not path.exists():
            raise ToolError(f"report: no report at {report}: call the `audit` tool first")
        try:
            found = read_report(path)
            feedback.check_files(found, [file] if file else [])
        except AuditError as error:
            raise ToolError(str(error)) from None
        return found

    @server.tool(name="audit")
    def audit(
        tests: list[str],
        diff: str | None = None,
        time_budget: str | None = None,
        report: str = DEFAULT_REPORT,
    ) -> AuditResult:
        """Audit the pytest tests under `tests` (paths relative to the project root):
        run them with coverage, mutate the code they test, probe it. `diff`: only the
        lines changed since this git ref. `time_budget`: e.g. 90s, 5m."""
        return audit_in_session(session, root, AuditCall(tests, diff, time_budget, report))

    @server.tool()
    def explain_mutant(mutant_id: str, report: str = DEFAULT_REPORT) -> MutantExplanation:
        """A mutant of the last audit: the change, the tests that ran and caught it, an
        input that shows it, and a test that would catch it."""
        return explain(load(report), mutant_id, report)

    @server.tool()
    def next_tests(
        limit: int = 10, file: str | None = None, report: str = DEFAULT_REPORT
    ) -> list[TestToWrite]:
        """The tests worth writing next, the one catching most unnoticed changes first
        (`file`: only changes to this file of the code under test)."""
        return tests_to_write(load(report, file), limit, file)

    @server.tool()
    def test_smells(test_file: str) -> SmellsResult:
        """The smells of a test file (no test runs), each with its fix."""
        return smells_of(root, test_file)

    @server.tool(name="feedback")
    def feedback_text(
        max_chars: int = feedback.DEFAULT_MAX_CHARS,
        file: str | None = None,
        report: str = DEFAULT_REPORT,
    ) -> str:
        """What the last audit found, as short text for the model that wrote the tests."""
        return feedback.build(load(report, file), {file} if file else None).render(max_chars)

    session = WarmSession(root)
    session.start()
    try:
        server.run("stdio")
    finally:
        session.close()


@dataclass(frozen=True)
class AuditCall:
    tests: list[str]
    diff: str | None
    time_budget: str | None
    report: str

    def command_line(self) -> list[str]:
        """`audit TESTS --json REPORT -q`, as on the command line."""
        args = [*self.tests, "--json", self.report, "-q"]
        if self.diff:
            args += ["--diff", self.diff]
        if self.time_budget:
            args += ["--time-budget", self.time_budget]
        return args


_WITH_REPORT = (ExitCode.PASSED, ExitCode.GATE_FAILED, ExitCode.INCOMPLETE)


def audit_in_session(session: WarmSession, root: Path, call: AuditCall) -> AuditResult:
    """The audit, run by the warm session, and the headline of the report it wrote."""
    from mcp.server.mcpserver.exceptions import ToolError

    path = root / call.report
    before = _written(path)
    try:
        done = session.audit(call.command_line())
    except AuditError as error:
        raise ToolError(str(error)) from None
    written = _written(path) not in (None, before)
    if done.exit_code not in _WITH_REPORT or not written or done.headline is None:
        lines = done.errors.strip().splitlines()
        raise ToolError(lines[-1] if lines else f"audit exited with {done.exit_code}")
    return AuditResult(exit_code=done.exit_code, report=call.report, **dict(done.headline))


def _written(path: Path) -> tuple[int, int, int] | None:
    """Which file is at `path` (None: none): a report an earlier call wrote is not this
    call's."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_ino, found.st_mtime_ns, found.st_size)


def explain(report: Report, mutant_id: str, report_name: str) -> MutantExplanation:
    from mcp.server.mcpserver.exceptions import ToolError

    mutants = report.mutation.mutants if report.mutation else []
    mutant = next((m for m in mutants if m.id == mutant_id), None)
    if mutant is None:
        raise ToolError(f"explain: no mutant {mutant_id!r} in {report_name}")
    witnesses = report.probes.witnesses if report.probes else []
    witness = next((w for w in witnesses if w.mutant_id == mutant_id), None)
    return MutantExplanation(
        mutant=mutant,
        covered_by=mutant.covered_by,
        witness=witness,
        suggested_test=witness.test if witness else "",
    )


def tests_to_write(report: Report, limit: int, file: str | None) -> list[TestToWrite]:
    found = []
    for group in feedback.next_tests(report, {file} if file else None)[: max(0, limit)]:
        first, witness = group.first, group.witness
        found.append(
            TestToWrite(
                file=first.file,
                line=first.line,
                function=witness.function if witness else first.function,
                input=witness.input if witness else "",
                expected=witness.original if witness else "",
                kills=[m.id for m in group.mutants],
                suggested_test=witness.test if witness else "",
            )
        )
    return found


def smells_of(root: Path, test_file: str) -> SmellsResult:
    from mcp.server.mcpserver.exceptions import ToolError

    from auditor.smells.analyzer import analyze_paths

    try:
        found = analyze_paths([(root / test_file).resolve()], root)
    except AuditError as error:
        raise ToolError(str(error)) from None
    return SmellsResult(
        smells=found.findings,
        unparsable=[f"{error.location}: {error.message}" for error in found.unparsable],
    )
