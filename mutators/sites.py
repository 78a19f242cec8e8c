"""Find every mutation in a source file: where, which operator, what replaces what.

The walk tracks the enclosing top-level function or method (mutants inside a nested
function belong to it: the swap replaces the outer code object, which re-creates the
inner one), and skips what must never be mutated: docstrings, annotations, type aliases and
the other declarations only a type checker reads (`TypeVar`, `ParamSpec`, `NewType`, an
`@overload` stub, the body of a `Protocol`), `if TYPE_CHECKING:` blocks, decorators,
logging calls, `__repr__`, dunder assignments such as `__all__`, `if __name__ ==
"__main__":`, and lines marked `# pragma: no mutate` or `# audit: no mutate`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from mutators.base import Operator, code

_NO_MUTATE = re.compile(r"#\s*(pragma:\s*no\s+mutate|audit:\s*no\s+mutate)")
_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
_SKIPPED_FUNCTIONS = {"__repr__"}


@dataclass(frozen=True)
class Site:
    """One mutation of one source file, before anything is compiled or run."""

    operator: str
    family: str
    function: str
    """Qualified name of the enclosing top-level function or method; '' at module level."""
    function_line: int
    """Line of the function's `def` (0 at module level): ids are relative to it."""
    function_first_line: int
    """First line of the function including its decorators (0 at module level)."""
    function_end: int
    """Character offset in the source where the function ends (0 at module level)."""
    function_classes: tuple[str, ...]
    """Names of the classes the function is defined in, outermost first."""
    line: int
    col: int
    end_line: int
    end_col: int
    start: int
    end: int
    """Character offsets of the replaced text in the source."""
    original: str
    replacement: str
    description: str
    ordinal: int

    @property
    def relative_line(self) -> int:
        return self.line - self.function_line if self.function else self.line

    def local_id(self) -> str:
        scope = self.function or "<module>"
        return f"{scope}::{self.operator}@{self.relative_line}:{self.col}#{self.ordinal}"

    def apply(self, source: str) -> str:
        return source[: self.start] + self.replacement + source[self.end :]


@dataclass(frozen=True)
class _Scope:
    qualname: str
    def_line: int
    first_line: int
    end: int
    classes: tuple[str, ...]


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _first_statement(node: cst.CSTNode) -> cst.CSTNode | None:
    body = getattr(node, "body", None)
    if isinstance(body, cst.IndentedBlock):
        body = body.body
    if isinstance(body, Sequence) and body:
        return body[0]
    return None


def _name_of(node: cst.CSTNode) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_name_of(node.value)}.{node.attr.value}"
    return ""


def _is_logging_call(node: cst.Call) -> bool:
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _LOG_METHODS:
        return False
    receiver = _name_of(func.value).lower()
    return "log" in receiver


def _is_type_checking_block(node: cst.If) -> bool:
    return _name_of(node.test).split(".")[-1] == "TYPE_CHECKING"


def _is_main_guard(node: cst.If) -> bool:
    test = node.test
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
    )


_TYPE_FORMS = {"Literal", "Union", "Optional", "Annotated", "Callable", "Concatenate"}


def _is_type_form(node: cst.BaseExpression) -> bool:
    """`Literal['auto', 'pre']`, `typing.Optional[int]`, or such forms joined by `|`."""
    if isinstance(node, cst.Subscript):
        return _name_of(node.value).split(".")[-1] in _TYPE_FORMS
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        sides = (node.left, node.right)
        return any(_is_type_form(side) for side in sides) and all(
            _is_type_form(side) or isinstance(side, (cst.Name, cst.Attribute)) for side in sides
        )
    return False


def _is_type_alias(node: cst.CSTNode) -> bool:
    """`Backend = Literal['auto', 'unidecode']`, `X: TypeAlias = ...`, `type X = ...`: an
    annotation written out of line, which no test can tell apart from a mutant of it
    but by introspecting types."""
    if isinstance(node, cst.TypeAlias):
        return True
    if isinstance(node, cst.AnnAssign):
        declared = _name_of(node.annotation.annotation).split(".")[-1] == "TypeAlias"
        return declared or (node.value is not None and _is_type_form(node.value))
    return isinstance(node, cst.Assign) and _is_type_form(node.value)


_TYPE_VARIABLES = {"TypeVar", "ParamSpec", "TypeVarTuple", "NewType"}


def _is_typing_only(node: cst.CSTNode) -> bool:
    """A declaration only a type checker reads: `_T = TypeVar("_T")`, `UserId =
    NewType("UserId", int)`, an `@overload` stub (the implementation is what runs). A
    mutant of it changes nothing a test can observe but through typing's
    introspection. (A `Protocol`'s stub methods are skipped by the walk, which knows
    the class they are in.)"""
    if isinstance(node, (cst.Assign, cst.AnnAssign)) and isinstance(node.value, cst.Call):
        return _name_of(node.value.func).split(".")[-1] in _TYPE_VARIABLES
    if isinstance(node, cst.FunctionDef):
        return any(
            _name_of(decorator.decorator).split(".")[-1] == "overload"
            for decorator in node.decorators
        )
    return False


def _is_protocol(node: cst.ClassDef) -> bool:
    bases = (base.value for base in node.bases)
    return any(
        _name_of(base.value if isinstance(base, cst.Subscript) else base).split(".")[-1]
        == "Protocol"
        for base in bases
    )


def _is_stub(node: cst.FunctionDef) -> bool:
    """A body of `...` or `pass` (after a docstring): a signature, nothing that runs."""
    if isinstance(node.body, cst.SimpleStatementSuite):  # def f(self) -> int: ...
        smalls = list(node.body.body)
    else:
        lines = [line for line in node.body.body if not _is_docstring(line)]
        if not all(isinstance(line, cst.SimpleStatementLine) for line in lines):
            return False
        smalls = [small for line in lines for small in line.body]  # type: ignore[attr-defined]
    return all(
        isinstance(small, cst.Pass)
        or (isinstance(small, cst.Expr) and isinstance(small.value, cst.Ellipsis))
        for small in smalls
    )


def _assigns_dunder(node: cst.CSTNode) -> bool:
    targets: list[cst.CSTNode] = []
    if isinstance(node, cst.Assign):
        targets = [target.target for target in node.targets]
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        targets = [node.target]
    return any(
        isinstance(t, cst.Name) and t.value.startswith("__") and t.value.endswith("__")
        for t in targets
    )


_ALWAYS_SKIPPED = frozenset(
    {cst.Annotation, cst.Decorator, cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal}
)


class _SiteCollector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, source: str, operators: Sequence[Operator]) -> None:
        super().__init__()
        self.source = source
        self.operators = operators
        lines = source.splitlines(keepends=True)
        self.line_offsets = [0]
        for text in lines:
            self.line_offsets.append(self.line_offsets[-1] + len(text))
        self.no_mutate_lines = {
            number for number, text in enumerate(lines, start=1) if _NO_MUTATE.search(text)
        }
        self.scopes: list[tuple[str, cst.CSTNode]] = []
        self.skip_depth = 0
        self.skipped_nodes: set[int] = set()
        self.sites: list[Site] = []
        self.ordinals: dict[str, int] = {}
        self._operators_by_type: dict[type[cst.CSTNode], list[Operator]] = {}

    def _offset(self, line: int, column: int) -> int:
        return self.line_offsets[line - 1] + column

    def _position(self, node: cst.CSTNode):
        return self.get_metadata(PositionProvider, node, None)

    # scope and skipping --------------------------------------------------------

    def _function_scope(self) -> _Scope:
        """The outermost function (or method) around the current node, if any."""
        names: list[str] = []
        for name, node in self.scopes:
            names.append(name)
            if isinstance(node, cst.FunctionDef):
                def_position = self._position(node.name)
                whole = self._position(node)
                first = self._position(node.decorators[0]) if node.decorators else whole
                if def_position is None or whole is None or first is None:
                    break
                return _Scope(
                    qualname=".".join(names),
                    def_line=def_position.start.line,
                    first_line=first.start.line,
                    end=self._offset(whole.end.line, whole.end.column),
                    classes=tuple(names[:-1]),
                )
        return _Scope("", 0, 0, 0, ())

    def _should_skip(self, node: cst.CSTNode) -> bool:
        if self._skipped_for_what_it_is(node):
            return True
        position = self._position(node)
        return bool(position and position.start.line in self.no_mutate_lines)

    def _skipped_for_what_it_is(self, node: cst.CSTNode) -> bool:
        """Decided by the node's exact type, one comparison each: asked of each of a
        file's tens of thousands of nodes, a chain of `isinstance` checks made a fifth of
        the calls of finding its sites."""
        kind = type(node)
        if kind in _ALWAYS_SKIPPED:
            return True
        if kind is cst.If:
            return _is_type_checking_block(node) or _is_main_guard(node)
        if kind is cst.Call:
            return _is_logging_call(node)
        if kind is cst.FunctionDef:
            return (
                node.name.value in _SKIPPED_FUNCTIONS
                or _is_typing_only(node)
                or (_is_stub(node) and self._in_protocol())
            )
        if kind is cst.SimpleStatementLine:
            return (_is_docstring(node) and self._is_first_in_scope(node)) or any(
                _assigns_dunder(small) for small in node.body
            )
        if kind in (cst.TypeAlias, cst.AnnAssign, cst.Assign):
            return _is_type_alias(node) or _is_typing_only(node)
        return False

    def _in_protocol(self) -> bool:
        owner = self.scopes[-1][1] if self.scopes else None
        return isinstance(owner, cst.ClassDef) and _is_protocol(owner)

    def _is_first_in_scope(self, node: cst.CSTNode) -> bool:
        owner = self.scopes[-1][1] if self.scopes else self.module
        return _first_statement(owner) is node

    def visit_Module(self, node: cst.Module) -> bool:
        self.module = node
        return True

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._should_skip(node):
            return False
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self._collect(node)
            self.scopes.append((node.name.value, node))
            return True
        self._collect(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self.scopes and self.scopes[-1][1] is original_node:
            self.scopes.pop()
        super().on_leave(original_node)

    # collecting ----------------------------------------------------------------

    def _with_comma(self, start: int, end: int) -> tuple[int, int]:
        """Widen an argument's span to take its comma along: the one after it, or for
        the last argument the one before it."""
        after = end
        while after < len(self.source) and self.source[after] in " \t":
            after += 1
        if after < len(self.source) and self.source[after] == ",":
            after += 1
            while after < len(self.source) and self.source[after] in " \t":
                after += 1
            return start, after
        before = start
        while before > 0 and self.source[before - 1] in " \t\n":
            before -= 1
        if before > 0 and self.source[before - 1] == ",":
            return before - 1, end
        return start, end

    def _operators_for(self, node: cst.CSTNode) -> list[Operator]:
        """The operators whose node type `node` is, looked up once per type: checking
        each node against every operator's types (abstract classes among them) was half
        the time of finding a file's sites."""
        kind = type(node)
        found = self._operators_by_type.get(kind)
        if found is None:
            found = [op for op in self.operators if isinstance(node, op.node_type)]
            self._operators_by_type[kind] = found
        return found

    def _collect(self, node: cst.CSTNode) -> None:
        for operator in self._operators_for(node):
            if isinstance(node, cst.FunctionDef):
                self.scopes.append((node.name.value, node))
                try:
                    self._add(operator, node)
                finally:
                    self.scopes.pop()
            else:
                self._add(operator, node)

    def _add(self, operator: Operator, node: cst.CSTNode) -> None:
        scope = self._function_scope()
        function, function_line = scope.qualname, scope.def_line
        for target, replacement, description in operator.rewrite(node):
            position = self._position(target)
            first = self._position(_leading_decorator(target) or target)
            if position is None or first is None:
                continue
            position = CodeRange(first.start, position.end)
            start = self._offset(position.start.line, position.start.column)
            end = self._offset(position.end.line, position.end.column)
            text = replacement if isinstance(replacement, str) else code(replacement)
            if isinstance(target, cst.Arg) and text == "":
                start, end = self._with_comma(start, end)
            original = self.source[start:end]
            description = description.replace("{original}", _shorten(self.source[start:end]))
            if text == original:
                continue
            key_line = position.start.line - function_line if function else position.start.line
            key = f"{function}::{operator.name}@{key_line}:{position.start.column}"
            ordinal = self.ordinals.get(key, 0)
            self.ordinals[key] = ordinal + 1
            self.sites.append(
                Site(
                    operator=operator.name,
                    family=operator.family,
                    function=function,
                    function_line=function_line,
                    function_first_line=scope.first_line,
                    function_end=scope.end,
                    function_classes=scope.classes,
                    line=position.start.line,
                    col=position.start.column,
                    end_line=position.end.line,
                    end_col=position.end.column,
                    start=start,
                    end=end,
                    original=original,
                    replacement=text,
                    description=description,
                    ordinal=ordinal,
                )
            )


def _shorten(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _leading_decorator(node: cst.CSTNode) -> cst.Decorator | None:
    """libcst places a decorated definition at its `def`; a block that opens with one
    starts at its first decorator."""
    if isinstance(node, cst.IndentedBlock) and node.body:
        first = node.body[0]
        if isinstance(first, (cst.FunctionDef, cst.ClassDef)) and first.decorators:
            return first.decorators[0]
    return None


def find_mutations(source: str, operators: Sequence[Operator]) -> list[Site]:
    """Every mutation the operators make in `source`; raises libcst.ParserSyntaxError."""
    module = cst.parse_module(source)
    collector = _SiteCollector(source, operators)
    MetadataWrapper(module, unsafe_skip_copy=True).visit(collector)
    return collector.sites
