"""The values the tests passed, rebuilt from their reprs, become each parameter's inputs:
an argument whose repr rebuilds nothing (`<Parser 'a {}'>`) leaves the others of its call
usable (parse 1.20.2: `Parser.parse(self, string)` was "not probeable" although the
tests passed it dozens of strings)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from auditor.probes.calls import Subject
from tests.conftest import target_spec

SOURCE = """
import typing


class Holder:
    pass


def keep(value: typing.Any):
    return value


def pick(key, holder=None):
    return key
"""

UNREBUILDABLE = ("<Holder object>", "{module}.Holder")


def _subject(module: tuple[str, Path], observed: list[dict], function: str = "pick") -> Subject:
    name, path = module
    target = target_spec(f"{path.name}::{function}", str(path.resolve()), name)
    return Subject(replace(target, observed=observed), {str(path.resolve())})


def _calls(module: tuple[str, Path], *keys: str) -> list[dict]:
    holder = (UNREBUILDABLE[0], UNREBUILDABLE[1].format(module=module[0]))
    return [{"holder": holder, "key": (repr(key), "str")} for key in keys]


def test_an_argument_that_does_not_rebuild_leaves_the_others_of_its_call_as_inputs(module):
    subject = _subject(module, _calls(module, "a", "b"))
    key = next(param for param in subject.params if param.name == "key")
    assert (key.source, key.detail) == ("observed", "2 seen: 'a', 'b'")


def test_a_call_with_an_argument_that_does_not_rebuild_is_not_made_again_whole(module):
    name, _ = module
    rebuilt = {"holder": ("Holder()", f"{name}.Holder"), "key": ("'b'", "str")}
    calls = [*_calls(module, "a"), rebuilt]
    subject = _subject(module, calls)
    assert [call["key"] for call in subject.observed] == ["b"]


def test_values_seen_for_a_parameter_hinted_any_are_its_inputs(module):
    # typing.Any is a class on Python 3.11+, and isinstance() refuses it.
    subject = _subject(module, [{"value": ("'a'", "str")}], function="keep")
    value = next(param for param in subject.params if param.name == "value")
    assert (value.source, value.detail) == ("type hint", "Any")
