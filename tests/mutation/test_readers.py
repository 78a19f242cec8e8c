"""Which code and tests can read what an import-time statement binds."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from auditor.mutation.readers import ReadIndex


def index(
    tmp_path: Path,
    files: dict[str, str],
    tests: Mapping[str, str] = MappingProxyType({}),
    support: tuple[str, ...] = (),
) -> ReadIndex:
    for name, text in {**files, **tests}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return ReadIndex(
        tmp_path,
        [tmp_path / name for name in files],
        [tmp_path / name for name in tests],
        [tmp_path / name for name in support],
    )


def names_at(read_index: ReadIndex, file: str, line: int) -> frozenset[str] | None:
    binding = read_index.binding_at(file, line, line)
    return None if binding is None else binding.names


def test_an_assignment_binds_its_targets(tmp_path):
    found = index(tmp_path, {"rates.py": "RATES = {'tea': 2}\nOTHER = 1\n"})
    assert names_at(found, "rates.py", 1) == {"RATES"}


def test_a_class_attribute_binds_its_class_too(tmp_path):
    found = index(tmp_path, {"m.py": "class Config:\n    retries = 3\n"})
    assert names_at(found, "m.py", 2) == {"retries", "Config"}


def test_a_default_argument_binds_the_function(tmp_path):
    found = index(tmp_path, {"m.py": "def greet(name='you'):\n    return name\n"})
    assert names_at(found, "m.py", 1) == {"greet"}


def test_a_method_call_on_a_module_value_changes_that_value(tmp_path):
    found = index(tmp_path, {"m.py": "TABLE = {}\nTABLE['a'].update(b=1)\n"})
    assert names_at(found, "m.py", 2) == {"TABLE"}


def test_a_bare_call_into_code_outside_is_not_followed_by_name(tmp_path):
    found = index(tmp_path, {"m.py": "import warnings\nwarnings.simplefilter('ignore')\n"})
    assert names_at(found, "m.py", 2) is None


def test_a_decorator_argument_is_not_followed_by_name(tmp_path):
    source = "import functools\n\n@functools.lru_cache(maxsize=8)\ndef f():\n    return 1\n"
    found = index(tmp_path, {"m.py": source})
    assert names_at(found, "m.py", 3) is None


def test_a_dunder_python_reads_implicitly_is_not_followed_by_name(tmp_path):
    found = index(tmp_path, {"m.py": "class P:\n    __slots__ = ('x',)\n"})
    assert names_at(found, "m.py", 2) is None


def test_a_namespace_written_by_name_is_not_followed(tmp_path):
    found = index(tmp_path, {"m.py": "for n in 'ab':\n    globals()[n] = 1\n"})
    assert names_at(found, "m.py", 2) is None


def test_values_computed_from_a_name_at_import_time_are_followed(tmp_path):
    found = index(
        tmp_path,
        {
            "base.py": "RATE = 2\n",
            "derived.py": "from base import RATE\nDOUBLE = RATE * 2\nUNRELATED = 5\n",
        },
    )
    assert found.closure(frozenset({"RATE"})) == {"RATE", "DOUBLE"}


def test_functions_that_mention_a_name_anywhere_are_its_readers(tmp_path):
    found = index(
        tmp_path,
        {
            "rates.py": "RATES = {'tea': 2}\n",
            "prices.py": textwrap.dedent(
                """\
                import rates

                def price(item):
                    return rates.RATES[item]

                def free():
                    return 0
                """
            ),
        },
    )
    readers = found.readers(frozenset({"RATES"}))
    assert readers.function_lines == {"prices.py": frozenset({4})}
    assert not readers.every_test


def test_test_files_that_mention_a_name_read_it(tmp_path):
    found = index(
        tmp_path,
        {"rates.py": "RATES = {}\n"},
        tests={
            "tests/test_rates.py": "from rates import RATES\n\ndef test_r():\n    assert RATES\n",
            "tests/test_other.py": "def test_o():\n    assert 1\n",
        },
    )
    assert found.readers(frozenset({"RATES"})).test_files == {"tests/test_rates.py"}


def test_a_module_whose_doctests_mention_a_name_reads_it(tmp_path):
    doctested = 'def double(x):\n    """\n    >>> double(RATE)\n    4\n    """\n    return 2 * x\n'
    found = index(tmp_path, {"rates.py": "RATE = 2\n", "calc.py": doctested})
    assert found.readers(frozenset({"RATE"})).test_files == {"calc.py"}


def test_a_conftest_that_mentions_a_name_makes_every_test_a_reader(tmp_path):
    found = index(
        tmp_path,
        {"rates.py": "RATES = {}\n"},
        tests={"tests/conftest.py": "from rates import RATES\n"},
        support=("tests/conftest.py",),
    )
    assert found.readers(frozenset({"RATES"})).every_test


SIGNATURES_MODULE = """\
INFO = {'len': 1}
SIGNATURES = {}


def build(info=INFO):
    SIGNATURES.update(info)


build()


def arity(name):
    return SIGNATURES[name]
"""


def test_a_bare_call_of_a_function_of_the_code_changes_what_that_function_names(tmp_path):
    found = index(tmp_path, {"sigs.py": SIGNATURES_MODULE})
    binding = found.binding_at("sigs.py", 1, 1)
    readers = found.readers(found.closure(binding.names))
    assert not readers.every_test
    assert readers.function_lines["sigs.py"] >= {6, 13}  # build, and arity which reads SIGNATURES


def test_a_bare_call_of_a_function_that_reads_a_global_passes_it_on(tmp_path):
    source = SIGNATURES_MODULE.replace("def build(info=INFO):", "def build():").replace(
        "update(info)", "update(INFO)"
    )
    found = index(tmp_path, {"sigs.py": source})
    assert "SIGNATURES" in found.closure(frozenset({"INFO"}))


def test_a_bare_call_of_a_function_outside_the_code_makes_every_test_a_reader(tmp_path):
    source = "import registry\n\nINFO = {'len': 1}\nregistry.add(INFO)\n"
    found = index(tmp_path, {"sigs.py": source})
    assert found.readers(found.closure(frozenset({"INFO"}))).every_test


def test_a_bare_call_of_a_function_that_writes_names_it_computes_makes_every_test_a_reader(
    tmp_path,
):
    source = "INFO = {'len': 1}\n\n\ndef build():\n    globals().update(INFO)\n\n\nbuild()\n"
    found = index(tmp_path, {"sigs.py": source})
    assert found.readers(found.closure(frozenset({"INFO"}))).every_test


def test_modules_of_the_package_outside_the_mutated_scope_are_read_too(tmp_path):
    from auditor.discovery.project import discover
    from auditor.mutation.plan import read_index

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "1"\n')
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg import sigs\n\nsigs.build()\n")
    (package / "sigs.py").write_text(
        "INFO = {'len': 1}\nSIGNATURES = {}\n\n\ndef build():\n    SIGNATURES.update(INFO)\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_sigs.py").write_text("def test_a():\n    assert 1\n")
    project = discover(["tests"], ["pkg/sigs.py"], tmp_path)
    found = read_index(project)
    # only pkg/__init__.py, outside the scope, says that SIGNATURES is built from INFO
    assert "SIGNATURES" in found.closure(frozenset({"INFO"}))
    assert found.consumers("pkg/sigs.py", frozenset({"INFO"})) == (("pkg/__init__.py", (3, 3)),)


REGISTRY_PACKAGE = {
    "pkg/_tables.py": """
        units = {"m": 1, "km": 1000}
        registry = {}

        def build_registry(units=units, registry=registry):
            registry.update(units)

        def register_all():
            registry.update(units)
        """,
    "pkg/__init__.py": """
        from pkg import _tables

        _tables.build_registry()
        _tables.register_all()
        SCALE = _tables.units["km"]
        NAME = "pkg"
        """,
}


def test_statements_of_other_modules_computed_from_a_name_are_its_consumers(tmp_path):
    found = index(tmp_path, REGISTRY_PACKAGE)
    consumers = found.consumers("pkg/_tables.py", frozenset({"units"}))
    # the call of a function whose default holds the table, the call of a function that
    # reads it, and a value computed from it; not the import, not an unrelated value
    assert consumers == (
        ("pkg/__init__.py", (4, 4)),
        ("pkg/__init__.py", (5, 5)),
        ("pkg/__init__.py", (6, 6)),
    )


def test_a_module_s_own_statements_are_not_its_consumers(tmp_path):
    found = index(tmp_path, {"m.py": "units = {}\nSCALE = units.get('km')\n"})
    assert found.consumers("m.py", frozenset({"units"})) == ()


def test_the_class_around_lines_is_the_innermost_one(tmp_path):
    source = """\
        class Outer:
            LIMIT = 3

            class Inner:
                SIZE = 2

                def size(self):
                    return self.SIZE
        """
    found = index(tmp_path, {"m.py": source})
    assert found.class_around("m.py", 5, 5) == range(4, 9)
    assert found.class_around("m.py", 2, 2) == range(1, 9)
    assert found.class_around("m.py", 9, 9) is None


def test_a_name_is_read_on_the_line_of_the_innermost_statement_that_mentions_it(tmp_path):
    source = """\
        MODE = "fast"


        def speed(mode):
            if (
                mode == MODE
            ):
                return settings.MODE
            return 0
        """
    found = index(tmp_path, {"m.py": source})
    assert found.lines_naming({"MODE"}) == {"m.py": {1, 5, 8}}
    assert found.lines_naming({"LIMIT"}) == {}


def test_an_index_built_again_after_an_edit_reads_the_new_text(tmp_path):
    index(tmp_path, {"m.py": "RATE = 2\nLIMIT = 3\n"})
    edited = index(tmp_path, {"m.py": "RATE = 2\n\nLIMIT = 3\n"})
    assert names_at(edited, "m.py", 2) is None
    assert names_at(edited, "m.py", 3) == {"LIMIT"}


def test_an_index_built_again_parses_only_the_files_that_changed(tmp_path, monkeypatch):
    import ast

    parsed: list[str] = []
    real_parse = ast.parse

    def counting_parse(source, filename="<unknown>", *args, **kwargs):
        parsed.append(Path(filename).name)
        return real_parse(source, filename, *args, **kwargs)

    files = {"kept.py": "KEPT = 1\n", "edited.py": "EDITED = 1\n"}
    index(tmp_path, files)
    monkeypatch.setattr(ast, "parse", counting_parse)
    again = index(tmp_path, {**files, "edited.py": "EDITED = 2\n"})
    assert parsed == ["edited.py"]
    assert names_at(again, "kept.py", 1) == {"KEPT"}


PRICES = """\
    class Prices:
        RATES = {'tea': 2}

        def of(self, kind):
            return self.RATES[kind]

    def describe():
        return Prices.__name__
    """


def test_a_plain_class_attribute_is_read_by_the_code_that_names_it_not_the_class(tmp_path):
    found = index(tmp_path, {"m.py": PRICES})
    readers = found.value_readers("m.py", 2, 2)
    assert readers is not None
    assert readers.names == {"RATES"}
    assert readers.lines == {"m.py": frozenset({2, 5})}


def test_an_attribute_of_a_class_with_a_base_has_no_readers_by_name(tmp_path):
    # A base class may read its subclasses' bodies where no name says (declared fields).
    found = index(tmp_path, {"m.py": PRICES.replace("class Prices:", "class Prices(dict):")})
    assert found.value_readers("m.py", 2, 2) is None


def test_an_attribute_of_a_decorated_class_has_no_readers_by_name(tmp_path):
    source = "import dataclasses\n\n@dataclasses.dataclass\nclass P:\n    size: int = 2\n"
    found = index(tmp_path, {"m.py": source})
    assert found.value_readers("m.py", 5, 5) is None


def test_a_module_value_is_read_by_the_functions_of_every_file_that_name_it(tmp_path):
    files = {
        "rates.py": "RATE = 2\n\ndef scaled(n):\n    return n * RATE\n",
        "shop.py": "import rates\n\ndef price(n):\n    return n + rates.RATE\n",
    }
    readers = index(tmp_path, files).value_readers("rates.py", 1, 1)
    assert readers is not None
    assert readers.lines == {"rates.py": frozenset({1, 4}), "shop.py": frozenset({4})}
