"""Messages between the engine (parent) and its runners: one JSON object per line."""

from __future__ import annotations

import base64
from typing import Literal

from pydantic import BaseModel, Field


class RunnerSpec(BaseModel):
    root: str
    test_paths: list[str]
    deselect: list[str]
    source_files: list[str]
    allowed_roots: list[str]
    memory_limit_mb: int
    child_growth_limit_mb: int
    guard: bool = True
    log_file: str
    basetemp: str


class Job(BaseModel):
    id: str
    path: Literal["swap", "module"]
    file: str
    module_name: str
    tests: list[str]
    timeout: float
    target_line: int = 0
    target_name: str = ""
    code_b64: str = ""
    module_source: str = ""

    @staticmethod
    def encode_code(code: bytes) -> str:
        return base64.b64encode(code).decode("ascii")

    def code_bytes(self) -> bytes:
        return base64.b64decode(self.code_b64)


class JobResult(BaseModel):
    id: str
    status: Literal["Killed", "Survived", "Timeout", "RuntimeError", "CompileError"]
    killed_by: list[str] = Field(default_factory=list)
    kill_kind: Literal["assertion", "error", "crash", ""] = ""
    """How the killing test failed: a check failed, another exception, or the process died."""
    ran: int = 0
    duration: float = 0.0
    """Wall time of the mutant's child, fork to exit."""
    tests_seconds: float = 0.0
    """Of that, the time pytest measured inside the tests' setup, call and teardown."""
    detail: str = ""
    on_copy: bool = False
    """The verdict came from a run on a copy of the project (the copy path)."""


class Ready(BaseModel):
    ready: bool = True
    collected: int
    missing: list[str] = Field(default_factory=list)
