"""What counts as checking something (the "assertion-like" term of SMELLS.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from auditor.smells.source import (
    TestFunction,
    TestModule,
    body_statements,
    call_name,
    dotted_name,
    parameter_names,
    walk,
)

RAISES_CONTEXTS = {
    "raises",
    "warns",
    "deprecated_call",
    "assertRaises",
    "assertRaisesRegex",
    "assertWarns",
    "assertWarnsRegex",
}
MOCK_ATTRIBUTES = {
    "called",
    "call_count",
    "call_args",
    "call_args_list",
    "method_calls",
    "mock_calls",
    "await_count",
    "await_args",
    "awaited",
}
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_RUNNERS_THAT_CHECK = {"check_call", "check_output"}
"""subprocess's: they raise when the command fails."""
_CHECKER_WORDS = {"check", "verify", "expect", "ensure"}
_PREDICATE_PREFIXES = (
    "is",
    "has",
    "can",
    "should",
    "contains",
    "exists",
    "match",
    "equal",
    "startswith",
    "endswith",
    "all",
    "any",
    "valid",
    "allow",
    "supports",
    "needs",
    "was",
    "were",
    "did",
)


@dataclass(frozen=True)
class Check:
    """One assertion-like construct found in a test."""

    kind: str
    """'assert', 'raises', 'fail', 'call', 'helper', 'raise' or 'fixture'."""
    node: cst.CSTNode


def _first_word(name: str) -> str:
    """`assert` for `assertEqual`, `assert_called_once` and `assertThat`; `isbn` for
    `ISBNChecker`."""
    words = _WORD.findall(name)
    return words[0].lower() if words else ""


def _is_checking_call(call: cst.Call, extra_names: set[str]) -> bool:
    """Configured helpers and real assertion APIs: `assert*` methods and functions
    (unittest, mock, numpy.testing, assertpy), pytest-check's `check.*`, `pytest.fail`,
    subprocess's checking runners. A name that merely contains "check" (`ISBNChecker`,
    `validator.check(...)`) is code under test, not a check."""
    name = call_name(call)
    full = dotted_name(call.func)
    if name in extra_names or full in extra_names:
        return True
    if full in ("pytest.fail", "fail") or full.startswith("check."):
        return True
    if name == "run" and any(
        arg.keyword and arg.keyword.value == "check" and dotted_name(arg.value) == "True"
        for arg in call.args
    ):
        return True
    if name in _RUNNERS_THAT_CHECK:
        return True
    return _first_word(name) == "assert"


def _raises_item(item: cst.WithItem) -> bool:
    target = item.item
    return isinstance(target, cst.Call) and call_name(target) in RAISES_CONTEXTS


class CheckFinder:
    """Finds checks in tests, following local helpers and yield-fixture teardowns."""

    def __init__(self, module: TestModule, extra_names: set[str]) -> None:
        self.module = module
        self.extra_names = set(extra_names)
        self._checking_methods: set[str] = set()
        self._checking_helpers = self._helpers_that_check()

    def _direct_checks(
        self, node: cst.CSTNode, helpers: set[str], into_functions: bool = False
    ) -> Iterator[Check]:
        for child in walk(node, into_functions):
            if isinstance(child, cst.Assert):
                yield Check("assert", child)
            elif isinstance(child, cst.Raise):
                yield Check("raise", child)
            elif isinstance(child, cst.With) and any(_raises_item(i) for i in child.items):
                yield Check("raises", child)
            elif isinstance(child, cst.Call):
                if call_name(child) in RAISES_CONTEXTS and len(child.args) > 1:
                    yield Check("raises", child)
                elif _is_checking_call(child, self.extra_names) or self._imported_checker(child):
                    yield Check("call", child)
                elif self._calls_checking_helper(child, helpers):
                    yield Check("helper", child)
            elif isinstance(child, cst.Arg) and dotted_name(child.value) in helpers:
                yield Check("helper", child)  # a checking helper handed over as a callback

    def _imported_checker(self, call: cst.Call) -> bool:
        """`check_totals(...)`, `verify(...)`, `expect(...)`: a function the file imports
        from elsewhere than the code under test (a shared test helper, approvaltests,
        Playwright). The file's own helpers are judged by their bodies instead."""
        if not isinstance(call.func, cst.Name):
            return False
        name = call.func.value
        if name in self.module.helpers or name in self.module.sut_names:
            return False
        return _first_word(name) in _CHECKER_WORDS

    def _calls_checking_helper(self, call: cst.Call, helpers: set[str]) -> bool:
        if isinstance(call.func, cst.Name):
            return call.func.value in helpers
        return _self_method(call) in self._checking_methods

    def _helpers_that_check(self) -> set[str]:
        """Local helpers whose body checks something, followed transitively."""
        checking: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, function in self.module.helpers.items():
                if name not in checking and any(self._direct_checks(function, checking)):
                    checking.add(name)
                    changed = True
            for name, method in self.module.methods.items():
                if name not in self._checking_methods and any(
                    self._direct_checks(method, checking)
                ):
                    self._checking_methods.add(name)
                    changed = True
        return checking

    def checks(self, test: TestFunction) -> list[Check]:
        """The test's checks, those in the functions and lambdas it defines included: a
        callback it hands to the code under test checks what the code passes it."""
        found = list(self._direct_checks(test.node, self._checking_helpers, True))
        for param in parameter_names(test.node):
            fixture = self.module.fixtures.get(param)
            if fixture is not None and self._teardown_checks(fixture):
                found.append(Check("fixture", fixture))
        return found

    def _teardown_checks(self, fixture: cst.FunctionDef) -> bool:
        statements = body_statements(fixture)
        for index, statement in enumerate(statements):
            if any(isinstance(node, cst.Yield) for node in walk(statement)):
                after = statements[index + 1 :]
                return any(
                    check for later in after for check in self._direct_checks(later, set())
                ) or any(isinstance(node, cst.Assert) for later in after for node in walk(later))
        return False


def _self_method(call: cst.Call) -> str:
    """`name` for a call `self.name(...)` (or `cls.name(...)`), else ''."""
    func = call.func
    on_self = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
    if on_self and func.value.value in ("self", "cls"):
        return func.attr.value
    return ""


def _strip_not(expression: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expression, cst.UnaryOperation) and isinstance(expression.operator, cst.Not):
        expression = expression.expression
    return expression


def _is_weak_part(expression: cst.BaseExpression) -> bool:
    expression = _strip_not(expression)
    if isinstance(expression, (cst.Name, cst.Attribute, cst.Subscript)):
        return True  # bare truthiness
    if isinstance(expression, cst.Call):
        name = dotted_name(expression.func)
        if name in ("isinstance", "hasattr", "callable", "bool", "len", "issubclass"):
            return True
        last = name.split(".")[-1].lower()
        return bool(last) and not last.startswith(_PREDICATE_PREFIXES)
    if isinstance(expression, cst.Comparison) and len(expression.comparisons) == 1:
        target = expression.comparisons[0]
        operator = target.operator
        right = target.comparator
        if isinstance(operator, (cst.IsNot, cst.Is)) and dotted_name(right) == "None":
            return isinstance(operator, cst.IsNot)
        left = expression.left
        is_type_call = isinstance(left, cst.Call) and dotted_name(left.func) == "type"
        if is_type_call and isinstance(operator, (cst.Is, cst.Equal)):
            return True
        is_len = isinstance(left, cst.Call) and dotted_name(left.func) == "len"
        if is_len and isinstance(right, cst.Integer):
            value = int(right.value)
            return (
                (isinstance(operator, cst.GreaterThan) and value == 0)
                or (isinstance(operator, cst.GreaterThanEqual) and value == 1)
                or (isinstance(operator, cst.NotEqual) and value == 0)
            )
    return False


def is_weak_assert(node: cst.Assert) -> bool:
    """`is not None`, isinstance, truthiness, `len(x) > 0`, hasattr, callable, type(x) is."""
    parts: list[cst.BaseExpression] = []
    pending: list[cst.BaseExpression] = [node.test]
    while pending:
        expression = pending.pop()
        if isinstance(expression, cst.BooleanOperation) and isinstance(
            expression.operator, cst.And
        ):
            pending += [expression.left, expression.right]
        else:
            parts.append(expression)
    return all(_is_weak_part(part) for part in parts)


def reads_mock(node: cst.CSTNode) -> bool:
    """Whether a check is about a mock: `m.assert_called_*()`, `m.call_count`, `m.called`."""
    if isinstance(node, cst.Call) and call_name(node).startswith(("assert_", "assert_has")):
        return isinstance(node.func, cst.Attribute)
    if isinstance(node, cst.Assert):
        attributes = [child.attr.value for child in walk(node) if isinstance(child, cst.Attribute)]
        return any(attribute in MOCK_ATTRIBUTES for attribute in attributes)
    return False
