"""A method's instances built with the arguments the tests built its class with: the
recorded `__init__` call becomes a call of the class, and only calls of the `__init__`
the class resolves to count (a subclass's `__init__` calls its base's with others)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from auditor.probes.calls import Subject, constructor_arguments
from tests.conftest import target_spec

SOURCE = """
class Base:
    def __init__(self, error=None):
        self.error = error


class Length(Base):
    def __init__(self, most=None, error=None):
        super().__init__(error="from the base")
        self.most = most

    def check(self, value: str) -> bool:
        return self.most is None or len(value) <= self.most


class Short(Base):
    def check(self, value: str) -> bool:
        return self.error is None
"""


class Options:
    def __init__(self, most=None, error="too long", *, strict=False):
        pass


class Positional:
    def __init__(self, first, /, second=1):
        pass


class Spread:
    def __init__(self, first, *rest, **options):
        pass


def test_an_argument_is_passed_by_keyword_and_left_out_at_its_default():
    arguments = {"most": 2, "error": "too long", "strict": True}
    assert constructor_arguments(Options, arguments) == ([], {"most": 2, "strict": True})


def test_a_positional_only_argument_is_passed_by_position():
    assert constructor_arguments(Positional, {"first": 0, "second": 2}) == ([0], {"second": 2})


def test_recorded_star_arguments_are_spread_and_what_comes_before_goes_by_position():
    arguments = {"first": 0, "rest": (1, 2), "options": {"flag": True}}
    assert constructor_arguments(Spread, arguments) == ([0, 1, 2], {"flag": True})


LENGTH_CALLS = {
    "Length.__init__": [{"most": ("2", "int"), "error": ("None", "NoneType")}],
    "Base.__init__": [{"error": ("'from the base'", "str")}],
}
"""What the baseline records for `Length(most=2)`, by the `__init__` that ran."""


def _subject(module: tuple[str, Path], qualname: str, calls: dict) -> Subject:
    name, path = module
    target = target_spec(f"{path.name}::{qualname}", str(path.resolve()), name)
    return Subject(replace(target, kind="method", constructions=calls), {str(path.resolve())})


def test_a_method_s_instances_include_those_built_as_the_tests_built_them(module):
    subject = _subject(module, "Length.check", LENGTH_CALLS)
    assert subject.constructions == [{"most": 2, "error": None}]
    shown = subject.construction_text(subject.construct(subject.constructions[0]), repr)
    assert shown == "Length(most=2)"


def test_the_base_s_init_called_by_a_subclass_s_own_builds_no_instance(module):
    # `Length(error='from the base')` is not what any test built.
    calls = {"Base.__init__": LENGTH_CALLS["Base.__init__"]}
    assert _subject(module, "Length.check", calls).constructions == []


def test_a_subclass_without_its_own_init_is_built_by_its_base_s(module):
    calls = {"Base.__init__": [{"error": ("'short'", "str")}]}
    assert _subject(module, "Short.check", calls).constructions == [{"error": "short"}]


def test_an_instance_no_test_built_has_no_construction_to_show(module):
    subject = _subject(module, "Length.check", LENGTH_CALLS)
    assert subject.construction_text(subject.construct({"most": 5}), repr) is None
