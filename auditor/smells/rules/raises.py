"""Rules about expected exceptions: too broad, too much inside, or swallowed."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from auditor.smells.assertions import RAISES_CONTEXTS
from auditor.smells.rules.base import Finding, TestContext
from auditor.smells.source import call_name, code_of, dotted_name, walk

_BROADEST = {"Exception", "BaseException"}
_GENERIC = {
    "ValueError",
    "TypeError",
    "RuntimeError",
    "OSError",
    "IOError",
    "KeyError",
    "IndexError",
    "LookupError",
    "ArithmeticError",
    "AttributeError",
    "AssertionError",
}
_EXPECTS = {"raises", "assertRaises"}


def _expected_types(call: cst.Call) -> list[str]:
    if not call.args:
        return []
    first = call.args[0].value
    if isinstance(first, cst.Tuple):
        return [dotted_name(element.value).split(".")[-1] for element in first.elements]
    return [dotted_name(first).split(".")[-1]]


def _has_match(call: cst.Call) -> bool:
    return any(arg.keyword is not None and arg.keyword.value == "match" for arg in call.args)


def broad_raises(context: TestContext) -> Iterator[Finding]:
    """AT009: raises(Exception), or a generic type with no match=."""
    for node in walk(context.test.node):
        if not isinstance(node, cst.Call) or call_name(node) not in _EXPECTS:
            continue
        types = _expected_types(node)
        shown = code_of(node).strip()
        if any(name in _BROADEST for name in types):
            yield context.finding(
                "AT009", node, f"`{shown}` passes on any error, including a bug's own"
            )
        elif (
            call_name(node) == "raises"
            and types
            and all(name in _GENERIC for name in types)
            and not _has_match(node)
            and not _captured_and_checked(context, node)
        ):
            yield context.finding("AT009", node, f"`{shown}` has no match=: any {types[0]} passes")


def _captured_and_checked(context: TestContext, call: cst.Call) -> bool:
    """`with pytest.raises(E) as info: ...` followed by an assert on `info` is precise."""
    for node in walk(context.test.node):
        if not isinstance(node, cst.With):
            continue
        for item in node.items:
            if item.item is call and item.asname is not None:
                name = dotted_name(item.asname.name)
                return any(
                    isinstance(check.node, cst.Assert)
                    and any(dotted_name(n) == name for n in walk(check.node))
                    for check in context.checks
                )
    return False


def several_statements_in_raises(context: TestContext) -> Iterator[Finding]:
    """AT010: more than one statement inside `with pytest.raises(...)`."""
    for node in walk(context.test.node):
        if not isinstance(node, cst.With):
            continue
        if not any(
            isinstance(item.item, cst.Call) and call_name(item.item) in RAISES_CONTEXTS
            for item in node.items
        ):
            continue
        body = node.body
        count = (
            len(body.body)
            if isinstance(body, cst.SimpleStatementSuite)
            else sum(
                len(s.body) if isinstance(s, cst.SimpleStatementLine) else 1 for s in body.body
            )
        )
        if count > 1:
            yield context.finding(
                "AT010",
                node,
                f"{count} statements inside the raises block: any of them may be the one raising",
            )


def _handler_is_silent(handler: cst.ExceptHandler) -> bool:
    body = handler.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for statement in statements:
        smalls = statement.body if hasattr(statement, "body") else []
        if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return False
        for small in smalls:
            is_ellipsis = isinstance(small, cst.Expr) and isinstance(small.value, cst.Ellipsis)
            if not isinstance(small, (cst.Pass, cst.Continue)) and not is_ellipsis:
                return False
    return True


def _fails_when_nothing_raised(block: cst.CSTNode) -> bool:
    for node in walk(block):
        if isinstance(node, cst.Raise):
            return True
        if isinstance(node, cst.Call) and call_name(node) in ("fail", "skip"):
            return True
        if isinstance(node, cst.Assert) and dotted_name(node.test) in ("False",):
            return True
    return False


def _expects_a_raise(context: TestContext, item: cst.BaseExpression) -> bool:
    """`pytest.raises(...)`, `self.assertRaises(...)`, or a name the module binds to one."""
    if isinstance(item, cst.Call):
        return call_name(item) in RAISES_CONTEXTS
    if isinstance(item, cst.Name):
        return context.module.bound_calls.get(item.value) in RAISES_CONTEXTS
    return False


def _tries_inside_raises(context: TestContext) -> set[cst.Try]:
    """`try` blocks inside a `with` that fails when nothing is raised."""
    inside: set[cst.Try] = set()
    for node in walk(context.test.node):
        if isinstance(node, cst.With) and any(
            _expects_a_raise(context, item.item) for item in node.items
        ):
            inside |= {n for n in walk(node.body) if isinstance(n, cst.Try)}
    return inside


def swallowed_exception(context: TestContext) -> Iterator[Finding]:
    """AT011: a handler that passes, or checks only in the handler with no fail in the try
    (nor a `with raises(...)` around it)."""
    expecting = _tries_inside_raises(context)
    for node in walk(context.test.node):
        if not isinstance(node, cst.Try):
            continue
        for handler in node.handlers:
            caught = code_of(handler.type).strip() if handler.type else "everything"
            if _handler_is_silent(handler):
                yield context.finding(
                    "AT011", handler, f"`except {caught}` swallows the error and the test passes"
                )
            elif any(isinstance(n, cst.Assert) for n in walk(handler)) and not (
                node in expecting
                or _fails_when_nothing_raised(node.body)
                or (node.orelse is not None and _fails_when_nothing_raised(node.orelse))
            ):
                yield context.finding(
                    "AT011",
                    handler,
                    f"assertions only in `except {caught}`: if nothing is raised, the test "
                    "passes unchecked",
                )


RULES = (broad_raises, several_statements_in_raises, swallowed_exception)
