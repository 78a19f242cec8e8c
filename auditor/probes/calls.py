"""Inside the probe child: a function under test as something Hypothesis can call.

`Subject` resolves the live function, chooses a strategy per parameter (type hints, the
values the suite passed, defaults, docstring literals, plus the edge catalogue; built by
`strategies`), and calls it on an example, returning an `Outcome` (`outcomes`) that says
what happened."""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import inspect
import linecache
import sys
import typing
from collections.abc import Callable
from types import CodeType, FunctionType, TracebackType
from typing import Any

from hypothesis import strategies as st

from auditor.probes.copying import can_change, fresh
from auditor.probes.edges import edge_values
from auditor.probes.hangs import CallTimeout, alarm, guarded_call
from auditor.probes.outcomes import Outcome, drained, equal, short_repr
from auditor.probes.own_time import Stopwatch
from auditor.probes.protocol import TargetSpec
from auditor.probes.reach import Tracer, real_path, watching
from auditor.probes.strategies import (
    allows_none,
    concrete_types,
    for_hypothesis,
    items_of,
    like,
    tolerant,
    type_text,
    validate,
)
from auditor.report import ParamStrategy

Example = dict[str, Any]


CPU_TIMER_TICK = 0.01
"""What a CPU timer may charge a call beyond its use: the kernel charges the process a
whole clock tick (4-10 ms) when one lands while it runs, so a call of microseconds can
fire a 2 ms timer. The timer only stops a loop; the call's measured own time decides."""

MAX_HANGS = 2
"""Calls that may time out before a function is not called any more (each costs the
call timeout)."""


def _load(path: str) -> Any:
    module, _, qualname = path.partition(":")
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _new(path: str, state: dict[str, Any]) -> Any:
    kind = _load(path)
    instance = kind.__new__(kind)
    instance.__dict__.update(state)
    return instance


REBUILDERS = {
    "__audit_call__": lambda path, *args, **kwargs: _load(path)(*args, **kwargs),
    "__audit_member__": lambda path, name: _load(path)[name],
    "__audit_new__": _new,
}
"""The helpers `observe.recipe` writes calls of."""


class NotProbeable(Exception):
    """The function cannot be called with generated inputs; the message says why."""


def constructor_arguments(kind: type, arguments: Example) -> tuple[list[Any], dict[str, Any]]:
    """An `__init__` call's recorded arguments as a call of `kind`: by keyword where they
    can be, leaving out those at their default."""
    positional: list[Any] = []
    keyword: dict[str, Any] = {}
    parameters = list(inspect.signature(kind.__init__).parameters.values())[1:]
    spread = any(p.kind == p.VAR_POSITIONAL and arguments.get(p.name) for p in parameters)
    for parameter in parameters:
        if parameter.name not in arguments:
            continue
        value = arguments[parameter.name]
        if parameter.kind == parameter.VAR_POSITIONAL:
            positional += list(value)
        elif parameter.kind == parameter.VAR_KEYWORD:
            keyword.update(value)
        elif parameter.kind == parameter.POSITIONAL_ONLY or (
            spread and parameter.kind == parameter.POSITIONAL_OR_KEYWORD
        ):
            positional.append(value)
        elif not _is_default(parameter, value):
            keyword[parameter.name] = value
    return positional, keyword


def _is_default(parameter: inspect.Parameter, value: object) -> bool:
    default = parameter.default
    if default is inspect.Parameter.empty or type(value) is not type(default):
        return False
    with contextlib.suppress(Exception):
        return bool(value == default)
    return False


class Subject:
    """One function of the code under test, callable on generated examples."""

    def __init__(self, spec: TargetSpec, source_files: set[str]) -> None:
        self.spec = spec
        self.source_files = source_files
        self.module = importlib.import_module(spec.module)
        owner: Any = self.module
        self.owner_class: type | None = None
        for part in spec.qualname.split(".")[:-1]:
            owner = getattr(owner, part)
            self.owner_class = owner
        self.name = spec.qualname.split(".")[-1]
        raw = inspect.getattr_static(owner, self.name)
        binds_class = isinstance(raw, classmethod)
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        if not isinstance(raw, FunctionType):
            raise NotProbeable(f"{spec.qualname} is not a plain function")
        self.function: FunctionType = inspect.unwrap(raw)  # type: ignore[assignment]
        if self.function.__name__ != self.name:
            # A decorator's wrapper that does not say what it wraps (`functools.wraps`):
            # neither its parameters nor the lines it runs are the function's.
            raise NotProbeable(f"{spec.qualname} is replaced by its decorator's wrapper")
        self.code: CodeType = self.function.__code__
        self.is_method = spec.kind == "method"
        self.is_constructor = spec.kind == "constructor"
        self.signature = inspect.signature(self.function)
        if binds_class:  # `cls`: the call through the class gives it
            bound, *parameters = self.signature.parameters.values()
            self.signature = self.signature.replace(parameters=parameters)
        rebuilt = [self._rebuilt_arguments(call) for call in spec.observed]
        self._seen: list[Example] = rebuilt
        """Each observed call's arguments that rebuild, whether or not the others do."""
        made_by_the_call = (
            {next(iter(self.signature.parameters), "")} if self.is_constructor else set()
        )
        if binds_class:
            made_by_the_call.add(bound.name)
        self.observed = [
            args
            for args, call in zip(rebuilt, spec.observed, strict=True)
            if set(call) - set(args) <= made_by_the_call
        ]
        """The observed calls whose every argument rebuilds (a constructor's `self` is made
        by the call): calls that can be made again."""
        self.params: list[ParamStrategy] = []
        self.constructions: list[Example] = []
        self._built: list[Any] = []
        self.hangs = 0
        self.strategy = self._build_strategy()

    # strategies ---------------------------------------------------------------

    def _namespace(self, call: dict[str, tuple[str, str]]) -> dict[str, Any]:
        namespace = dict(vars(self.module))
        namespace.update(REBUILDERS)
        for _, type_name in call.values():
            module_name, _, name = type_name.rpartition(".")
            if module_name and "." not in name:
                try:
                    namespace[name] = getattr(importlib.import_module(module_name), name)
                except Exception:
                    continue
        return namespace

    def _rebuilt_arguments(self, call: dict[str, tuple[str, str]]) -> Example:
        """An observed call's arguments rebuilt from their reprs, leaving out those that do
        not rebuild into a value of the recorded type: an `__init__`'s `self`, or an
        argument whose repr rebuilds nothing (`<Parser 'a {}'>`), leaves the others of
        the call usable as values of their parameters."""
        namespace = self._namespace(call)
        example: Example = {}
        for name, (text, type_name) in call.items():
            try:
                value = eval(text, namespace)
            except Exception:
                continue
            kind = type(value)
            recorded = kind.__qualname__ if kind.__module__ == "builtins" else ""
            if type_name in (recorded, f"{kind.__module__}.{kind.__qualname__}"):
                example[name] = value
        return example

    def _hints(self) -> dict[str, Any]:
        try:
            return typing.get_type_hints(self.function)
        except Exception:
            return {}

    def _observed_values(self, name: str) -> list[Any]:
        values: list[Any] = []
        for call in self._seen:
            if name in call and not any(equal(call[name], seen) for seen in values):
                values.append(call[name])
        return values

    def _doc_values(self) -> list[Any]:
        import ast

        values = []
        for literal in self.spec.doc_literals:
            try:
                values.append(ast.literal_eval(literal))
            except (ValueError, SyntaxError):
                continue
        return values

    def _for_types(self, kinds: list[type], samples: list[Any]) -> list[tuple[str, Any]]:
        edges: list[tuple[str, Any]] = []
        for kind in kinds:
            elements = [
                item for sample in samples if isinstance(sample, kind) for item in items_of(sample)
            ]
            edges += edge_values(kind, lambda elements=elements: elements)
        return edges

    def _parameter(
        self, parameter: inspect.Parameter, hint: Any
    ) -> tuple[st.SearchStrategy[Any] | None, ParamStrategy, list[tuple[str, Any]]]:
        name = parameter.name
        observed = self._observed_values(name)
        has_default = parameter.default is not inspect.Parameter.empty
        strategy: st.SearchStrategy[Any] | None = None
        kinds: list[type] = []
        if hint is not None:
            try:
                strategy = tolerant(st.from_type(for_hypothesis(hint)), observed)
                kinds = concrete_types(hint)
                source: ParamStrategy = ParamStrategy(
                    name=name, source="type hint", detail=type_text(hint)
                )
            except Exception:
                strategy = None
        if strategy is None and observed:
            kinds = sorted({type(value) for value in observed}, key=lambda k: k.__qualname__)
            generated = []
            for kind in kinds:
                try:
                    candidate = like(kind, [v for v in observed if type(v) is kind])
                    validate(candidate)
                    generated.append(candidate)
                except Exception:
                    continue
            strategy = st.one_of(generated) if generated else st.nothing()
            shown = ", ".join(short_repr(value, 40) for value in observed[:4])
            source = ParamStrategy(
                name=name, source="observed", detail=f"{len(observed)} seen: {shown}"
            )
        if strategy is None and has_default and parameter.default is not None:
            kinds = [type(parameter.default)]
            try:
                strategy = st.from_type(kinds[0])
                validate(strategy)
                source = ParamStrategy(
                    name=name, source="default", detail=short_repr(parameter.default, 60)
                )
            except Exception:
                strategy = None
        if strategy is None:
            literals = self._doc_values()
            if literals:
                kinds = sorted({type(value) for value in literals}, key=lambda k: k.__qualname__)
                strategy = st.one_of([st.from_type(kind) for kind in kinds])
                source = ParamStrategy(
                    name=name,
                    source="docstring",
                    detail=", ".join(short_repr(v, 30) for v in literals[:4]),
                )
        if strategy is None:
            typed = f"no strategy for {type_text(hint)}" if hint is not None else "no type hint"
            why = f"{typed}, no value seen in the tests, no default"
            return None, ParamStrategy(name=name, source="not probeable", detail=why), []
        edges = self._for_types(kinds, observed)
        if allows_none(hint) or (has_default and parameter.default is None):
            edges.append(("None", None))
        explicit = [value for _, value in edges] + observed
        explicit += [v for v in self._doc_values() if kinds and isinstance(v, tuple(kinds))]
        if has_default:
            explicit.append(parameter.default)
        if explicit:
            strategy = st.one_of(strategy, st.sampled_from(explicit))
        return strategy, source, edges

    def _constructions(self) -> list[Example]:
        """The arguments the tests built instances of the method's class with, each
        rebuilt: `builds` fills only required arguments, and a method's checks often
        need a configured object (`Length(max=1)`, not `Length()`)."""
        assert self.owner_class is not None
        initializer = inspect.unwrap(self.owner_class.__init__)
        calls = self.spec.constructions.get(getattr(initializer, "__qualname__", ""), [])
        rebuilt = ((self._rebuilt_arguments(call), call) for call in calls)
        return [arguments for arguments, call in rebuilt if len(arguments) == len(call)]

    def construct(self, arguments: Example) -> Any:
        assert self.owner_class is not None
        positional, keyword = constructor_arguments(self.owner_class, arguments)
        return self.owner_class(*positional, **keyword)

    def construction_text(self, instance: object, show: Callable[[Any], str]) -> str | None:
        """The call that builds an instance equal to this one as a test did, its
        arguments shown by `show`; None when no test built one like it."""
        assert self.owner_class is not None
        for arguments, built in zip(self.constructions, self._built, strict=True):
            with contextlib.suppress(Exception):
                if equal(built, instance):
                    positional, keyword = constructor_arguments(self.owner_class, arguments)
                    shown = [show(value) for value in positional]
                    shown += [f"{name}={show(value)}" for name, value in keyword.items()]
                    return f"{self.owner_class.__name__}({', '.join(shown)})"
        return None

    def _constructed(self) -> list[Any]:
        """Instances built as the tests built them (`constructions` keeps the arguments
        of each)."""
        for arguments in self._constructions():
            try:
                instance = self.construct(arguments)
            except Exception:
                continue  # the call depended on what the test had set up
            self.constructions.append(arguments)
            self._built.append(instance)
        return list(self._built)

    def _self_strategy(self) -> st.SearchStrategy[Any]:
        assert self.owner_class is not None
        instances = self._observed_values("self")
        options: list[st.SearchStrategy[Any]] = []
        try:
            # Dataclasses and attrs classes from their fields, others from `__init__`'s
            # hints; an instance the class refuses to build is no example.
            built = tolerant(st.builds(self.owner_class), instances)
            options.append(built)
        except Exception:
            pass
        if instances:
            options.append(st.sampled_from(instances))
        constructed = self._constructed()
        if constructed:
            options.append(st.sampled_from(constructed))
        if not options:
            raise NotProbeable(
                f"cannot build a {self.owner_class.__name__}: its __init__ has arguments "
                "without type hints, and no instance seen in the tests has a literal repr"
            )
        seen = instances or constructed
        detail = f"{self.owner_class.__name__} instances"
        if constructed:
            detail += f", {len(constructed)} built as the tests built them"
        self.params.append(
            ParamStrategy(name="self", source="observed" if seen else "type hint", detail=detail)
        )
        return st.one_of(options)

    def _build_strategy(self) -> st.SearchStrategy[Example]:
        hints = self._hints()
        parts: dict[str, st.SearchStrategy[Any]] = {}
        optional: dict[str, st.SearchStrategy[Any]] = {}
        self.edges: dict[str, list[tuple[str, Any]]] = {}
        parameters = list(self.signature.parameters.values())
        if self.is_method or self.is_constructor:
            if not parameters:
                raise NotProbeable("a method without `self`")
            if self.is_method:
                parts["self"] = self._self_strategy()
            parameters = parameters[1:]
        missing = []
        for parameter in parameters:
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            strategy, described, edges = self._parameter(parameter, hints.get(parameter.name))
            self.params.append(described)
            if strategy is None:
                if parameter.default is inspect.Parameter.empty:
                    missing.append(parameter.name)
                continue
            if parameter.default is inspect.Parameter.empty:
                parts[parameter.name] = strategy
            else:
                optional[parameter.name] = strategy  # sometimes left to its default
            self.edges[parameter.name] = edges
        if missing:
            raise NotProbeable(f"no way to generate {', '.join(missing)}")
        return st.fixed_dictionaries(parts, optional=optional)

    # calling --------------------------------------------------------------------

    def call_text(self, example: Example) -> str:
        """The call as Python source (reprs of the values)."""
        args = self._arguments(example)
        positional, keyword = args
        shown = [short_repr(v, 200) for v in positional]
        shown += [f"{k}={short_repr(v, 200)}" for k, v in keyword.items()]
        if self.is_method:
            instance = example["self"]
            built = self.construction_text(instance, lambda value: short_repr(value, 200))
            return f"{built or short_repr(instance, 300)}{self.attribute}({', '.join(shown)})"
        if self.is_constructor:
            assert self.owner_class is not None
            return f"{self.owner_class.__name__}({', '.join(shown)})"
        prefix = f"{self.owner_class.__name__}." if self.owner_class else ""
        return f"{prefix}{self.name}({', '.join(shown)})"

    @property
    def attribute(self) -> str:
        """What follows an instance to call the method: `.name`, nothing for `__call__`."""
        return "" if self.name == "__call__" else f".{self.name}"

    def _arguments(self, example: Example) -> tuple[list[Any], dict[str, Any]]:
        positional: list[Any] = []
        keyword: dict[str, Any] = {}
        skipped = False
        bound = next(iter(self.signature.parameters), None)
        for name, parameter in self.signature.parameters.items():
            if (self.is_method or self.is_constructor) and name == bound:
                continue
            if name not in example:
                skipped = True  # left to its default: later ones go by keyword
                continue
            if parameter.kind == parameter.POSITIONAL_ONLY:
                positional.append(example[name])
            elif parameter.kind == parameter.KEYWORD_ONLY or keyword or skipped:
                keyword[name] = example[name]
            else:
                positional.append(example[name])
        return positional, keyword

    def callable_for(self, example: Example) -> Any:
        if self.is_method:
            return getattr(example["self"], self.name)
        if self.is_constructor:
            return self.owner_class
        owner = self.owner_class or self.module
        return getattr(owner, self.name)

    def invoke(
        self,
        example: Example,
        timeout: float,
        trace_lines: bool = False,
        watch: Tracer | None = None,
    ) -> Outcome:
        """Call the function on a copy of `example` (`fresh`). `trace_lines` keeps the
        lines of the function's own code that ran; `watch`, a trace function, sees the
        call and not the copy."""
        if self.hangs >= MAX_HANGS:
            return Outcome("skipped")
        example = fresh(example)
        positional, keyword = self._arguments(example)
        target = self.callable_for(example)
        lines: set[int] = set()
        codes = {self.function.__code__}

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            if frame.f_code in codes:
                if event == "line":
                    lines.add(frame.f_lineno)
                return tracer
            return None

        with watching(watch) if watch else contextlib.nullcontext(), guarded_call(timeout) as make:
            outcome = (
                self._call(target, positional, keyword, timeout, tracer if trace_lines else None)
                if make
                else Outcome("hung")
            )
        if outcome.kind == "hung":
            self.hangs += 1
        outcome.after = {name: value for name, value in example.items() if can_change(value)}
        outcome.lines = frozenset(lines)
        return outcome

    def _call(
        self,
        target: Any,
        positional: list[Any],
        keyword: dict[str, Any],
        timeout: float,
        tracer: Any,
    ) -> Outcome:
        """Make the call, stopped after `timeout` seconds of its own time (`own_time`:
        the same calls hang on an idle machine and a loaded one); `tracer` (when given)
        sees its lines. The CPU timer stops a loop; the clock's timer stops a call that
        sleeps or waits, once its own time is past the timeout (each time it fires before,
        the load made the clock run, and it is set again); one that ends past its timeout
        hung.

        The garbage collector waits until the call has returned: when a collection of the
        whole heap comes depends on what ran before (which work items the process got),
        and one that came inside a quick call made it slow."""
        if tracer is not None:
            sys.settrace(tracer)
        collecting = gc.isenabled()
        gc.disable()
        watch = Stopwatch()
        try:
            over = functools.partial(watch.over, timeout)
            with alarm(timeout, late=over), alarm(timeout + CPU_TIMER_TICK, cpu=True):
                value = drained(target(*positional, **keyword))
            late, outcome = watch.over(timeout), Outcome("returned", value=value)
        except CallTimeout:
            return Outcome("hung")
        except (Exception, SystemExit) as error:
            # A command's entry point exits on arguments it refuses (argparse): what it
            # does, as a raise is, not an end of the probe.
            late, outcome = watch.over(timeout), self._raised(error)
        finally:
            if tracer is not None:
                sys.settrace(None)
            if collecting:
                gc.enable()
        return Outcome("hung") if late else outcome

    def _raised(self, error: BaseException) -> Outcome:
        traceback: TracebackType | None = error.__traceback__
        inside = False
        where = ("", 0)
        on_purpose = type(error).__name__ in self.spec.documented_raises
        below: list[tuple[CodeType, int]] = []
        """The frames from the function's own down, with the line each was at."""
        while traceback is not None:
            code = traceback.tb_frame.f_code
            if code is self.function.__code__ or code.co_name == self.code.co_name:
                inside = True
            if inside:
                below.append((code, traceback.tb_lineno))
            filename = real_path(code.co_filename)
            if filename in self.source_files:
                where = (filename, traceback.tb_lineno)
            traceback = traceback.tb_next
        if where[0]:
            line = linecache.getline(where[0], where[1]).strip()
            on_purpose = on_purpose or line.startswith("raise")
        if isinstance(error, TypeError) and below and all(map(_passes_on, below)):
            inside = False  # raised binding what it passes on, as binding its own arguments
        return Outcome("raised", error=error, where=where, on_purpose=on_purpose, inside=inside)


def _passes_on(frame: tuple[CodeType, int]) -> bool:
    """Whether the frame's line passes its function's own `*args` or `**kwargs` on. A
    TypeError raised where each frame from the probed function's down does, in no deeper
    frame, is the last callee refusing the arguments the probe gave (`Forbidden()` of
    schema 0.7.8: its `__init__(*args, **kwargs)` and its base `Hook`'s hand them to
    `Schema.__init__(self, schema, ...)`), not a crash of the code."""
    code, line_number = frame
    line = linecache.getline(code.co_filename, line_number)
    packed = code.co_varnames[code.co_argcount + code.co_kwonlyargcount :]
    stars = []
    if code.co_flags & inspect.CO_VARARGS:
        stars.append("*")
    if code.co_flags & inspect.CO_VARKEYWORDS:
        stars.append("**")
    return any(f"{star}{name}" in line for star, name in zip(stars, packed, strict=False))
