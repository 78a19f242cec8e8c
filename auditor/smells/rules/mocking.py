"""Rules about mocks: checks that only read mocks, and tests that mock too much."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from auditor.smells.assertions import reads_mock
from auditor.smells.rules.base import Finding, TestContext
from auditor.smells.source import call_name, dotted_name, walk

_MOCK_FACTORIES = {"Mock", "MagicMock", "AsyncMock", "NonCallableMock", "create_autospec"}
_PATCHERS = {"patch", "object", "dict", "multiple"}


def mock_only_assertions(context: TestContext) -> Iterator[Finding]:
    """AT006: every check reads a mock (assert_called*, call_count, called, call_args)."""
    checks = context.checks
    if checks and all(reads_mock(check.node) for check in checks):
        yield context.finding(
            "AT006",
            checks[0].node,
            "every assertion reads a mock: the code's own result is never checked",
        )


def _is_patch_call(call: cst.Call) -> bool:
    name = dotted_name(call.func)
    parts = name.split(".")
    if parts[-1] == "setattr" and parts[0] == "monkeypatch":
        return True
    if parts[-1] == "patch" or (len(parts) > 1 and parts[-2] == "patch"):
        return parts[-1] in _PATCHERS
    return False


def _patch_target(call: cst.Call) -> str:
    if call.args and isinstance(call.args[0].value, cst.SimpleString):
        return call.args[0].value.evaluated_value or ""
    return ""


def over_mocking(context: TestContext) -> Iterator[Finding]:
    """AT007: mocks outnumber checks, or the code under test is itself patched."""
    test = context.test.node
    patches: list[cst.Call] = []
    mocks = 0
    for decorator in test.decorators:
        if isinstance(decorator.decorator, cst.Call) and _is_patch_call(decorator.decorator):
            patches.append(decorator.decorator)
    for node in walk(test):
        if isinstance(node, cst.Call):
            if _is_patch_call(node):
                patches.append(node)
            elif call_name(node) in _MOCK_FACTORIES:
                mocks += 1
    called = {
        dotted_name(node.func).split(".")[-1] for node in walk(test) if isinstance(node, cst.Call)
    }
    sut = context.module.sut_names
    for patch in patches:
        target = _patch_target(patch)
        parts = target.split(".")
        patches_sut = len(parts) > 1 and parts[0] in context.module.packages
        if patches_sut and parts[-1] in called and any(name in sut for name in parts):
            yield context.finding(
                "AT007", patch, f"patches `{target}`, the code the test calls: it tests the mock"
            )
            return
    total = mocks + len(patches)
    asserts = len(context.checks)
    if total > max(asserts, 2) and (asserts == 0 or total / asserts > 2):
        yield context.finding(
            "AT007", None, f"{total} mocks for {asserts} checks: the test mostly checks mocks"
        )


RULES = (mock_only_assertions, over_mocking)
