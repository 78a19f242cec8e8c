"""Module-level data tables: the mutants of a bounded sample of their entries.

A currency table of hundreds of rows at module level is data, not logic: mutating every
string and number in it makes most of a package's mutants, takes most of the mutation
time, and decides the package's score. A table (a dict, list, tuple or set literal of
at least `MIN_ENTRIES` entries, or a `dict(key=value, ...)` or `TABLE.update(key=value,
...)` call of as many keywords, each entry made of literals, names, calls with such
arguments or stubs such as `lambda x, key=None: None`; or a run of as many such calls as
statements) keeps the mutants of `SAMPLED_ENTRIES` entries spread over it, first and last
included. `--mutate-data all` keeps every entry's.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

MIN_ENTRIES = 20
SAMPLED_ENTRIES = 10


@dataclass(frozen=True)
class DataTable:
    line: int
    end_line: int
    entries: tuple[tuple[int, int], ...]
    """Each entry's (start, end) character offsets in the source."""
    sampled: frozenset[int]
    """Indexes of the entries whose mutants are kept."""

    def skips(self, start: int, end: int) -> bool:
        """Whether a mutation of source[start:end] lies in an entry left out: within the
        entry, or the entry with the separators around it (a dropped argument takes its
        comma along), never reaching into the entries beside it."""
        for index, (entry_start, entry_end) in enumerate(self.entries):
            after_previous = self.entries[index - 1][1] if index else entry_start
            before_next = self.entries[index + 1][0] if index + 1 < len(self.entries) else entry_end
            overlaps = start < entry_end and entry_start < end
            if overlaps and after_previous <= start and end <= before_next:
                return index not in self.sampled
        return False


def find_data_tables(source: str) -> list[DataTable]:
    """The data tables among the module's top-level statements, in source order."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    offsets = Offsets(source)
    tables = []
    run: list[ast.stmt] = []
    for statement in [*module.body, None]:
        value = _table_value(statement)
        if value is None and isinstance(statement, ast.Expr) and _is_data_call(statement.value):
            run.append(statement)
            continue
        if len(run) >= MIN_ENTRIES:
            tables.append(_table(run[0], run[-1], [[s] for s in run], offsets))
        run = []
        entries = _entries(value) if value is not None else []
        data = all(_is_data(node) for entry in entries for node in entry)
        if len(entries) >= MIN_ENTRIES and data:
            tables.append(_table(value, value, entries, offsets))  # type: ignore[arg-type]
    return tables


def _table_value(statement: ast.stmt | None) -> ast.expr | None:
    """What may hold a table: an assigned value, or a bare `TABLE.update(...)`."""
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return statement.value
    if isinstance(statement, ast.Expr) and keyword_entries(statement.value):
        return statement.value
    return None


def _entries(value: ast.expr) -> list[list[ast.AST]]:
    """The nodes of each entry: an item, a dict's key and value, or a keyword."""
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return [[item] for item in value.elts]
    if isinstance(value, ast.Dict) and None not in value.keys:  # no `**spread`
        return [[key, item] for key, item in zip(value.keys, value.values, strict=True)]  # type: ignore[list-item]
    return [[keyword] for keyword in keyword_entries(value)]


def keyword_entries(value: ast.AST) -> list[ast.keyword]:
    """The keywords of `dict(key=value, ...)` or `TABLE.update(key=value, ...)`: a
    table written as a call."""
    if not isinstance(value, ast.Call) or value.args:
        return []
    callee = value.func
    named = isinstance(callee, ast.Name) and callee.id == "dict"
    if not named and not (isinstance(callee, ast.Attribute) and callee.attr == "update"):
        return []
    if any(keyword.arg is None for keyword in value.keywords):  # a `**spread`
        return []
    return list(value.keywords)


def _is_data(node: ast.AST) -> bool:
    if isinstance(node, (ast.Constant, ast.Name, ast.Attribute)):
        return True
    if isinstance(node, ast.keyword):
        return _is_data(node.value)
    if isinstance(node, ast.Lambda):  # a stub that stands for a signature
        defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        return isinstance(node.body, ast.Constant) and all(_is_data(d) for d in defaults)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_data(item) for item in node.elts)
    if isinstance(node, ast.Dict):
        return None not in node.keys and all(
            _is_data(item) for item in (*node.keys, *node.values) if item is not None
        )
    return _is_data_call(node)


def _is_data_call(node: ast.AST) -> bool:
    """`Currency("EUR", 2, "€")`: a constructor (or registration) with literal arguments."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, (ast.Name, ast.Attribute))
        and all(_is_data(argument) for argument in node.args)
        and all(_is_data(keyword.value) for keyword in node.keywords)
        and bool(node.args or node.keywords)
    )


def _table(
    first: ast.stmt | ast.expr,
    last: ast.stmt | ast.expr,
    entries: Sequence[Sequence[ast.AST]],
    offsets: Offsets,
) -> DataTable:
    step = (len(entries) - 1) / (SAMPLED_ENTRIES - 1)
    return DataTable(
        line=first.lineno,
        end_line=last.end_lineno or first.lineno,
        entries=tuple((offsets.start(entry[0]), offsets.end(entry[-1])) for entry in entries),
        sampled=frozenset(round(index * step) for index in range(SAMPLED_ENTRIES)),
    )


class Offsets:
    """ast's positions (lines, UTF-8 byte columns) as character offsets in the source."""

    def __init__(self, source: str) -> None:
        self.lines = source.split("\n")  # as ast counts lines (`splitlines` splits more)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def _offset(self, line: int, byte_column: int) -> int:
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        column = len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="replace"))
        return self.starts[line - 1] + column

    def start(self, node: ast.AST) -> int:
        return self._offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self._offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
