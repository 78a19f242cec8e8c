"""The key of the table entry an import-time mutant changes.

A mutant inside `"rst": TableFormat(...)` of a formats table is killed, if at all, by a
test about that format, typically named for it (`test_rst`, `test_format[rst]`), while
the tests that can read the table number in the hundreds. Running the tests that name the
key first finds the kill at once instead of after the others; which tests run, and so the
verdict, stays the same.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from auditor.mutation.data_tables import Offsets, keyword_entries

_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
"""Keys a test name can hold: one-letter keys and keys with spaces name nothing."""


@dataclass(frozen=True)
class EntryKey:
    start: int
    end: int
    """The entry, key and value, as character offsets in the source."""
    key: str


def entry_keys(source: str) -> list[EntryKey]:
    """The string-keyed entries of the dict literals and `dict(key=...)` or
    `.update(key=...)` calls in the module's import-time code."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    offsets = Offsets(source)
    found = []
    for node in _import_time_nodes(module):
        for key, first, last in _keyed_entries(node):
            if _KEY.fullmatch(key):
                found.append(EntryKey(offsets.start(first), offsets.end(last), key))
    return found


def keys_at(keys: Sequence[EntryKey], start: int, end: int) -> list[str]:
    """The keys of the entries holding source[start:end], innermost first."""
    inside = [entry for entry in keys if entry.start <= start and end <= entry.end]
    return [entry.key for entry in sorted(inside, key=lambda entry: entry.end - entry.start)]


def entry_tests(
    tests: AbstractSet[str],
    keys: Sequence[str],
    named: Callable[[str], AbstractSet[str]] | None = None,
) -> AbstractSet[str]:
    """The tests named for the innermost of the keys that any test is named for: in
    `{"rst": {"sep": "="}}`, no test is about "sep". `named(key)`: the tests named for
    a key among more than these (a planner finds them once per key, not per mutant)."""
    for key in keys:
        found = tests & (naming(tests, key) if named is None else named(key))
        if found:
            return found
    return frozenset()


def naming(tests: Iterable[str], key: str) -> set[str]:
    """The tests whose name (function, class or parameters) holds the key as a word."""
    word = re.compile(rf"(?<![A-Za-z0-9]){re.escape(key)}(?![A-Za-z0-9])")
    return {nodeid for nodeid in tests if word.search(nodeid.partition("::")[2])}


def _import_time_nodes(module: ast.Module) -> Iterable[ast.AST]:
    """Every node outside function bodies (class bodies run at import time too)."""
    pending: list[ast.AST] = list(module.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending.extend(node.decorator_list)
            continue
        yield node
        pending.extend(ast.iter_child_nodes(node))


def _keyed_entries(node: ast.AST) -> Iterable[tuple[str, ast.AST, ast.AST]]:
    """(key, first node, last node) of each string-keyed entry."""
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield key.value, key, value
    else:
        for keyword in keyword_entries(node):
            yield keyword.arg or "", keyword, keyword
