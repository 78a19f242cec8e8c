"""The errors a user can see, each tied to a pipeline stage and an exit code.

Every failure that reaches the command line is one of these; the CLI prints
``audit: <stage>: <message>`` and exits with ``exit_code``. Nothing else escapes.

    AuditError                 any stage (the stage is given: report, accept, ...)  2
    ├── ConfigError            config: flags, [tool.audit], pyproject.toml          2
    ├── DiscoveryError         discover: test paths, code under test                2
    ├── DiffError              diff: the git ref of --diff                          2
    ├── SuiteUnusableError     baseline: nothing collected, nothing passes          3
    ├── RunnerStartError       mutate: a mutation runner could not start            2
    ├── DistributedError       mutate: the Dask scheduler or its workers            2
    ├── MergeError             merge: shard reports that do not make one run        2
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


class IncompleteRunError(AuditError):
    """The run was interrupted or stopped before every stage finished."""

    exit_code = ExitCode.INCOMPLETE
