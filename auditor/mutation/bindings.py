"""What a statement binds and mentions when it runs at import time: the syntax facts
that both the test selection of import-time mutants (`readers`) and their partial
re-execution (`reexecution`) follow."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

COMPOUND = (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)
if hasattr(ast, "TryStar"):  # Python 3.11+
    COMPOUND += (ast.TryStar,)

_DYNAMIC_CALLS = frozenset(
    {"globals", "vars", "locals", "setattr", "delattr", "exec", "eval", "__import__"}
)
"""Calls that read or write a namespace by computed names."""


def block_children(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists a compound statement runs at the same level."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(statement, name, None)
        if block:
            yield block
    for handler in getattr(statement, "handlers", ()):
        yield handler.body


def span(statement: ast.stmt) -> tuple[int, int]:
    decorators = getattr(statement, "decorator_list", ())
    first = min([statement.lineno, *(d.lineno for d in decorators)])
    return first, statement.end_lineno or statement.lineno


def walk_import_time(node: ast.AST, class_bodies: bool = False) -> Iterator[ast.AST]:
    """Every node of `node` that runs when its statement runs: not function bodies, and
    not the bodies of classes nested in it (statements of their own) unless asked."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = current.args
            stack += [*current.decorator_list, *args.defaults]
            stack += [d for d in args.kw_defaults if d is not None]
        elif isinstance(current, ast.Lambda):
            stack += [*current.args.defaults, *(d for d in current.args.kw_defaults if d)]
        elif isinstance(current, ast.ClassDef):
            stack += [*current.decorator_list, *current.bases, *current.keywords]
            if class_bodies:
                stack += current.body
        else:
            stack += list(ast.iter_child_nodes(current))


def _stored_root(target: ast.expr) -> Iterator[str]:
    """The names an assignment target changes: `T[k] = v` and `obj.attr = v` change T,
    and obj and attr."""
    while isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
        if isinstance(target, ast.Attribute):
            yield target.attr
        target = target.value
    if isinstance(target, ast.Name):
        yield target.id


def binds(statement: ast.stmt) -> set[str]:
    """The names the statement (re)binds or deletes in its own namespace; not the
    variables of its comprehensions, which are theirs."""
    names: set[str] = set()
    nodes = list(walk_import_time(statement))
    in_comprehensions = {
        id(target)
        for node in nodes
        if isinstance(node, ast.comprehension)
        for target in ast.walk(node.target)
    }
    for node in nodes:
        if id(node) in in_comprehensions:
            continue
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(
                (alias.asname or alias.name).split(".")[0]
                for alias in node.names
                if alias.name != "*"
            )
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(
            node.ctx, (ast.Store, ast.Del)
        ):
            names.update(_stored_root(node))
    return names


def mentions(nodes: Iterable[ast.AST]) -> set[str]:
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.update(WORD.findall(node.value))  # getattr(obj, "NAME"), __all__
    return names


def mentions_by_statement(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Each name or attribute the tree mentions, with the first line of the innermost
    statement holding it: the line coverage.py records when that statement runs."""
    pending: list[tuple[ast.AST, int]] = [(tree, getattr(tree, "lineno", 0))]
    while pending:
        node, line = pending.pop()
        if isinstance(node, ast.stmt):
            line = node.lineno
        if isinstance(node, ast.Name):
            yield node.id, line
        elif isinstance(node, ast.Attribute):
            yield node.attr, line
        pending += [(child, line) for child in ast.iter_child_nodes(node)]


def loads(nodes: Iterable[ast.AST]) -> set[str]:
    """The names read from the namespace the nodes run in."""
    return {
        node.id for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def callee_name(call: ast.Call) -> str:
    """The name a call calls by (`f(...)` and `obj.f(...)` both call by `f`)."""
    callee = call.func
    return callee.id if isinstance(callee, ast.Name) else getattr(callee, "attr", "")


def _writes_by_name(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        return callee_name(node) in _DYNAMIC_CALLS
    return isinstance(node, ast.Attribute) and node.attr == "__dict__"


def is_dynamic(statement: ast.stmt) -> bool:
    """Whether the statement's effect may reach what no name says: a bare expression
    (a registration, a configuration call), a deletion, a namespace written by name."""
    for node in walk_import_time(statement, class_bodies=True):
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant):
            return True
        if isinstance(node, (ast.Delete, ast.Global, ast.Nonlocal)):
            return True
        if _writes_by_name(node):
            return True
    return False


@dataclass(frozen=True)
class BareCall:
    """A statement that is only a call: `build()`, `_sigs.build(T)`, `T[k].update(...)`."""

    name: str
    receiver: frozenset[str]
    """The names of the object whose method it calls (`T` and `k` above)."""


def bare_call(statement: ast.stmt) -> BareCall | None:
    """The call a statement only makes, when nothing else in it is dynamic: what it
    changes is then what the called function, or method, changes."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    name = callee_name(call)
    if not name or any(_writes_by_name(node) for node in walk_import_time(call)):
        return None
    receiver = _stored_root(call.func.value) if isinstance(call.func, ast.Attribute) else ()
    return BareCall(name, frozenset(receiver))


def calls(nodes: Iterable[ast.AST]) -> set[str]:
    """The names the nodes call by."""
    return {callee_name(node) for node in nodes if isinstance(node, ast.Call)} - {""}


def writes_by_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function's body writes a namespace by computed names (`setattr`,
    `globals()[name] = ...`): what a call of it changes has no name."""
    return any(_writes_by_name(node) for part in function.body for node in ast.walk(part))


def changes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names whose values a function's body may change: targets of `global`, the
    roots and attributes of what it stores into (`REGISTRY[key] = v`, `obj.attr = v`),
    and the objects it calls methods of (`REGISTRY.update(...)`)."""
    names: set[str] = set()
    for node in (inner for part in function.body for inner in ast.walk(part)):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(
            node.ctx, (ast.Store, ast.Del)
        ):
            names.update(_stored_root(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            names.update(_stored_root(node.func.value))
    return names
