"""What audit reads from a test file's source: imports, each test's first line and
checks, and the exceptions it expects, from one parse kept by content."""

import ast

from auditor.discovery.test_source import Import, read_test_source
from auditor.discovery.test_source import test_source as facts_of

SOURCE = b"""\
import os.path
from . import helpers
from ..pkg.mod import parse as p
from ..pkg.mod import *
import pytest


def test_parses():
    value = p("1")
    assert value == 1
    helpers.assert_close(value, 1.0)


class TestErrors:
    def test_rejects(self):
        with pytest.raises((ValueError, errors.ParseError)):
            p("x")

    def test_anything(self):
        try:
            p("")
        except Exception:
            pass
        self.assertRaises(KeyError, p, None)
"""


def test_imports_keep_their_level_and_the_name_they_import():
    assert facts_of(SOURCE).imports == (
        Import("os.path", 0, None),
        Import(None, 1, "helpers"),
        Import("pkg.mod", 2, "parse"),
        Import("pkg.mod", 2, None),
        Import("pytest", 0, None),
    )


def test_functions_and_methods_are_named_by_qualname_with_their_first_line():
    assert dict(facts_of(SOURCE).functions) == {
        "test_parses": 8,
        "TestErrors.test_rejects": 15,
        "TestErrors.test_anything": 19,
    }


def test_each_function_checks_on_asserts_assert_calls_and_raises():
    assert dict(facts_of(SOURCE).checks) == {
        "test_parses": (10, 11),
        "TestErrors.test_rejects": (16,),
        "TestErrors.test_anything": (24,),
    }


def test_expected_exceptions_are_named_by_their_last_part_and_broad_ones_left_out():
    assert facts_of(SOURCE).expected == {"ValueError", "ParseError", "KeyError"}


def test_a_file_that_does_not_parse_has_no_facts(tmp_path):
    broken = tmp_path / "test_broken.py"
    broken.write_text("def test_x(:\n    assert True\n")
    facts = read_test_source(broken)
    assert (facts.imports, dict(facts.checks), facts.expected) == ((), {}, frozenset())


def test_a_missing_file_has_no_facts(tmp_path):
    facts = read_test_source(tmp_path / "test_gone.py")
    assert (facts.imports, dict(facts.functions)) == ((), {})


def test_the_same_content_is_parsed_once(monkeypatch):
    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(
        ast, "parse", lambda *args, **kw: parsed.append(1) or real_parse(*args, **kw)
    )
    content = SOURCE + b"\n# a copy only this test reads\n"
    first, second = facts_of(content), facts_of(content)
    assert first is second
    assert len(parsed) == 1
