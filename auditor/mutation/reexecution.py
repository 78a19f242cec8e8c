"""Which top-level statements of a module a module-path mutant runs again.

Re-running the whole mutated module compiles and executes every statement in each
mutant's child, which dominates the cost of a mutant in a large module. The mutant
changes one top-level statement; what differs afterwards is what that statement binds,
and what later statements compute from those names. Running just these again, in order,
in the live module's namespace leaves the namespace as a full re-run would, provided
each reads what it read the first time: no name it reads is bound (or deleted) by
itself or a later statement (`X = X + 1`, `del helper`), and none has effects no name
says (a bare call, `globals()`). Otherwise the whole module runs again."""

from __future__ import annotations
import __future__

import ast
import functools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from types import CodeType

from auditor.mutation.bindings import binds, is_dynamic, loads, span, walk_import_time


@dataclass(frozen=True)
class _TopLevel:
    lines: tuple[int, int]
    binds: frozenset[str]
    reads: frozenset[str]
    dynamic: bool
    future: bool


Lines = tuple[tuple[int, int], ...]
"""1-based, inclusive line ranges of the mutated source."""


class Reexecution:
    """One module's top-level statements, parsed once for all its mutants."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._chosen: dict[int, list[int]] = {}

    @functools.cached_property
    def statements(self) -> list[_TopLevel]:
        """Parsed on first use: most files have no module-path mutant."""
        try:
            tree = ast.parse(self.source)
        except (SyntaxError, ValueError):
            return []
        return [
            _TopLevel(
                lines=span(statement),
                binds=frozenset(binds(statement)),
                reads=frozenset(loads(walk_import_time(statement, class_bodies=True))),
                dynamic=is_dynamic(statement),
                future=isinstance(statement, ast.ImportFrom) and statement.module == "__future__",
            )
            for statement in tree.body
        ]

    def lines_to_rerun(self, line: int, end_line: int, added_lines: int = 0) -> Lines:
        """The lines to run again for a mutant of lines `line`..`end_line` that adds
        `added_lines` lines (negative: removes); empty: the whole module."""
        holding = [
            index
            for index, statement in enumerate(self.statements)
            if statement.lines[0] <= line and end_line <= statement.lines[1]
        ]
        if not holding:
            return ()
        first = holding[0]
        if first not in self._chosen:
            self._chosen[first] = self._dependents(first)
        chosen = self._chosen[first]
        if not chosen:
            return ()
        futures = [s.lines for s in self.statements[:first] if s.future]
        shifted = []
        for index in chosen:
            start, end = self.statements[index].lines
            if index == first:
                shifted.append((start, end + added_lines))
            else:
                shifted.append((start + added_lines, end + added_lines))
        return tuple(futures + shifted)

    def _dependents(self, first: int) -> list[int]:
        """The statement and those after it computed from what it binds; empty when one
        of them cannot be run again on its own."""
        chosen = [first]
        names = set(self.statements[first].binds)
        for index in range(first + 1, len(self.statements)):
            if not names.isdisjoint(self.statements[index].reads):
                chosen.append(index)
                names |= self.statements[index].binds
        if not all(self._safe_to_rerun(index, chosen) for index in chosen):
            return []
        return chosen

    def _safe_to_rerun(self, index: int, chosen: list[int]) -> bool:
        statement = self.statements[index]
        if statement.dynamic:
            return False
        later = self.statements[index:]
        if any(not statement.reads.isdisjoint(other.binds) for other in later):
            return False
        start, end = statement.lines
        # A line shared with a statement not chosen (`a = 1; b = 2`) would run it too.
        return not any(
            other.lines[0] <= end and start <= other.lines[1]
            for position, other in enumerate(self.statements)
            if position != index and position not in chosen
        )


_FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)
)


def rerun_code(mutated: str, lines: Sequence[Sequence[int]], filename: str) -> list[CodeType]:
    """What a module-path mutant's child runs: the chosen lines, or the whole module."""
    if not lines:
        return [compile(mutated, filename, "exec", dont_inherit=True)]
    return compile_statements(mutated, lines, filename)


def compile_statements(
    source: str, lines: Sequence[Sequence[int]], filename: str
) -> list[CodeType]:
    """Each range of `source` compiled on its own, at its own line numbers, with the
    `__future__` features of the ranges before it (a module's future imports come
    first). Run one by one, each sees the classes and functions of the one before as
    the module keeps them (`reexecute_module`), not as it first made them again."""
    text = source.split("\n")
    flags = 0
    codes = []
    for start, end in lines:
        statement = "\n" * (start - 1) + "\n".join(text[start - 1 : end])
        code = compile(statement, filename, "exec", flags=flags, dont_inherit=True)
        flags |= code.co_flags & _FUTURE_FLAGS
        codes.append(code)
    return codes
