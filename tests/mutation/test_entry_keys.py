"""Which tests an import-time mutant in a keyed table entry runs first."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from auditor.mutation.entry_keys import entry_keys, entry_tests, keys_at, naming
from tests.conftest import run_audit


def _keys_of(source: str, mutated: str) -> list[str]:
    start = source.index(mutated)
    return keys_at(entry_keys(source), start, start + len(mutated))


def test_a_mutation_in_a_dict_entry_has_that_entry_s_key():
    source = 'FORMATS = {\n    "plain": Format(" "),\n    "rst": Format("="),\n}\n'
    assert _keys_of(source, '"="') == ["rst"]


def test_the_key_itself_belongs_to_its_entry():
    source = 'FORMATS = {"plain": 1, "rst": 2}\n'
    assert _keys_of(source, '"rst"') == ["rst"]


def test_a_nested_mutation_has_the_keys_of_its_entries_innermost_first():
    source = 'STYLES = {"grid": {"rst": "=", "plain": " "}}\n'
    assert _keys_of(source, '"="') == ["rst", "grid"]
    assert _keys_of(source, '{"rst"') == ["grid"]


def test_keywords_of_dict_and_update_calls_are_keys():
    source = "INFO = dict(compile=[1])\nINFO.update(sorted=[2])\n"
    assert _keys_of(source, "[1]") == ["compile"]
    assert _keys_of(source, "[2]") == ["sorted"]


def test_code_inside_functions_and_keys_that_name_nothing_have_no_key():
    source = 'def f():\n    return {"rst": 1}\n\nTABLE = {"a": 2, "two words": 3}\n'
    assert _keys_of(source, "1") == []
    assert _keys_of(source, "2") == []
    assert _keys_of(source, "3") == []


def test_a_test_names_a_key_as_a_word_of_its_name_or_parameters():
    tests = [
        "tests/test_out.py::test_rst",
        "tests/test_out.py::test_format[rst]",
        "tests/test_out.py::TestRst::test_rst_headers",
        "tests/test_out.py::test_first",
        "tests/rst/test_out.py::test_plain",
    ]
    assert naming(tests, "rst") == set(tests[:3])


def test_the_tests_named_for_the_innermost_key_any_test_is_named_for_come_first():
    tests = ["t.py::test_all", "t.py::test_rst", "t.py::test_grid[rst]", "t.py::test_grid"]
    assert entry_tests(set(tests), ["sep", "rst", "grid"]) == set(tests[1:3])
    assert entry_tests(set(tests), ["sep"]) == set()


@pytest.mark.slow
def test_a_table_entry_s_mutant_is_killed_by_the_test_named_for_its_key(tmp_path: Path):
    """Both tests run the file and kill the mutant; by name the other would run first."""
    (tmp_path / "formats.py").write_text(
        textwrap.dedent(
            """\
            FORMATS = {
                "plain": {"sep": " "},
                "rst": {"sep": "="},
            }


            def render(name, cells):
                return FORMATS[name]["sep"].join(cells)
            """
        )
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_formats.py").write_text(
        textwrap.dedent(
            """\
            from formats import FORMATS, render


            def test_all_formats_are_known():
                assert render("plain", ["a"]) == "a"
                assert FORMATS == {"plain": {"sep": " "}, "rst": {"sep": "="}}


            def test_rst():
                assert render("rst", ["a", "b"]) == "a=b"
            """
        )
    )
    out = tmp_path / "r.json"
    result = run_audit("tests", "-q", "--no-probes", "--json", str(out), cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    mutants = json.loads(out.read_text())["mutation"]["mutants"]
    in_rst = [m for m in mutants if m["line"] == 3 and m["original"] == '"="']
    assert in_rst
    assert {m["killed_by"][0] for m in in_rst} == {"tests/test_formats.py::test_rst"}
