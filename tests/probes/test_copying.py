"""The copy of an input each probe call gets: the data copied, what `copy.deepcopy`
keeps (functions, classes, modules) kept, and an input that cannot be copied passed on
as it is."""

from __future__ import annotations

import enum
import threading
import types

from auditor.probes.copying import fresh


class Point:
    def __init__(self, x: int, tags: list[str]) -> None:
        self.x, self.tags = x, tags


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class DeepcopyOnly:
    """Refused by pickle, copied by `copy.deepcopy`."""

    def __init__(self, items: list[int]) -> None:
        self.items = items

    def __reduce_ex__(self, protocol: int) -> object:
        raise TypeError("not picklable")

    def __deepcopy__(self, memo: dict) -> DeepcopyOnly:
        return DeepcopyOnly(list(self.items))


def test_nested_data_is_copied_all_the_way_down():
    example = {"rows": [[1, 2], {"a": [3]}], "point": Point(1, ["t"])}
    copied = fresh(example)
    copied["rows"][0].append(9)
    copied["rows"][1]["a"].append(9)
    copied["point"].tags.append("u")
    assert example["rows"] == [[1, 2], {"a": [3]}]
    assert example["point"].tags == ["t"]
    assert type(copied["point"]) is Point


def test_objects_shared_inside_one_input_stay_shared_in_its_copy():
    shared = [1]
    copied = fresh({"a": shared, "b": [shared]})
    assert copied["a"] is copied["b"][0]
    assert copied["a"] is not shared


def test_functions_classes_and_modules_are_the_input_s_own():
    def key(value: int) -> int:
        return -value

    example = {"key": key, "lambda": lambda: 1, "kind": Point, "module": types, "items": [1]}
    copied = fresh(example)
    assert [copied[name] is example[name] for name in ("key", "lambda", "kind", "module")] == [
        True
    ] * 4
    assert copied["items"] == [1] and copied["items"] is not example["items"]


def test_an_instance_keeps_its_class_when_its_module_names_another_by_now():
    point = Point(1, [])
    old_class = Point
    globals()["Point"] = type("Point", (), {})  # as a mutant running the module again does
    try:
        copied = fresh({"point": point})
    finally:
        globals()["Point"] = old_class
    assert type(copied["point"]) is old_class
    assert copied["point"] is not point


def test_an_enum_member_is_kept_not_looked_up_again_by_its_value(monkeypatch):
    # As where a mutant ran the enum's module again with other values.
    monkeypatch.setitem(Colour._value2member_map_, "red", Colour.BLUE)
    assert fresh({"colours": [Colour.RED]})["colours"][0] is Colour.RED


def test_an_input_pickle_refuses_is_copied_by_deepcopy():
    example = {"value": DeepcopyOnly([1])}
    copied = fresh(example)
    copied["value"].items.append(2)
    assert example["value"].items == [1]


def test_an_input_nothing_can_copy_is_passed_as_it_is():
    example = {"lock": threading.Lock(), "items": [1]}
    assert fresh(example) is example


def test_an_input_of_values_no_call_can_change_is_not_copied():
    example = {"n": 3, "text": "abc", "pair": (1, 2), "nothing": None}
    assert fresh(example) is example


class Refusing:
    """Refused by pickle and by `copy.deepcopy`; counts the attempts."""

    attempts = 0

    def __reduce_ex__(self, protocol: int) -> object:
        Refusing.attempts += 1
        raise TypeError("not picklable")

    def __deepcopy__(self, memo: dict) -> Refusing:
        Refusing.attempts += 1
        raise TypeError("not copyable")


def test_a_class_nothing_could_copy_is_not_tried_again():
    first = {"value": Refusing(), "items": [1]}
    assert fresh(first) is first
    attempts = Refusing.attempts
    second = {"value": Refusing(), "items": [2]}
    assert fresh(second) is second
    assert attempts > 0
    assert Refusing.attempts == attempts


def test_a_list_that_could_not_be_copied_once_is_tried_again():
    refused = {"items": [threading.Lock()]}
    assert fresh(refused) is refused
    example = {"items": [1]}
    copied = fresh(example)
    copied["items"].append(2)
    assert example["items"] == [1]
