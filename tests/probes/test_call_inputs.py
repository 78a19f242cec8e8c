"""Each call of a probed function gets its own copy of the input: a call that changes
its arguments leaves the drawn input as it was for the next call, and a trace that
watches the call sees the call's lines, not the copying's."""

from __future__ import annotations

import sys
from pathlib import Path

from auditor.probes.reach import FileLines
from tests.conftest import subject_of

SOURCE = """
class Box:
    def __init__(self, items: list):
        self.items = items

    def __getstate__(self):
        return dict(self.__dict__)  # GETSTATE


def take_first(box: Box) -> int:
    return box.items.pop(0)  # TAKE


def grow(items: list) -> int:
    items.append(0)
    return len(items)
"""


def _line_of(path: Path, marker: str) -> int:
    lines = path.read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if marker in text)


def test_a_call_that_changes_its_input_leaves_the_input_as_drawn(module):
    subject = subject_of(module, "grow")
    example = {"items": [1, 2]}
    first = subject.invoke(example, timeout=1.0)
    second = subject.invoke(example, timeout=1.0)
    assert (first.value, second.value) == (3, 3)
    assert example == {"items": [1, 2]}


def test_an_input_pickle_refuses_is_copied_all_the_same(module):
    subject = subject_of(module, "grow")
    unpicklable = lambda: 1  # noqa: E731
    example = {"items": [unpicklable]}
    assert subject.invoke(example, timeout=1.0).value == 2
    assert example == {"items": [unpicklable]}


def test_the_watch_sees_the_lines_of_the_call_and_not_those_of_the_copy(module):
    name, path = module
    subject = subject_of(module, "take_first")
    box = sys.modules[name].Box([5, 6])
    watch = FileLines(str(path))
    assert subject.invoke({"box": box}, timeout=1.0, watch=watch).value == 5
    assert _line_of(path, "# TAKE") in watch.lines
    assert _line_of(path, "# GETSTATE") not in watch.lines
    assert box.items == [5, 6]
