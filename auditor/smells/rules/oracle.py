"""Rules about what a test checks: nothing, something always true, or too little."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

import libcst as cst

from auditor.smells.assertions import is_weak_assert, reads_mock
from auditor.smells.rules.base import Finding, TestContext
from auditor.smells.source import (
    body_statements,
    call_name,
    code_of,
    decorator_names,
    is_docstring,
    normalized,
    parameter_names,
    walk,
)

_UNCALLED_MOCK_CHECKS = {
    "assert_called",
    "assert_called_once",
    "assert_called_with",
    "assert_called_once_with",
    "assert_not_called",
    "assert_any_call",
    "assert_has_calls",
    "assert_awaited",
    "assert_awaited_once",
    "assert_awaited_with",
    "assert_awaited_once_with",
    "assert_not_awaited",
}
_MISSPELLED_MOCK_CHECKS = {
    "called_once",
    "called_with",
    "called_once_with",
    "not_called",
    "has_calls",
    "assert_called_twice",
    "assert_not_called_with",
    "assert_once_called",
}
_DETERMINISM_WORDS = ("determinis", "stable", "idempot", "repeat", "consistent", "pure", "cache")
_EQUALITY_WORDS = re.compile(r"(?:^|[^a-z])(?:eq|equal\w*)(?:$|[^a-z])")


def _is_skipped(context: TestContext) -> bool:
    return any(
        name.endswith(("mark.skip", "mark.xfail", "skip", "skipIf", "expectedFailure"))
        for name in decorator_names(context.test.node)
    )


def empty_test(context: TestContext) -> Iterator[Finding]:
    """AT002: the body is only pass, ... or a docstring."""
    statements = [s for s in body_statements(context.test.node) if not is_docstring(s)]
    if _is_skipped(context):
        return
    for statement in statements:
        if not isinstance(statement, cst.SimpleStatementLine):
            return
        for small in statement.body:
            is_ellipsis = isinstance(small, cst.Expr) and isinstance(small.value, cst.Ellipsis)
            if not (isinstance(small, cst.Pass) or is_ellipsis):
                return
    yield context.finding("AT002", None, "test body is empty; it passes without running code")


def assertion_free(context: TestContext) -> Iterator[Finding]:
    """AT001: nothing checks anything (helpers and yield-fixture teardowns included)."""
    if context.has("AT002") or context.checks:
        return
    if any(name.split(".")[-1] == "given" for name in decorator_names(context.test.node)):
        return  # a Hypothesis no-crash property: "does not raise" is its contract
    if "benchmark" in parameter_names(context.test.node):
        yield context.finding(
            "AT021", None, "benchmark, not an oracle test: it times the code, checks no result"
        )
        return
    yield context.finding(
        "AT001", None, "test asserts nothing: it fails only if the code raises, whatever the result"
    )


def _constant(expression: cst.BaseExpression) -> tuple[bool, object]:
    """(True, value) when the expression is a literal constant, else (False, None)."""
    literal_types = (
        cst.Integer,
        cst.Float,
        cst.Imaginary,
        cst.SimpleString,
        cst.ConcatenatedString,
    )
    is_name_constant = isinstance(expression, cst.Name) and expression.value in (
        "True",
        "False",
        "None",
    )
    if not (isinstance(expression, literal_types) or is_name_constant):
        return False, None
    try:
        return True, ast.literal_eval(code_of(expression).strip())
    except (ValueError, SyntaxError):
        return False, None


def _truthy_literal(expression: cst.BaseExpression) -> bool:
    """Always true: a truthy constant or a non-empty tuple/list/set/dict display.

    `assert False` and `assert 0` are left alone: they mark unreachable code."""
    if isinstance(expression, (cst.Tuple, cst.List, cst.Set, cst.Dict)):
        return len(expression.elements) > 0
    is_constant, value = _constant(expression)
    return is_constant and bool(value)


def _literal(expression: cst.BaseExpression) -> bool:
    return _constant(expression)[0]


def tautological_assert(context: TestContext) -> Iterator[Finding]:
    """AT003: `assert True`, `assert "msg"`, `assert (x, "msg")`, `assert 1 == 1`."""
    for check in context.checks:
        if check.kind != "assert":
            continue
        test = check.node.test
        if _truthy_literal(test):
            yield context.finding(
                "AT003", check.node, f"`{code_of(check.node).strip()}` can never fail"
            )
        elif (
            isinstance(test, cst.Comparison)
            and _literal(test.left)
            and all(_literal(target.comparator) for target in test.comparisons)
        ):
            yield context.finding(
                "AT003", check.node, f"`{code_of(check.node).strip()}` compares two constants"
            )


def self_comparison(context: TestContext) -> Iterator[Finding]:
    """AT004: both sides are the same expression (`x == x`); `!=` is left for NaN checks,
    and `==` in a test named for equality, where it is the `__eq__` under test."""
    name = context.test.qualname.lower()
    if any(word in name for word in _DETERMINISM_WORDS):
        return
    equality_test = _EQUALITY_WORDS.search(name.replace("_", " ")) is not None
    for check in context.checks:
        if check.kind != "assert" or not isinstance(check.node.test, cst.Comparison):
            continue
        comparison = check.node.test
        if len(comparison.comparisons) != 1:
            continue
        target = comparison.comparisons[0]
        if isinstance(target.operator, (cst.NotEqual, cst.IsNot)):
            continue
        if equality_test and isinstance(target.operator, cst.Equal):
            continue
        if _literal(comparison.left):
            continue  # constant vs constant is AT003's finding
        if normalized(comparison.left) == normalized(target.comparator):
            yield context.finding(
                "AT004",
                check.node,
                f"`{code_of(check.node).strip()}` compares an expression with itself",
            )


def weak_oracle(context: TestContext) -> Iterator[Finding]:
    """AT005: every check is an existence / type / truthiness check."""
    checks = context.checks
    asserts = [check for check in checks if check.kind == "assert"]
    if not asserts or len(asserts) != len(checks):
        return
    if any(reads_mock(check.node) for check in asserts):
        return
    if all(is_weak_assert(check.node) for check in asserts):
        shown = code_of(asserts[0].node).strip()
        yield context.finding(
            "AT005",
            asserts[0].node,
            f"only weak checks such as `{shown}`: a wrong value of the right type passes",
        )


def uncalled_mock_assertion(context: TestContext) -> Iterator[Finding]:
    """AT008: `m.assert_called_once` without (), or a misspelled check that always passes."""
    for node in walk(context.test.node):
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Attribute):
            attribute = node.value.attr.value
            if attribute in _UNCALLED_MOCK_CHECKS:
                yield context.finding(
                    "AT008", node, f"`{attribute}` is never called: it checks nothing"
                )
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            name = call_name(node)
            if name in _MISSPELLED_MOCK_CHECKS:
                yield context.finding(
                    "AT008", node, f"`{name}()` is not a mock assertion; on a Mock it always passes"
                )


def returns_instead_of_asserting(context: TestContext) -> Iterator[Finding]:
    """AT012: `return <expr>` in a test; pytest ignores the value."""
    for node in walk(context.test.node):
        if isinstance(node, cst.Return) and node.value is not None:
            if isinstance(node.value, cst.Name) and node.value.value == "None":
                continue
            yield context.finding(
                "AT012", node, f"`{code_of(node).strip()}`: the returned value is never checked"
            )


def duplicate_assert(context: TestContext) -> Iterator[Finding]:
    """AT016: the same assert twice in a row, with only asserts between them."""
    statements = body_statements(context.test.node)
    seen: dict[str, cst.Assert] = {}
    for statement in statements:
        smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else []
        if not smalls or not all(isinstance(small, cst.Assert) for small in smalls):
            seen = {}
            continue
        for small in smalls:
            key = normalized(small)
            if key in seen:
                yield context.finding(
                    "AT016", small, f"`{code_of(small).strip()}` is asserted twice"
                )
            seen[key] = small


RULES = (
    empty_test,
    assertion_free,
    tautological_assert,
    self_comparison,
    weak_oracle,
    uncalled_mock_assertion,
    returns_instead_of_asserting,
    duplicate_assert,
)
