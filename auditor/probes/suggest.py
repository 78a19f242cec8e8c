"""Ready-to-paste pytest tests from a probe's example: the call with literal arguments,
and assertions on what the original code does. A test is only offered when every value
has a literal form that rebuilds an equal value."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
from typing import Any

from auditor.probes.calls import Example, Subject
from auditor.probes.outcomes import Drained, Outcome, by_identity, equal


class NoLiteral(Exception):
    """A value has no repr that rebuilds it."""


def _collect_types(value: Any, found: set[type], depth: int = 0) -> None:
    if depth > 20:
        raise NoLiteral("nested too deeply")
    kind = type(value)
    if kind.__module__ != "builtins":
        found.add(kind)
    if isinstance(value, dict):
        for key, item in value.items():
            _collect_types(key, found, depth + 1)
            _collect_types(item, found, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _collect_types(item, found, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            _collect_types(getattr(value, item.name), found, depth + 1)


class Literals:
    """Reprs of values, with the imports they need, checked to rebuild equal values."""

    def __init__(self) -> None:
        self.types: set[type] = set()

    def __call__(self, value: Any) -> str:
        found: set[type] = set()
        _collect_types(value, found)
        namespace = {kind.__name__: kind for kind in found | self.types}
        text = repr(value)
        try:
            rebuilt = eval(text, namespace)
        except Exception:
            raise NoLiteral(f"{type(value).__name__} has no literal repr") from None
        if not equal(rebuilt, value) or type(rebuilt) is not type(value):
            raise NoLiteral(f"repr of {type(value).__name__} does not rebuild it")
        self.types |= found
        return text

    def imports(self) -> list[str]:
        lines = []
        for kind in sorted(self.types, key=lambda k: (k.__module__, k.__qualname__)):
            if "." in kind.__qualname__ or kind.__module__ == "__main__":
                raise NoLiteral(f"{kind.__qualname__} cannot be imported by name")
            lines.append(f"from {kind.__module__} import {kind.__name__}")
        return lines


def name_for(subject: Subject, tag: str) -> str:
    words = re.sub(r"\W+", "_", subject.spec.qualname.lower()).strip("_")
    digest = hashlib.sha256(tag.encode()).hexdigest()[:8]
    return f"test_{words}_{digest}"


def render(
    subject: Subject,
    example: Example,
    expected: Outcome,
    name: str,
    docstring: str,
    check_state: set[str] | None = None,
) -> str:
    """A test calling `subject` on `example` and asserting `expected` (what the original
    code does). `check_state`: mutable arguments whose state after the call to check."""
    literal = Literals()
    check_state = check_state or set()
    body: list[str] = []
    names: dict[str, str] = {}
    for param in sorted(check_state | ({"self"} if subject.is_method else set())):
        if param in example:
            variable = "subject" if param == "self" else param
            text = _instance(subject, example[param], literal) if param == "self" else None
            body.append(f"{variable} = {text or literal(example[param])}")
            names[param] = variable
    positional, keyword = subject._arguments(example)
    parameter_names = [n for n in subject.signature.parameters if n in example and n != "self"]
    arguments = []
    for index, value in enumerate(positional):
        param = parameter_names[index]
        arguments.append(names.get(param) or literal(value))
    for key, value in keyword.items():
        arguments.append(f"{key}={names.get(key) or literal(value)}")
    owner = subject.owner_class
    if subject.is_method:
        if "self" not in names:
            raise NoLiteral("no instance")
        call = f"subject{subject.attribute}({', '.join(arguments)})"
        imported = owner
    elif subject.is_constructor:
        assert owner is not None
        call = f"{owner.__name__}({', '.join(arguments)})"
        imported = owner
    elif owner is not None:
        call = f"{owner.__name__}.{subject.name}({', '.join(arguments)})"
        imported = owner
    else:
        call = f"{subject.name}({', '.join(arguments)})"
        imported = subject.function
    if expected.kind == "raised":
        assert expected.error is not None
        error_type = type(expected.error)
        exception = error_type.__name__
        if error_type.__module__ != "builtins":
            literal.types.add(error_type)
        message = str(expected.error)
        match = f", match={re.escape(message)!r}" if message and "\n" not in message else ""
        body += [f"with pytest.raises({exception}{match}):", f"    {call}"]
    elif expected.kind == "returned":
        if check_state and expected.value is None:
            body.append(call)
        elif isinstance(expected.value, Drained):
            body.append(_yields(call, expected.value, literal))
        elif by_identity(expected.value, "__eq__"):  # what it built, attribute by attribute
            body.append(f"assert vars({call}) == {literal(vars(expected.value))}")
        else:
            body.append(f"assert {call} == {literal(expected.value)}")
        for param in sorted(check_state):
            if param in names and param in expected.after:
                body.append(f"assert {names[param]} == {literal(expected.after[param])}")
    else:
        raise NoLiteral("the original does not return")
    imports = sorted({*literal.imports(), f"from {subject.spec.module} import {imported.__name__}"})
    uses_pytest = expected.kind == "raised"
    header = (["import pytest", ""] if uses_pytest else []) + imports
    lines = [*header, "", "", f"def {name}():", f'    """{docstring}"""']
    lines += [f"    {line}" for line in body]
    return "\n".join(lines) + "\n"


def _instance(subject: Subject, instance: Any, literal: Literals) -> str | None:
    """The instance built as a test built it, when its repr is no literal."""
    try:
        return literal(instance)
    except NoLiteral:
        return subject.construction_text(instance, literal)


def _yields(call: str, value: Drained, literal: Literals) -> str:
    """The assertion on what a returned iterator yields: its first items, when it has
    more."""
    items = literal(list(value.items))
    if not value.more:
        return f"assert list({call}) == {items}"
    literal.types.add(itertools.islice)
    return f"assert list(islice({call}, {len(value.items)})) == {items}"


def run_test(code: str, name: str) -> BaseException | None:
    """Run a rendered test in this process: None when it passes, else what it raised."""
    namespace: dict[str, Any] = {"__name__": "audit_suggested"}
    try:
        exec(compile(code, "<suggested test>", "exec"), namespace)
        namespace[name]()
    except BaseException as error:
        return error
    return None
