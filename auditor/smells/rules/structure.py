"""Rules about a test's shape: ignored results, sleeping, branching, copies, side effects."""

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
    is_docstring,
    normalized,
    walk,
)

_WRITE_CALLS = {
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.chmod",
    "os.chown",
    "os.rename",
    "os.replace",
    "os.makedirs",
    "os.mkdir",
    "shutil.rmtree",
    "shutil.copy",
    "shutil.copyfile",
    "shutil.move",
    "os.symlink",
}
_PATH_WRITE_METHODS = {
    "write_text",
    "write_bytes",
    "unlink",
    "chmod",
    "mkdir",
    "rmdir",
    "touch",
    "rename",
    "replace",
}
_TMP_WORDS = ("tmp", "temp")
_NONDETERMINISTIC = {
    "datetime.now",
    "datetime.utcnow",
    "datetime.today",
    "date.today",
    "time.time",
    "time.monotonic",
    "uuid.uuid4",
    "uuid4",
    "uuid.uuid1",
    "random.random",
    "random.randint",
    "random.choice",
    "random.shuffle",
    "random.uniform",
    "random.sample",
    "socket.socket",
    "socket.create_connection",
}


def _sut_root(call: cst.Call) -> str:
    name = dotted_name(call.func)
    return name.split(".")[0] if name else ""


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node, into_functions=True) if isinstance(n, cst.Name)}


def ignored_result(context: TestContext) -> Iterator[Finding]:
    """AT013: a call to the code under test whose value nobody reads.

    Side effects are fine: if a later statement reads one of the call's arguments or the
    object it was called on, the call is not reported."""
    if context.has("AT001", "AT002"):
        return
    sut = context.module.sut_names
    statements = body_statements(context.test.node)
    for index, statement in enumerate(statements):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            call, bound = None, None
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                call = small.value
            elif (
                isinstance(small, cst.Assign)
                and isinstance(small.value, cst.Call)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                call, bound = small.value, small.targets[0].target.value
            if call is None or _sut_root(call) not in sut:
                continue
            later = set().union(*(_names_in(s) for s in statements[index + 1 :]))
            if bound is not None and bound in later:
                continue
            touched = _names_in(call) - {_sut_root(call)} - sut
            if touched & later:
                continue
            yield context.finding(
                "AT013", small, f"the result of `{code_of(call).strip()}` is never checked"
            )


def sleepy_test(context: TestContext) -> Iterator[Finding]:
    """AT014: sleeping for a fixed time (timeout tests excepted)."""
    if "timeout" in context.test.qualname.lower():
        return
    for node in walk(context.test.node):
        if (
            isinstance(node, cst.Call)
            and call_name(node) == "sleep"
            and node.args
            and isinstance(node.args[0].value, (cst.Integer, cst.Float))
            and float(node.args[0].value.value) > 0
        ):
            yield context.finding(
                "AT014", node, f"`{code_of(node).strip()}` makes the test slow and timing-dependent"
            )


_BRANCHES = (
    cst.If,
    cst.For,
    cst.While,
    cst.Match,
    cst.ListComp,
    cst.SetComp,
    cst.GeneratorExp,
    cst.DictComp,
)


def _loop_of_subtests(node: cst.CSTNode) -> bool:
    """`for case in cases: with self.subTest(case)` (or pytest-subtests' `subtests.test`):
    each case is reported on its own, the unittest way of parametrizing."""
    return isinstance(node, (cst.For, cst.While)) and any(
        isinstance(item.item, cst.Call)
        and call_name(item.item) in ("subTest", "test")
        and isinstance(item.item.func, cst.Attribute)
        for inner in walk(node)
        if isinstance(inner, cst.With)
        for item in inner.items
    )


def conditional_logic(context: TestContext) -> Iterator[Finding]:
    """AT015: an assertion inside if / for / while / match or a comprehension."""
    for node in walk(context.test.node):
        if not isinstance(node, _BRANCHES) or _loop_of_subtests(node):
            continue
        inner_checks = [
            check for check in context.checks if any(n is check.node for n in walk(node))
        ]
        if inner_checks:
            kind = type(node).__name__.lower().replace("comp", " comprehension")
            yield context.finding(
                "AT015", node, f"assertion inside a `{kind}`: which case runs depends on data"
            )
            return


def skip_without_reason(context: TestContext) -> Iterator[Finding]:
    """AT018: `@pytest.mark.skip` with no reason, or a bare unconditional `pytest.skip()`."""
    for decorator in context.test.node.decorators:
        target = decorator.decorator
        name = dotted_name(target.func if isinstance(target, cst.Call) else target)
        if not name.endswith("mark.skip"):
            continue
        if not isinstance(target, cst.Call) or not target.args:
            yield context.finding("AT018", decorator, "skipped with no reason given")
    for statement in body_statements(context.test.node):
        if is_docstring(statement):
            continue
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (
                    isinstance(small, cst.Expr)
                    and isinstance(small.value, cst.Call)
                    and dotted_name(small.value.func) == "pytest.skip"
                    and not small.value.args
                ):
                    yield context.finding("AT018", small, "skipped with no reason given")
        break


def non_determinism(context: TestContext) -> Iterator[Finding]:
    """AT019: the clock, unseeded randomness, uuid4 or real sockets inside a test."""
    decorators = decorator_names(context.test.node)
    if any("freeze" in name for name in decorators):
        return
    for node in walk(context.test.node):
        if isinstance(node, cst.Call) and dotted_name(node.func) in _NONDETERMINISTIC:
            yield context.finding(
                "AT019", node, f"`{dotted_name(node.func)}()` differs from run to run"
            )
            return


def _literal_path(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.Call) and dotted_name(node.func).split(".")[-1] == "Path":
        return _literal_path(node.args[0].value) if node.args else None
    return None


def _outside_tmp(path: str) -> bool:
    lowered = path.lower()
    return not any(word in lowered for word in _TMP_WORDS)


def _open_mode(call: cst.Call) -> str:
    for position, arg in enumerate(call.args):
        is_mode = (arg.keyword is not None and arg.keyword.value == "mode") or (
            arg.keyword is None and position == 1
        )
        if is_mode and isinstance(arg.value, cst.SimpleString):
            value = arg.value.evaluated_value
            return value if isinstance(value, str) else ""
    return "r"


def writes_outside_tmp(context: TestContext) -> Iterator[Finding]:
    """AT020: a literal path outside tmp opened for writing, chmod-ed, removed, renamed."""
    for node in walk(context.test.node):
        if not isinstance(node, cst.Call) or not node.args:
            continue
        name = dotted_name(node.func)
        target = None
        if (name == "open" and any(c in _open_mode(node) for c in "wax+")) or name in _WRITE_CALLS:
            target = _literal_path(node.args[0].value)
        elif (
            isinstance(node.func, cst.Attribute)
            and call_name(node) in _PATH_WRITE_METHODS
            and isinstance(node.func.value, cst.Call)  # Path("..."), never a str's .replace()
        ):
            target = _literal_path(node.func.value)
        if target is not None and _outside_tmp(target):
            yield context.finding(
                "AT020", node, f"writes to `{target}`, outside the test's temporary folder"
            )


def _body_fingerprint(test: cst.FunctionDef) -> str:
    statements = [s for s in body_statements(test) if not is_docstring(s)]
    return "\n".join(normalized(s) for s in statements)


def duplicate_tests(module: TestModule) -> Iterator[Finding]:
    """AT017: a name defined twice, identical parametrize rows, or identical bodies."""
    for first, second in module.duplicates:
        yield Finding(
            "AT017",
            second.line,
            f"`{second.qualname}` is defined again on line {second.line}: the one on "
            f"line {first.line} never runs",
            first.qualname,
        )
    seen: dict[str, str] = {}
    for test in module.tests:
        for decorator in test.node.decorators:
            target = decorator.decorator
            if not (isinstance(target, cst.Call) and call_name(target) == "parametrize"):
                continue
            if len(target.args) < 2 or not isinstance(target.args[1].value, (cst.List, cst.Tuple)):
                continue
            rows: set[str] = set()
            for element in target.args[1].value.elements:
                key = normalized(element.value)
                if key in rows:
                    yield Finding(
                        "AT017",
                        module.line_of(element),
                        f"parametrize row `{code_of(element.value).strip()}` appears twice",
                        test.qualname,
                    )
                rows.add(key)
        statements = [s for s in body_statements(test.node) if not is_docstring(s)]
        if not statements:
            continue
        fingerprint = _body_fingerprint(test.node)
        params = ",".join(p.name.value for p in test.node.params.params)
        key = f"{params}\n{''.join(normalized(d) for d in test.node.decorators)}\n{fingerprint}"
        if key in seen:
            yield Finding(
                "AT017",
                test.line,
                f"`{test.qualname}` has the same body as `{seen[key]}`",
                test.qualname,
            )
        else:
            seen[key] = test.qualname


RULES = (
    ignored_result,
    sleepy_test,
    conditional_logic,
    skip_without_reason,
    non_determinism,
    writes_outside_tmp,
)
MODULE_RULES = (duplicate_tests,)
