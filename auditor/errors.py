"""The errors a user can see, each tied to a pipeline stage and an exit code.

Every failure that reaches the command line is one of these; the CLI prints
``audit: <stage>: <message>`` and exits with ``exit_code``. Nothing else escapes.

    AuditError                 the base class: never raised itself                  2
    ├── ConfigError            config: flags, [tool.audit], pyproject.toml          2
    ├── DiscoveryError         discover: test paths, code under test                2
    ├── DiffError              diff: the git ref of --diff                          2
    ├── SuiteUnusableError     baseline: nothing collected, nothing passes          3
    ├── TypeCheckError         type-check: the checker is missing, hangs or fails   2
    ├── RunnerStartError       mutate: a mutation runner could not start            2
    ├── DistributedError       mutate: the Dask scheduler or its workers            2
    ├── ProbeError             probe: the probe process failed                      2
    ├── MutmutImportError      import: mutmut's results missing or unreadable       2
    ├── ReportError            report: a report that cannot be read or written      2
    ├── MergeError             merge: shard reports that do not make one run        2
    ├── AcceptanceError        accept: the accepted-survivors file, or its entry    2
    ├── FeedbackError          feedback: a file that is not under test              2
    ├── GenerateError          generate: no key, no file, no usable test            2
    ├── McpError               mcp: the project root of the MCP server              2
    └── IncompleteRunError     interrupted, or stopped by the time budget           4
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    PASSED = 0
    GATE_FAILED = 1
    USAGE_ERROR = 2
    SUITE_UNUSABLE = 3
    INCOMPLETE = 4


class AuditError(Exception):
    """Base class: a one-line, user-facing message naming the stage (and file)."""

    exit_code: ExitCode = ExitCode.USAGE_ERROR

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message

    def __str__(self) -> str:
        return f"{self.stage}: {self.message}"


class ConfigError(AuditError):
    """Bad flags, unknown or invalid `[tool.audit]` keys, unreadable pyproject.toml."""

    exit_code = ExitCode.USAGE_ERROR

    def __init__(self, message: str) -> None:
        super().__init__("config", message)


class DiscoveryError(AuditError):
    """The test folder or the code under test cannot be found."""

    exit_code = ExitCode.USAGE_ERROR

    def __init__(self, message: str) -> None:
        super().__init__("discover", message)


class DiffError(AuditError):
    """`--diff REF`: git is missing, or the ref is unknown (a shallow clone, say)."""

    def __init__(self, message: str) -> None:
        super().__init__("diff", message)


class SuiteUnusableError(AuditError):
    """Nothing was collected, or no test passes on the original code."""

    exit_code = ExitCode.SUITE_UNUSABLE

    def __init__(self, message: str) -> None:
        super().__init__("baseline", message)


class RunnerStartError(AuditError):
    """A mutation runner died before it was ready (its log's last lines say why)."""

    def __init__(self, message: str) -> None:
        super().__init__("mutate", message)


class DistributedError(AuditError):
    """`executor = "dask"`: a bad scheduler address, no scheduler, or no workers."""

    def __init__(self, message: str) -> None:
        super().__init__("mutate", message)


class MergeError(AuditError):
    """`audit merge`: shard reports missing, repeated, or of different runs."""

    def __init__(self, message: str) -> None:
        super().__init__("merge", message)


class TypeCheckError(AuditError):
    """`--type-check`: the checker is not installed, runs past its time or fails."""

    def __init__(self, message: str) -> None:
        super().__init__("type-check", message)


class ProbeError(AuditError):
    """The probe process failed for a reason other than the code it probed."""

    def __init__(self, message: str) -> None:
        super().__init__("probe", message)


class MutmutImportError(AuditError):
    """`--mutation-from mutmut`: no results, or results audit cannot read."""

    def __init__(self, message: str) -> None:
        super().__init__("import", message)


class ReportError(AuditError):
    """A report (or an output file) that cannot be read or written."""

    def __init__(self, message: str) -> None:
        super().__init__("report", message)


class AcceptanceError(AuditError):
    """`audit accept` and `.audit/accepted.toml`: a bad entry or mutant id."""

    def __init__(self, message: str) -> None:
        super().__init__("accept", message)


class FeedbackError(AuditError):
    """`audit feedback --file`: a file that is not code under test."""

    def __init__(self, message: str) -> None:
        super().__init__("feedback", message)


class GenerateError(AuditError):
    """`audit generate`: no key, an unreadable file, or no usable test."""

    def __init__(self, message: str) -> None:
        super().__init__("generate", message)


class McpError(AuditError):
    """`audit mcp`: a project root that is not a folder."""

    def __init__(self, message: str) -> None:
        super().__init__("mcp", message)


class IncompleteRunError(AuditError):
    """The run was interrupted or stopped before every stage finished."""

    exit_code = ExitCode.INCOMPLETE
