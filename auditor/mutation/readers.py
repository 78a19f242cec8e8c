"""Which tests can read what an import-time statement makes.

A mutant of a module-level statement (a table, a compiled pattern, a class attribute, a
default argument) changes a value, not a line that tests run: coverage cannot say which
tests see it. What can read the value is code that names it: a function whose body
mentions the name (its tests are those that run the function), a test file that mentions
it, or another import-time statement computed from it (whose names are then followed in
turn). Names are matched as words, across every module, so a value re-exported or read
as an attribute (`self.RATE`, `special.TABLE`) is still found.

Where the statement's effect escapes that analysis (a bare call at import time, a
decorator that may register its function, `globals()` or `setattr`, a dunder that Python
reads implicitly), `binding_at` answers None and every test runs."""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from auditor.discovery.project import relative as relative_to_root
from auditor.mutation.bindings import (
    COMPOUND,
    WORD,
    BareCall,
    bare_call,
    binds,
    block_children,
    calls,
    changes,
    is_dynamic,
    mentions,
    mentions_by_statement,
    span,
    walk_import_time,
    writes_by_name,
)

_EXPLICIT_DUNDERS = frozenset(
    {"__all__", "__version__", "__author__", "__license__", "__copyright__", "__title__"}
)
"""Dunders only code that names them reads; Python itself reads the others (`__eq__`,
`__slots__`, `__init_subclass__`) where no name appears."""


@functools.lru_cache(maxsize=2048)
def _words(text: str) -> frozenset[str]:
    """Kept by content: the warm agent session plans again with one file changed."""
    return frozenset(WORD.findall(text))


@dataclass(frozen=True)
class _Statement:
    """A statement that runs at import time, in a module or a class body."""

    file: str
    span: tuple[int, int]
    binds: frozenset[str]
    mentions: frozenset[str]
    owners: tuple[str, ...]
    """The classes whose bodies hold it: a class attribute changes its class."""
    dynamic: bool
    decorators: tuple[tuple[int, int], ...]
    recomputes: bool
    """A module-level assignment or bare call: it can run again on its own."""
    calls: frozenset[str]
    """The names it calls by at import time."""
    bare_call: BareCall | None
    """The call it only makes (`build()`)."""


@dataclass(frozen=True)
class _Function:
    file: str
    name: str
    lines: range
    mentions: frozenset[str]
    top_level: bool
    writes_by_name: bool
    changes: frozenset[str]
    calls: frozenset[str]


_RECOMPUTING = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)


def _import_time_statements(
    file: str, body: list[ast.stmt], owners: tuple[str, ...] = (), top_level: bool = True
) -> Iterator[_Statement]:
    for statement in body:
        nodes = list(walk_import_time(statement))
        yield _Statement(
            file=file,
            span=span(statement),
            binds=frozenset(binds(statement)) | frozenset(owners),
            mentions=frozenset(mentions(nodes)),
            owners=owners,
            dynamic=is_dynamic(statement),
            decorators=tuple(
                (d.lineno, d.end_lineno or d.lineno)
                for d in getattr(statement, "decorator_list", ())
            ),
            recomputes=top_level and isinstance(statement, _RECOMPUTING),
            calls=frozenset(calls(nodes)),
            bare_call=bare_call(statement),
        )
        if isinstance(statement, ast.ClassDef):
            yield from _import_time_statements(
                file, statement.body, (*owners, statement.name), False
            )
        elif isinstance(statement, COMPOUND):
            for block in block_children(statement):
                yield from _import_time_statements(file, block, owners, False)


def _functions(file: str, tree: ast.Module) -> Iterator[_Function]:
    top_level = {id(node) for node in _module_level(tree.body)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start, name = node.body[0].lineno, node.name
        elif isinstance(node, ast.Lambda):
            start, name = node.body.lineno, ""
        else:
            continue
        body = node.body if isinstance(node.body, list) else [node.body]
        nodes = [inner for part in body for inner in ast.walk(part)]
        named = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        yield _Function(
            file=file,
            name=name,
            lines=range(start, (node.end_lineno or start) + 1),
            mentions=frozenset(mentions(nodes)),
            top_level=id(node) in top_level,
            writes_by_name=named and writes_by_name(node),
            changes=frozenset(changes(node) if named else ()),
            calls=frozenset(calls(nodes)),
        )


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module's namespace, those in its `if` and `try` blocks too."""
    for statement in body:
        yield statement
        if isinstance(statement, COMPOUND):
            for block in block_children(statement):
                yield from _module_level(block)


@dataclass(frozen=True)
class _Class:
    span: tuple[int, int]
    name: str
    plain: bool
    """No decorator, keyword (a metaclass) or base class but `object`: nothing reads its
    body but code that names what it binds (a dataclass's fields, marshmallow's declared
    fields, a registry's subclasses are read where no name says)."""


def _class(node: ast.ClassDef) -> _Class:
    bases = [
        base for base in node.bases if not (isinstance(base, ast.Name) and base.id == "object")
    ]
    plain = not (node.decorator_list or node.keywords or bases)
    return _Class(span=span(node), name=node.name, plain=plain)


@dataclass(frozen=True)
class _FileFacts:
    """What one module binds and reads, from its text alone."""

    statements: tuple[_Statement, ...]
    classes: tuple[_Class, ...]
    naming: tuple[tuple[str, int], ...]
    """Each name a statement mentions, and the statement's first line."""
    imported: frozenset[str]
    functions: tuple[_Function, ...]


@functools.lru_cache(maxsize=2048)
def _facts(relative: str, text: str, path: str) -> _FileFacts | None:
    """Kept by content, as `_words` is: the warm agent session plans again with one
    file changed. None for a file that does not parse."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError):
        return None
    return _FileFacts(
        statements=tuple(_import_time_statements(relative, tree.body)),
        classes=tuple(_class(node) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)),
        naming=tuple(mentions_by_statement(tree)),
        imported=frozenset(
            name
            for statement in _module_level(tree.body)
            if isinstance(statement, (ast.Import, ast.ImportFrom))
            for name in binds(statement)
        ),
        functions=tuple(_functions(relative, tree)),
    )


@dataclass(frozen=True)
class Binding:
    names: frozenset[str]
    lines: range
    """The statement's lines: the tests that run them (a function defined there) read it."""


@dataclass(frozen=True)
class ValueReaders:
    """Where code reads, when it is called, the value an import-time statement makes."""

    names: frozenset[str]
    lines: dict[str, frozenset[int]]
    """By file relative to the root: the statement's own lines and the functions that
    name what it binds."""


Consumers = tuple[tuple[str, tuple[int, int]], ...]
"""Statements of other modules to run again: (file relative to the root, lines)."""


@dataclass(frozen=True)
class Readers:
    """What reads a name: lines of functions in the code under test, and files on the
    test side (whose tests are then the readers)."""

    function_lines: dict[str, frozenset[int]]
    """Lines of the functions that mention a name, by file relative to the root."""
    test_files: frozenset[str]
    """Files of tests (test modules, or modules whose doctests run) that mention one."""
    every_test: bool
    """A conftest or a test helper mentions one, or an import-time statement whose
    effect no name says (`register(TABLE)`, `build_registry()`) reads one: any test may
    read what it made."""


class ReadIndex:
    """Names bound and read across the code under test and the test side, parsed once
    per planning."""

    def __init__(
        self,
        root: Path,
        sources: Iterable[Path],
        test_files: Iterable[Path],
        support_files: Iterable[Path],
    ) -> None:
        self.statements: dict[str, list[_Statement]] = {}
        self.unparsed: set[str] = set()
        self.mentioned_by: dict[str, list[_Statement]] = defaultdict(list)
        self.functions_mentioning: dict[str, list[_Function]] = defaultdict(list)
        self.functions_named: dict[str, list[_Function]] = defaultdict(list)
        self.file_words: dict[str, frozenset[str]] = {}
        self.support_words: set[str] = set()
        self.naming_lines: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
        """Per name, per file, the statements (first lines) that mention it."""
        self.classes: dict[str, list[_Class]] = {}
        imported: set[str] = set()
        for path in sources:
            relative = relative_to_root(str(path), root)
            text = _read(path)
            if ">>>" in text:  # its doctests may be collected as tests
                self.file_words[relative] = _words(text)
            facts = _facts(relative, text, str(path))
            if facts is None:
                self.unparsed.add(relative)
                continue
            self.statements[relative] = list(facts.statements)
            self.classes[relative] = list(facts.classes)
            for name, line in facts.naming:
                self.naming_lines[name][relative].add(line)
            imported |= facts.imported
            for function in facts.functions:
                for name in function.mentions:
                    self.functions_mentioning[name].append(function)
                self.functions_named[function.name].append(function)
        self.module_values = (
            frozenset(
                name
                for statements in self.statements.values()
                for statement in statements
                if not statement.owners
                for name in statement.binds
            )
            - imported
        )
        """Names the modules bind at import time, to values rather than imported names."""
        for statements in self.statements.values():
            statements[:] = [self._with_call_effects(statement) for statement in statements]
            for statement in statements:
                for name in statement.mentions:
                    self.mentioned_by[name].append(statement)
        for path in test_files:
            self.file_words[relative_to_root(str(path), root)] = _words(_read(path))
        for path in support_files:
            self.support_words |= _words(_read(path))
        self._closures: dict[tuple[frozenset[str], frozenset[str]], frozenset[str]] = {}
        self._consumers: dict[tuple[str, frozenset[str]], Consumers] = {}
        self._bindings: dict[tuple[str, int, int], Binding | None] = {}

    def _with_call_effects(self, statement: _Statement) -> _Statement:
        """What a bare call changes, when the code under test says: the module values
        that the functions or methods of that name, and those they call, store into or
        call methods of (toolz's `create_signature_registry()` fills `signatures`), and
        the module value whose method it calls (`TABLE[key].update(...)`, where no such
        method is in the code: a container's). Any other bare call stays dynamic
        (`warnings.filterwarnings(...)`): no name says what it changed."""
        call = statement.bare_call
        if call is None:
            return statement
        changed = set(call.receiver & self.module_values)
        pending = list(self.functions_named.get(call.name, ()))
        if not pending and not changed:
            return statement
        seen = {call.name}
        while pending:
            function = pending.pop()
            if function.writes_by_name:
                return statement
            changed |= function.changes & self.module_values
            for callee in function.calls - seen:
                seen.add(callee)
                pending += self.functions_named.get(callee, ())
        return replace(statement, binds=statement.binds | changed, dynamic=False)

    def binding_at(self, file: str, line: int, end_line: int) -> Binding | None:
        """What the innermost import-time statement holding these lines binds (with the
        classes around it); None when its effect cannot be followed by name."""
        key = (file, line, end_line)
        if key not in self._bindings:
            self._bindings[key] = self._binding_at(file, line, end_line)
        return self._bindings[key]

    def _binding_at(self, file: str, line: int, end_line: int) -> Binding | None:
        statements = self.statements.get(file)
        if statements is None:
            return None
        holding = [s for s in statements if s.span[0] <= line and end_line <= s.span[1]]
        if not holding:
            return None
        narrowest = min(s.span[1] - s.span[0] for s in holding)
        innermost = [s for s in holding if s.span[1] - s.span[0] == narrowest]
        names = frozenset().union(*(s.binds for s in innermost))
        implicit = {n for n in names if n.startswith("__") and n.endswith("__")}
        if not names or implicit - _EXPLICIT_DUNDERS:
            return None
        for statement in innermost:
            if statement.dynamic or any(
                first <= end_line and line <= last for first, last in statement.decorators
            ):
                return None  # a decorator may register the function it wraps
        first, last = innermost[0].span
        return Binding(names, range(first, last + 1))

    def class_around(self, file: str, line: int, end_line: int) -> range | None:
        """The lines of the innermost class holding these lines."""
        holding = self._classes_around(file, line, end_line)
        if not holding:
            return None
        first, last = min((found.span for found in holding), key=lambda span: span[1] - span[0])
        return range(first, last + 1)

    def _classes_around(self, file: str, line: int, end_line: int) -> list[_Class]:
        """The classes whose bodies hold these lines, at any depth."""
        return [
            found
            for found in self.classes.get(file, ())
            if found.span[0] <= line and end_line <= found.span[1]
        ]

    def lines_naming(self, names: Iterable[str]) -> dict[str, set[int]]:
        """The statements that mention one of the names, by file: where it is read."""
        found: dict[str, set[int]] = defaultdict(set)
        for name in names:
            for file, lines in self.naming_lines.get(name, {}).items():
                found[file] |= lines
        return found

    def closure(
        self, names: frozenset[str], keeping: frozenset[str] = frozenset()
    ) -> frozenset[str]:
        """The names, and those of every import-time statement computed from them or
        calling a module-level function that reads them (`REGISTRY = build()`), but the
        names `keeping` holds: classes that keep their identity when a statement of
        their body runs again."""
        key = (names, keeping)
        if key not in self._closures:
            reached = set(names)
            pending = list(names)
            while pending:
                for statement in self._computed_from(pending.pop()):
                    for bound in statement.binds - reached - keeping:
                        reached.add(bound)
                        pending.append(bound)
            self._closures[key] = frozenset(reached)
        return self._closures[key]

    def _computed_from(self, name: str) -> Iterator[_Statement]:
        """Import-time statements that mention the name or call a module-level function
        that does."""
        yield from self.mentioned_by.get(name, ())
        for function in self.functions_mentioning.get(name, ()):
            if function.top_level:
                for statement in self.mentioned_by.get(function.name, ()):
                    if function.name in statement.calls:
                        yield statement

    def consumers(self, file: str, names: frozenset[str]) -> Consumers:
        """Module-level statements of other modules that computed something from the
        names when the package was imported, (file, lines) in file order: an assignment
        or bare call computed from them (`REGISTRY = build(TABLE)`), or a bare call of a
        function that reads them (toolz's `create_signature_registry()`, which turns
        `_signatures.module_info` into the registry `curry` reads). A mutant's child runs
        them again after the mutated statement, as a fresh import would have."""
        if (file, names) not in self._consumers:
            self._consumers[(file, names)] = self._find_consumers(file, names)
        return self._consumers[(file, names)]

    def _find_consumers(self, file: str, names: frozenset[str]) -> Consumers:
        reached = self.closure(names)
        functions = [
            function
            for name in reached
            for function in self.functions_mentioning.get(name, ())
            if function.name
        ]
        readers = {function.name for function in functions}
        called = {function.name for function in functions if function.top_level}
        found = {
            (statement.file, statement.span)
            for name in reached | readers
            for statement in self.mentioned_by.get(name, ())
            if statement.file != file
            and statement.recomputes
            and (
                statement.dynamic
                or not statement.mentions.isdisjoint(reached)
                or not statement.calls.isdisjoint(called)
            )
        }
        return tuple(sorted(found))

    def readers(self, names: frozenset[str]) -> Readers:
        return Readers(
            function_lines=self._function_lines(names),
            test_files=frozenset(
                file for file, words in self.file_words.items() if not words.isdisjoint(names)
            ),
            every_test=not self.support_words.isdisjoint(names) or self._read_unnamed(names),
        )

    def value_readers(self, file: str, line: int, end_line: int) -> ValueReaders | None:
        """The code that reads, when it is called, what the innermost import-time
        statement at these lines makes: the statement's own lines (a function it defines)
        and the functions that name what it binds or what is computed from that at
        import. None where that cannot be followed by name (`binding_at`), or where a
        class around the statement is not plain (`_Class.plain`)."""
        binding = self.binding_at(file, line, end_line)
        if binding is None:
            return None
        around = self._classes_around(file, binding.lines.start, binding.lines.stop - 1)
        classes = frozenset(found.name for found in around)
        names = binding.names - classes
        if not names or not all(found.plain for found in around):
            return None
        # A class keeps its identity (`swap.reexecute_module`): code reads the changed
        # attribute through it only where it names the attribute.
        reached = self.closure(names, classes)
        if self._read_unnamed(reached):
            return None
        lines = {file: frozenset(binding.lines)}
        for reader, found in self._function_lines(reached).items():
            lines[reader] = lines.get(reader, frozenset()) | found
        return ValueReaders(names=names, lines=lines)

    def _function_lines(self, names: Iterable[str]) -> dict[str, frozenset[int]]:
        """The lines of the functions that mention one of the names, by file."""
        lines: dict[str, set[int]] = defaultdict(set)
        for name in names:
            for function in self.functions_mentioning.get(name, ()):
                lines[function.file].update(function.lines)
        return {file: frozenset(found) for file, found in lines.items()}

    def _read_unnamed(self, names: Iterable[str]) -> bool:
        """Whether an import-time statement whose effect no name says reads one of the
        names (`register(TABLE)`)."""
        return any(statement.dynamic for name in names for statement in self._computed_from(name))


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""
