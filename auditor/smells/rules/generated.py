"""Shapes the field keeps finding in machine-written tests: results printed instead of
checked, an expected value computed by the code under test itself, `assertTrue(a == b)`,
and autouse fixtures that do the tests' checking out of sight."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from auditor.smells.rules.base import Finding, TestContext
from auditor.smells.source import (
    TestModule,
    body_statements,
    call_name,
    code_of,
    decorator_names,
    dotted_name,
    normalized,
    walk,
)

_PRINTERS = {"print", "pprint", "pprint.pprint", "logging.info", "logging.debug", "logger.info"}
_SUBOPTIMAL = {
    cst.Equal: "assertEqual",
    cst.NotEqual: "assertNotEqual",
    cst.In: "assertIn",
    cst.NotIn: "assertNotIn",
    cst.Is: "assertIs",
    cst.IsNot: "assertIsNot",
    cst.LessThan: "assertLess",
    cst.GreaterThan: "assertGreater",
}


def print_as_oracle(context: TestContext) -> Iterator[Finding]:
    """AT023: nothing is checked and a result is printed: a human was meant to read it."""
    if context.checks or context.has("AT002"):
        return
    for node in walk(context.test.node):
        if isinstance(node, cst.Call) and call_name(node) in _PRINTERS and node.args:
            yield context.finding(
                "AT023",
                node,
                f"`{code_of(node).strip()}` shows a result that nothing checks",
            )
            return


def _calls_code_under_test(node: cst.CSTNode, sut: set[str]) -> bool:
    return any(
        isinstance(child, cst.Call) and dotted_name(child.func).split(".")[0] in sut
        for child in (node, *walk(node))
    )


def _assigned_from(context: TestContext) -> dict[str, cst.BaseExpression]:
    """Local names and the expression each was last assigned from in the test."""
    values: dict[str, cst.BaseExpression] = {}
    for statement in body_statements(context.test.node):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name):
                    values[target.value] = small.value
    return values


def mirror_oracle(context: TestContext) -> Iterator[Finding]:
    """AT024: `assert f(x) == g(y)` where both sides call the code under test: the
    expected value comes from the code being checked, so a bug shared by both passes."""
    sut = context.module.sut_names
    values = _assigned_from(context)

    def computed_by_code(side: cst.BaseExpression) -> bool:
        if isinstance(side, cst.Name) and side.value in values:
            side = values[side.value]
        return _calls_code_under_test(side, sut)

    for node in walk(context.test.node):
        if not isinstance(node, cst.Assert) or not isinstance(node.test, cst.Comparison):
            continue
        comparison = node.test
        if len(comparison.comparisons) != 1:
            continue
        target = comparison.comparisons[0]
        if not isinstance(target.operator, cst.Equal):
            continue
        if normalized(comparison.left) == normalized(target.comparator):
            continue  # the very same expression: a self-comparison (AT004) or `__eq__`'s test
        if computed_by_code(comparison.left) and computed_by_code(target.comparator):
            yield context.finding(
                "AT024",
                node,
                f"`{code_of(node).strip()}` takes its expected value from the code under test",
            )


def suboptimal_assert(context: TestContext) -> Iterator[Finding]:
    """AT025: `self.assertTrue(a == b)`: on failure it says only "False is not true"."""
    for node in walk(context.test.node):
        if not isinstance(node, cst.Call) or not node.args:
            continue
        method = call_name(node).split(".")[-1]
        if method not in ("assertTrue", "assertFalse"):
            continue
        argument = node.args[0].value
        if not isinstance(argument, cst.Comparison) or len(argument.comparisons) != 1:
            continue
        better = _SUBOPTIMAL.get(type(argument.comparisons[0].operator))
        if better is None:
            continue
        if method == "assertFalse":
            better = f"the opposite of {better}"
        yield context.finding(
            "AT025",
            node,
            f"`{code_of(node).strip()}` hides both values on failure; use {better}",
        )


def autouse_fixture_checks(module: TestModule) -> Iterator[Finding]:
    """AT026: an autouse fixture of the file (not a conftest's) that asserts: every test
    passes or fails on checks no test shows."""
    for name, fixture in module.fixtures.items():
        autouse = any(
            name.split(".")[-1] == "fixture" for name in decorator_names(fixture)
        ) and any(
            isinstance(decorator.decorator, cst.Call)
            and any(
                arg.keyword is not None
                and arg.keyword.value == "autouse"
                and isinstance(arg.value, cst.Name)
                and arg.value.value == "True"
                for arg in decorator.decorator.args
            )
            for decorator in fixture.decorators
        )
        if not autouse:
            continue
        line = module.line_of(fixture)
        if line and any(isinstance(node, cst.Assert) for node in walk(fixture)):
            yield Finding(
                "AT026",
                line,
                f"autouse fixture `{name}` asserts: every test checks what it checks, unseen",
                "",
            )


RULES = (print_as_oracle, mirror_oracle, suboptimal_assert)
MODULE_RULES = (autouse_fixture_checks,)
