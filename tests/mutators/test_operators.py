"""Each family fires where it should and stays quiet where it should not."""

import pytest

from mutators.registry import FAMILIES, UnknownFamily, operators


def test_arithmetic_swaps_binary_operators(mutate):
    assert mutate("def f(a, b):\n    return a + b * 2\n", "arithmetic") == [
        ("a + b * 2", "a - b * 2"),
        ("b * 2", "b / 2"),
    ]


def test_arithmetic_drops_unary_minus(mutate):
    assert ("-a", "a") in mutate("def f(a):\n    return -a\n", "arithmetic")


def test_comparison_shifts_boundaries_and_negates(mutate):
    found = mutate("def f(a):\n    return a < 3\n", "comparison")
    assert found == [("< 3", "<= 3"), ("< 3", ">= 3")]


def test_comparison_negates_membership_and_identity(mutate):
    found = mutate("def f(a, b):\n    return a in b or a is None\n", "comparison")
    assert ("in b", "not in b") in found
    assert ("is None", "is not None") in found


def test_boolean_swaps_and_or_and_drops_not(mutate):
    found = mutate("def f(a, b):\n    return not a and b\n", "boolean")
    assert ("not a and b", "not a or b") in found
    assert ("not a", "a") in found


def test_boolean_flips_literals_and_forces_conditions(mutate):
    found = mutate("def f(a):\n    if a:\n        return True\n", "boolean")
    assert ("True", "False") in found
    assert ("a", "True") in found and ("a", "False") in found


def test_constants_change_numbers(mutate):
    assert mutate("def f():\n    return 5\n", "constants") == [("5", "6"), ("5", "0"), ("5", "-5")]


def test_constants_zero_only_goes_up(mutate):
    assert mutate("def f():\n    return 0\n", "constants") == [("0", "1")]


def test_constants_change_strings(mutate):
    found = mutate("def f():\n    return 'ab'\n", "constants")
    assert found == [("'ab'", "'XXabXX'"), ("'ab'", "''"), ("'ab'", "'AB'")]


def test_returns_become_none_and_empty(mutate):
    found = mutate("def f(a):\n    return [a]\n", "returns")
    assert found == [("[a]", "None"), ("[a]", "[]")]


def test_returned_condition_is_negated(mutate):
    assert ("a > 1", "not (a > 1)") in mutate("def f(a):\n    return a > 1\n", "returns")


def test_return_none_is_left_alone(mutate):
    assert mutate("def f():\n    return None\n", "returns") == []


def test_statements_drop_calls_and_raises(mutate):
    source = "def f(a):\n    print(a)\n    raise ValueError(a)\n"
    found = mutate(source, "statements")
    assert ("print(a)", "pass") in found
    assert ("raise ValueError(a)", "pass") in found


def test_statements_swap_break_and_continue(mutate):
    source = "def f(xs):\n    for x in xs:\n        if x:\n            break\n        continue\n"
    found = mutate(source, "statements")
    assert ("break", "continue") in found and ("continue", "break") in found
    assert ("break", "return") in found


def test_calls_set_arguments_to_none_and_drop_them(mutate):
    found = mutate("def f(a, b):\n    return g(a, key=b)\n", "calls")
    assert ("a", "None") in found
    assert ("b", "None") in found
    assert ("a,", "") in found
    assert (", key=b", "") in found


def test_dropping_an_argument_takes_its_comma(mutants_of):
    mutated = mutants_of("def f(a, b):\n    return g(a, key=b)\n", "calls")
    assert "def f(a, b):\n    return g(key=b)\n" in mutated
    assert "def f(a, b):\n    return g(a)\n" in mutated


def test_calls_mirror_string_methods(mutate):
    assert ("lower", "upper") in mutate("def f(s):\n    return s.lower()\n", "calls")


def test_subscripts_change_slices_and_indexes(mutate):
    found = mutate("def f(xs):\n    return xs[1:], xs[0]\n", "subscripts")
    assert ("1:", ":") in found
    assert ("0", "0 + 1") in found


def test_augmented_assignment_swaps_and_becomes_plain(mutate):
    found = mutate("def f(a):\n    a += 2\n    return a\n", "augmented")
    assert found == [("a += 2", "a -= 2"), ("a += 2", "a = 2")]


def test_exception_handler_never_matches(mutate):
    source = "def f():\n    try:\n        g()\n    except KeyError:\n        return 1\n"
    assert mutate(source, "exceptions") == [("KeyError", "()")]


def test_bare_except_is_left_alone(mutate):
    source = "def f():\n    try:\n        g()\n    except:\n        return 1\n"
    assert mutate(source, "exceptions") == []


def test_extreme_replaces_the_body(mutate):
    found = mutate("def f(a) -> int:\n    b = a * 2\n    return b\n", "extreme")
    assert [replacement for _, replacement in found] == ["return None", "return 0"]


def test_extreme_of_a_procedure_is_pass(mutate):
    found = mutate("def f(items):\n    items.append(1)\n", "extreme")
    assert [replacement for _, replacement in found] == ["pass"]


def test_extreme_of_a_generator_yields_nothing(mutate):
    found = mutate("def f(n):\n    yield n\n", "extreme")
    assert [replacement for _, replacement in found] == ["yield from ()"]


def test_extreme_of_a_body_opening_with_a_decorated_function_takes_the_decorator(mutants_of):
    source = (
        "import functools\n\n"
        "def logged(function):\n"
        "    @functools.wraps(function)\n"
        "    def wrapper(*args):\n"
        "        return function(*args)\n"
        "    return wrapper\n"
    )
    outer = mutants_of(source, "extreme")[0]
    assert "functools.wraps(function)" not in outer
    compile(outer, "<mutant>", "exec")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_mutant_of_a_realistic_module_compiles(mutants_of, family):
    source = (
        "import re\n\n"
        "def parse(text: str, limit: int = 3) -> list[str]:\n"
        "    parts = []\n"
        "    for index, word in enumerate(text.split()):\n"
        "        if index + 1 > limit or not word:\n"
        "            break\n"
        "        parts.append(word.lower()[1:])\n"
        "    try:\n"
        "        parts[0] += '!'\n"
        "    except IndexError:\n"
        "        raise ValueError('empty')\n"
        "    return parts if parts else ['x']\n"
    )
    mutated = mutants_of(source, family)
    assert mutated, f"{family} finds no site in a module that has one of each kind"
    for text in mutated:
        compile(text, "m.py", "exec")


def test_registry_enables_and_disables_families():
    names = {op.family for op in operators(["arithmetic", "boolean"], disabled=["boolean"])}
    assert names == {"arithmetic"}


def test_registry_rejects_unknown_families():
    with pytest.raises(UnknownFamily, match="unknown mutator family: nope"):
        operators(["nope"])
