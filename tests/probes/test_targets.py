"""What the probes call: public functions and methods, with the facts read statically."""

from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.probes.edges import classes_of, edge_values
from auditor.probes.targets import expected_exceptions, find_targets


def _targets(tmp_path: Path, source: str):
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return {target.qualname: target for target in find_targets(path, "mod.py", "mod")}


def test_public_functions_and_methods_are_targets_private_and_properties_are_not(tmp_path):
    # A class method is a call of its body through the class (pathspec 1.1.1's
    # `GitIgnoreSpecPattern.pattern_to_regex`); a property is an attribute.
    found = _targets(
        tmp_path,
        """
        def public(x): return x
        def _private(x): return x
        class Box:
            def open(self): return 1
            def _hidden(self): return 2
            @property
            def size(self): return 3
            @staticmethod
            def make(n): return Box()
            @classmethod
            def parse(cls, text): return cls()
        class _Internal:
            def run(self): return 4
        """,
    )
    assert sorted(found) == ["Box.make", "Box.open", "Box.parse", "public"]
    assert found["Box.open"].kind == "method"
    assert found["Box.make"].kind == "staticmethod"
    assert found["Box.parse"].kind == "classmethod"


def test_raise_statements_are_listed_with_their_lines(tmp_path):
    found = _targets(
        tmp_path,
        """
        def check(x):
            if x < 0:
                raise ValueError("negative")
            try:
                return 1 / x
            except ZeroDivisionError:
                raise
        """,
    )
    assert [(r.line, r.exception) for r in found["check"].raises] == [(4, "ValueError"), (8, "")]


def test_a_raise_of_a_variable_names_no_class_and_a_raise_of_a_cast_names_its_type(tmp_path):
    found = _targets(
        tmp_path,
        """
        import typing
        class Bad(Exception): pass
        def load(tokens, error_class):
            last = None
            for token in tokens:
                try:
                    return int(token)
                except ValueError as err:
                    last = err
            if not tokens:
                raise error_class("empty")
            if last is None:
                raise typing.cast(Bad, last)
            raise last
        """,
    )
    raised = [(r.exception, r.written) for r in found["load"].raises]
    assert raised == [
        ("", "error_class('empty')"),
        ("Bad", "typing.cast(Bad, last)"),
        ("", "last"),
    ]


def test_functions_touching_files_network_processes_or_clocks_say_why(tmp_path):
    found = _targets(
        tmp_path,
        """
        import os, socket, subprocess, time
        def tidy(path): os.remove(path)
        def ping(host): return socket.create_connection((host, 80))
        def run(cmd): return subprocess.run(cmd)
        def stamp(): return time.time()
        def join(a, b): return os.path.join(a, b)
        def pure(x): return x + 1
        def wipe_cache(): return None
        """,
    )
    assert "os.remove" in found["tidy"].outside
    assert "name" in found["wipe_cache"].outside
    assert "network" in found["ping"].outside
    assert "processes" in found["run"].outside
    assert "clocks" in found["stamp"].outside
    assert found["join"].outside == ""
    assert found["pure"].outside == ""


def test_documented_raises_and_docstring_literals_are_read(tmp_path):
    found = _targets(
        tmp_path,
        '''
        def parse(text):
            """'1,234.5' -> 123450.

            Raises:
                ValueError: when the text is not an amount.
            """
        ''',
    )
    assert found["parse"].documented_raises == ("ValueError",)
    assert "'1,234.5'" in found["parse"].doc_literals


def test_expected_exceptions_come_from_raises_and_except_clauses(tmp_path):
    test_file = tmp_path / "test_x.py"
    test_file.write_text(
        "import pytest\n"
        "def test_a():\n"
        "    with pytest.raises((KeyError, errors.Bad)):\n"
        "        pass\n"
        "    with pytest.raises(Exception):\n"
        "        pass\n"
        "    try:\n"
        "        pass\n"
        "    except ZeroDivisionError:\n"
        "        pass\n",
        encoding="utf-8",
    )
    assert expected_exceptions([test_file]) == {"KeyError", "Bad", "ZeroDivisionError"}


def test_expected_exceptions_follow_an_edited_test_file(tmp_path):
    test_file = tmp_path / "test_x.py"
    test_file.write_text(
        "import pytest\n\ndef test_a():\n    with pytest.raises(KeyError):\n        pass\n"
    )
    assert expected_exceptions([test_file]) == {"KeyError"}
    test_file.write_text(test_file.read_text().replace("KeyError", "IndexError"))
    assert expected_exceptions([test_file]) == {"IndexError"}


def test_edge_classes_of_values():
    assert classes_of("") == {"empty"}
    assert classes_of(" \t") == {"whitespace"}
    assert "non-ASCII" in classes_of("ñ")
    assert classes_of(0) == {"zero"}
    assert classes_of(-0.0) == {"zero", "negative zero"}
    assert classes_of(float("nan")) == {"NaN"}
    assert classes_of([3, 1, 3]) == {"duplicates", "unsorted"}
    assert classes_of(None) == {"None"}


def test_collection_edges_are_built_from_sample_elements():
    edges = dict(edge_values(list, lambda: [2, 1]))
    assert edges == {
        "empty": [],
        "single element": [2],
        "duplicates": [2, 2],
        "unsorted": [2, 1],
    }


def test_the_call_method_of_a_public_class_is_a_target_other_dunders_are_not(tmp_path):
    found = _targets(
        tmp_path,
        """
        class Check:
            def __call__(self, value): return value
            def __repr__(self): return "Check()"
            def __eq__(self, other): return True
        """,
    )
    assert sorted(found) == ["Check.__call__"]
    assert found["Check.__call__"].kind == "method"


def test_decorators_that_make_no_call_of_the_body_leave_it_out(tmp_path):
    found = _targets(
        tmp_path,
        """
        import contextlib, functools, typing
        @typing.overload
        def parse(x: int) -> int: ...
        def parse(x): return x
        @contextlib.contextmanager
        def opened(x): yield x
        class Box:
            @functools.cached_property
            def size(self): return 3
            @functools.lru_cache
            def area(self): return 9
        """,
    )
    assert sorted(found) == ["Box.area", "parse"]
    # The overload's stub is no target of its own: the definition after it is.
    listed = find_targets(tmp_path / "mod.py", "mod.py", "mod")
    assert [target.line for target in listed if target.qualname == "parse"] == [5]


def test_an_edited_file_is_read_again_in_the_same_process(tmp_path):
    """The warm agent session probes again in one process: targets are kept by content."""
    assert sorted(_targets(tmp_path, "def first(x): return x\n")) == ["first"]
    assert sorted(_targets(tmp_path, "def second(x): return x\n")) == ["second"]


def test_the_same_text_in_another_file_gives_that_files_targets(tmp_path):
    source = "def same(x): return x\n"
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "b.py").write_text(source)
    (first,) = find_targets(tmp_path / "a.py", "a.py", "a")
    (second,) = find_targets(tmp_path / "b.py", "pkg/b.py", "pkg.b")
    assert (first.key, first.module) == ("a.py::same", "a")
    assert (second.key, second.module) == ("pkg/b.py::same", "pkg.b")
