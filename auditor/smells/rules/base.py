"""What every rule receives and returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from auditor.smells.assertions import Check, CheckFinder
from auditor.smells.source import TestFunction, TestModule


@dataclass(frozen=True)
class Finding:
    code: str
    line: int
    message: str
    test: str = ""


@dataclass
class TestContext:
    """A test with the facts several rules share, computed once."""

    test: TestFunction
    module: TestModule
    finder: CheckFinder
    earlier: list[Finding] = field(default_factory=list)
    """Findings already made for this test, so a rule can stay quiet when a stronger
    one has said it (an empty test is not also assertion-free)."""

    @cached_property
    def checks(self) -> list[Check]:
        return self.finder.checks(self.test)

    def has(self, *codes: str) -> bool:
        return any(finding.code in codes for finding in self.earlier)

    def finding(self, code: str, node: object, message: str) -> Finding:
        line = self.module.line_of(node) if node is not None else self.test.line
        return Finding(code, line or self.test.line, message, self.test.qualname)
