"""A parsed test module: its tests, helpers, fixtures and the names it imports.

Rules see tests through this model rather than raw syntax trees, so each rule is a
few lines about one smell.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

_EMPTY_MODULE = cst.Module(body=[])


def code_of(node: cst.CSTNode) -> str:
    return _EMPTY_MODULE.code_for_node(node)


def normalized(node: cst.CSTNode) -> str:
    """A formatting-free fingerprint of a node: the dump of Python's own AST."""
    code = code_of(node).strip()
    try:
        if isinstance(node, cst.BaseExpression):
            return ast.dump(ast.parse(f"({code})", mode="eval"))
        return ast.dump(ast.parse(code))
    except SyntaxError:
        return code


def dotted_name(node: cst.CSTNode) -> str:
    """`a.b.c` for Name/Attribute chains, '' for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base else ""
    return ""


def call_name(call: cst.Call) -> str:
    """The last name of the called thing: `assert_called_once` for `m.assert_called_once()`."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


@functools.cache
def _children(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """libcst computes `children` by rebuilding the node."""
    return tuple(node.children)


@functools.cache
def walk(node: cst.CSTNode, into_functions: bool = False) -> tuple[cst.CSTNode, ...]:
    """Every node below `node`, depth first, not entering nested defs unless asked.

    Cached until `forget_walks`: every rule walks every test. Nodes hash by identity,
    and a cached node is kept alive, so an id is never reused while its entry lives."""
    below: list[cst.CSTNode] = []
    stack = [iter(_children(node))]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        below.append(child)
        if into_functions or not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.append(iter(_children(child)))
    return tuple(below)


def forget_walks() -> None:
    """Drop the cached walks once a module is analyzed: they keep its whole tree alive."""
    walk.cache_clear()
    _children.cache_clear()


def body_statements(function: cst.FunctionDef) -> list[cst.BaseStatement]:
    body = function.body
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    return list(body.body)


def is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def decorator_names(function: cst.FunctionDef) -> list[str]:
    names = []
    for decorator in function.decorators:
        target = decorator.decorator
        if isinstance(target, cst.Call):
            target = target.func
        names.append(dotted_name(target))
    return names


def is_fixture(function: cst.FunctionDef) -> bool:
    return any(name.split(".")[-1] == "fixture" for name in decorator_names(function))


def parameter_names(function: cst.FunctionDef) -> list[str]:
    params = function.params
    return [param.name.value for param in (*params.posonly_params, *params.params)]


@dataclass
class TestFunction:
    qualname: str
    node: cst.FunctionDef
    line: int
    class_name: str = ""


@dataclass
class TestModule:
    path: str
    """Relative path used in findings."""
    source_lines: list[str]
    positions: dict[cst.CSTNode, object]
    tests: list[TestFunction]
    helpers: dict[str, cst.FunctionDef]
    """Module-level non-test functions (and conftest ones), by name."""
    methods: dict[str, cst.FunctionDef]
    """Non-test methods of the file's classes, by name: helpers a test calls on `self`."""
    fixtures: dict[str, cst.FunctionDef]
    sut_names: set[str]
    """Names bound by imports from the code under test."""
    packages: set[str]
    """Top-level names of the code under test."""
    duplicates: list[tuple[TestFunction, TestFunction]] = field(default_factory=list)
    """Tests whose name is defined again later in the same scope (first, second)."""
    bound_calls: dict[str, str] = field(default_factory=dict)
    """Module-level names bound to a call, with the name called: `SE = raises(Error)`
    gives {"SE": "raises"}."""

    def line_of(self, node: cst.CSTNode) -> int:
        position = self.positions.get(node)
        return position.start.line if position is not None else 0


_NOT_CALLABLE = {"property", "cached_property", "setter", "getter", "deleter"}
"""Decorators that make a `def` something pytest does not collect: it collects only what
is callable."""


def _collected_by_pytest(function: cst.FunctionDef) -> bool:
    return not any(name.split(".")[-1] in _NOT_CALLABLE for name in decorator_names(function))


def _is_test_class(node: cst.ClassDef) -> bool:
    bases = [dotted_name(arg.value) for arg in node.bases]
    if any(base.endswith("TestCase") for base in bases):
        return True
    if not node.name.value.startswith("Test"):
        return False
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    return not any(
        isinstance(item, cst.FunctionDef) and item.name.value == "__init__" for item in body
    )


def _sut_imports(module: cst.Module, packages: set[str]) -> set[str]:
    names: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and small.module is not None:
                top = dotted_name(small.module).split(".")[0]
                if small.relative or top not in packages:
                    continue
                if isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    bound = alias.asname.name if alias.asname else alias.name
                    names.add(dotted_name(bound).split(".")[0])
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted_name(alias.name)
                    if full.split(".")[0] not in packages:
                        continue
                    bound = alias.asname.name if alias.asname else alias.name
                    names.add(dotted_name(bound).split(".")[0])
    return names


def parse_test_module(
    path: str,
    source: bytes,
    packages: set[str],
    conftest_functions: dict[str, cst.FunctionDef],
) -> TestModule:
    """Parse a test file; raises libcst.ParserSyntaxError on invalid code."""
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = dict(wrapper.resolve(PositionProvider))
    helpers = {name: func for name, func in conftest_functions.items() if not is_fixture(func)}
    fixtures = {name: func for name, func in conftest_functions.items() if is_fixture(func)}
    tests: list[TestFunction] = []
    duplicates: list[tuple[TestFunction, TestFunction]] = []

    def add_tests(body: list[cst.BaseStatement], class_name: str) -> None:
        seen: dict[str, TestFunction] = {}
        for statement in body:
            if not isinstance(statement, cst.FunctionDef):
                continue
            name = statement.name.value
            if is_fixture(statement):
                fixtures[name] = statement
                continue
            if not name.startswith("test"):
                if not class_name:
                    helpers[name] = statement
                continue
            if not _collected_by_pytest(statement):
                continue
            qualname = f"{class_name}.{name}" if class_name else name
            test = TestFunction(qualname, statement, positions[statement].start.line, class_name)
            if name in seen:
                duplicates.append((seen[name], test))
            seen[name] = test
            tests.append(test)

    add_tests(list(module.body), "")
    methods: dict[str, cst.FunctionDef] = {}
    for statement in module.body:
        if not isinstance(statement, cst.ClassDef):
            continue
        body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else []
        for member in body:
            is_helper = isinstance(member, cst.FunctionDef) and not is_fixture(member)
            if is_helper and not member.name.value.startswith("test"):
                methods.setdefault(member.name.value, member)
        if _is_test_class(statement):
            add_tests(list(body), statement.name.value)
    text = module.code
    return TestModule(
        path=path,
        source_lines=text.splitlines(),
        positions=positions,
        tests=tests,
        helpers=helpers,
        methods=methods,
        fixtures=fixtures,
        sut_names=_sut_imports(module, packages),
        packages=set(packages),
        duplicates=duplicates,
        bound_calls=_bound_calls(module),
    )


def _bound_calls(module: cst.Module) -> dict[str, str]:
    bound = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)):
                continue
            for target in small.targets:
                if isinstance(target.target, cst.Name):
                    bound[target.target.value] = call_name(small.value)
    return bound


def module_functions(source: bytes) -> dict[str, cst.FunctionDef]:
    """Top-level functions of a conftest.py (helpers and fixtures shared with tests)."""
    module = cst.parse_module(source)
    return {
        statement.name.value: statement
        for statement in module.body
        if isinstance(statement, cst.FunctionDef)
    }
