"""What is never mutated, and mutant ids that survive edits elsewhere."""

import textwrap

import pytest

from mutators.registry import operators
from mutators.sites import find_mutations


def sites(source: str, families=None):
    return find_mutations(textwrap.dedent(source), operators(families))


def test_docstrings_are_not_mutated():
    found = sites('def f():\n    """Doc string."""\n    return 1\n', ["constants"])
    assert {s.original for s in found} == {"1"}


def test_annotations_are_not_mutated():
    found = sites("def f(a: 'int' = 1) -> 'str':\n    return a\n", ["constants"])
    assert {s.original for s in found} == {"1"}


def test_type_checking_blocks_are_not_mutated():
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    X = 1\n"
    assert sites(source) == []


def test_logging_calls_are_not_mutated():
    found = sites("def f(log):\n    log.info('hello %s', 1)\n    return 2\n", ["constants"])
    assert {s.original for s in found} == {"2"}


def test_repr_is_not_mutated():
    source = "class A:\n    def __repr__(self):\n        return 'A(1)'\n"
    assert sites(source) == []


def test_pragma_no_mutate_lines_are_skipped():
    source = (
        "def f():\n    a = 1  # pragma: no mutate\n    b = 2  # audit: no mutate\n"
        "    return a + b\n"
    )
    found = sites(source, ["constants"])
    assert found == []


def test_dunder_assignments_and_imports_are_skipped():
    source = "import os\n__all__ = ['f']\n__version__ = '1.0'\n"
    assert sites(source) == []


def test_sites_know_their_function_and_method():
    source = "def top():\n    return 1\n\nclass K:\n    def m(self):\n        return 2\n"
    assert [s.function for s in sites(source, ["returns"])] == ["top", "K.m"]


def test_nested_function_sites_belong_to_the_outer_function():
    source = "def outer():\n    def inner():\n        return 1\n    return inner\n"
    assert {s.function for s in sites(source, ["constants"])} == {"outer"}


def test_module_level_sites_have_no_function():
    assert [s.function for s in sites("LIMIT = 10\n", ["constants"])] == ["", "", ""]


def test_ids_survive_edits_elsewhere_in_the_file():
    function = "def f(a):\n    if a > 2:\n        return a + 1\n    return 0\n"
    before = {s.local_id() for s in sites(function)}
    edited = "import os\n\n\ndef g():\n    return os.sep\n\n\n" + function
    after = {s.local_id() for s in sites(edited) if s.function == "f"}
    assert after == before


def test_ids_are_unique():
    source = "def f(a):\n    return a + 1 + 1 + 1\n"
    ids = [s.local_id() for s in sites(source)]
    assert len(ids) == len(set(ids))


def test_apply_splices_only_the_changed_text():
    source = "def f(a):\n    return a + 1  # keep this comment\n"
    site = next(s for s in sites(source, ["arithmetic"]))
    assert site.apply(source) == "def f(a):\n    return a - 1  # keep this comment\n"


@pytest.mark.parametrize(
    "alias",
    [
        "Backend = Literal['auto', 'unidecode']",
        "Backend = typing.Literal['auto', 'unidecode']",
        "Backend: TypeAlias = Literal['auto', 'unidecode']",
        "Backend = Literal['auto', 'unidecode'] | None",
        "type Backend = Literal['auto', 'unidecode']",
    ],
)
def test_type_aliases_are_not_mutated(alias):
    assert {s.original for s in sites(f"{alias}\nLIMIT = 3\n", ["constants"])} == {"3"}


def test_a_list_of_the_same_strings_is_data_and_mutated():
    found = sites("CHOICES = ['auto', 'unidecode']\n", ["constants"])
    assert {s.original for s in found} == {"'auto'", "'unidecode'"}


@pytest.mark.parametrize(
    "declaration",
    [
        '_InternalT = TypeVar("_InternalT", bound="Field")',
        'P = typing.ParamSpec("P")',
        'Ts = TypeVarTuple("Ts")',
        'UserId = NewType("UserId", int)',
        '_T: Any = TypeVar("_T")',
    ],
)
def test_type_variables_and_new_types_are_not_mutated(declaration):
    assert {s.original for s in sites(f"{declaration}\nLIMIT = 3\n", ["constants"])} == {"3"}


def test_overload_stubs_are_not_mutated_and_the_implementation_is():
    source = """\
        @overload
        def scale(x: int, by: int = 2) -> int: ...
        @typing.overload
        def scale(x: str, by: int = 3) -> str: ...
        def scale(x, by=4):
            return x * by
        """
    assert {s.original for s in sites(source, ["constants"])} == {"4"}


def test_a_protocols_stub_methods_are_not_mutated_and_its_real_ones_are():
    source = """\
        class Sized(Protocol):
            def size(self, scale: int = 2) -> int: ...
            def area(self, scale: int = 3) -> int:
                \"\"\"Documented.\"\"\"
                pass
            def doubled(self, n: int = 5) -> int:
                return n * 2
        """
    assert {s.original for s in sites(source, ["constants"])} == {"5", "2"}


def test_a_class_that_is_no_protocol_keeps_its_stub_methods_mutated():
    source = "class Base:\n    def size(self, scale=2):\n        ...\n"
    assert {s.original for s in sites(source, ["constants"])} == {"2"}
