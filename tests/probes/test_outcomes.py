"""When two calls behaved the same as far as a test could tell."""

import functools
import itertools

from auditor.probes.outcomes import Outcome, drained, equal, same


def _hook(fn=None, *, pass_collection: bool = False):
    return fn


def test_partials_with_other_options_differ():
    # What marshmallow's `@pre_load(pass_collection=...)` returns before it decorates:
    # a test of the decorated schema tells the two options apart.
    assert not equal(
        functools.partial(_hook, pass_collection=False),
        functools.partial(_hook, pass_collection=True),
    )


def test_partials_of_the_same_call_are_equal():
    assert equal(
        functools.partial(_hook, 1, pass_collection=True),
        functools.partial(_hook, 1, pass_collection=True),
    )


def test_a_call_not_made_tells_nothing_apart():
    # After a function hung twice in a mutant's replay, its later calls are skipped:
    # that is not behaviour a test could see (marshmallow: 26 false witnesses).
    assert same(Outcome("returned", value=1), Outcome("skipped"))
    assert not same(Outcome("returned", value=1), Outcome("returned", value=2))


class _Version:
    """Like semver's Version: `==` ignores the build part, the repr shows it."""

    def __init__(self, core: str, build: str) -> None:
        self.core, self.build = core, build

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Version) and self.core == other.core

    def __repr__(self) -> str:
        return f"_Version({self.core!r}, {self.build!r})"


def test_a_class_whose_eq_ignores_what_its_repr_shows_is_compared_by_repr_too():
    assert not equal(_Version("1.0.0", "build.1"), _Version("1.0.0", "XXbuild.1XX"))
    assert equal(_Version("1.0.0", "build.1"), _Version("1.0.0", "build.1"))


class _OutOfStock(Exception):
    """The shop fixture's exception: its message is set by `super().__init__` only."""

    def __init__(self, sku: str, wanted: int, *, message: bool = True) -> None:
        if message:
            super().__init__(f"{sku}: wanted {wanted}")
        self.sku, self.wanted = sku, wanted


def test_exceptions_with_the_same_attributes_and_another_message_differ():
    # Without its super().__init__ call the error says nothing: a test of str(error)
    # tells them apart, so the probes must too.
    assert not equal(_OutOfStock("pear", 5), _OutOfStock("pear", 5, message=False))
    assert equal(_OutOfStock("pear", 5), _OutOfStock("pear", 5))


def test_an_exception_is_described_without_the_addresses_its_message_holds():
    # pathspec 1.1.1's `AlreadyRegisteredError(name, function)`: the report showed
    # `<function ... at 0x7ffff4278c20>`, another address in each run.
    error = LookupError("", _hook)

    described = Outcome("raised", error=error).describe()

    assert described == "raises LookupError: ('', <function _hook>)"


def _yielding(*items):
    yield from items


def _returned(value) -> Outcome:
    return Outcome("returned", value=drained(value))


def test_two_generators_yielding_the_same_items_behave_the_same():
    # As returned, two generator objects compare by identity: every mutant of a
    # generator would pass for told apart on every input.
    assert same(_returned(_yielding(1, 2)), _returned(_yielding(1, 2)))


def test_generators_yielding_other_items_differ_and_say_what_they_yield():
    original, mutant = _returned(_yielding(0, 2)), _returned(_yielding(1, 3))
    assert not same(original, mutant)
    assert (original.describe(), mutant.describe()) == (
        "returns <generator yielding [0, 2]>",
        "returns <generator yielding [1, 3]>",
    )


def test_an_endless_iterator_is_compared_on_its_first_items():
    assert same(_returned(itertools.count(0)), _returned(itertools.count(0)))
    assert not same(_returned(itertools.count(0)), _returned(itertools.count(1)))


def test_the_groups_of_a_groupby_are_drained_with_it():
    assert not same(_returned(itertools.groupby("aab")), _returned(itertools.groupby("abb")))


def test_two_plain_object_sentinels_are_the_same_behaviour():
    # more-itertools' last(iterable, default) returns the default it was given: each
    # call gets its own copy of the input, so the two sentinels differ only by identity.
    assert same(Outcome("returned", value=object()), Outcome("returned", value=object()))


class _Parser:
    """Like jmespath's `Parser(lookahead=n)`: a buffer of n slots."""

    def __init__(self, lookahead: int) -> None:
        self.tokens = [None] * lookahead


def _walks(monkeypatch) -> list[int]:
    """The steps of `equal`'s walk from here on, one per value it compares."""
    from auditor.probes import outcomes

    steps: list[int] = []
    walk = outcomes.equal

    def counted(first, second, depth=0):
        steps.append(depth)
        return walk(first, second, depth)

    monkeypatch.setattr(outcomes, "equal", counted)
    return steps


def test_a_large_buffer_that_is_the_same_is_compared_in_one_step(monkeypatch):
    steps = _walks(monkeypatch)
    assert same(
        Outcome("returned", value=_Parser(100_000)), Outcome("returned", value=_Parser(100_000))
    )
    assert len(steps) <= 3  # the parser, its state, the buffer: not each slot


def test_a_large_buffer_that_differs_in_one_slot_differs():
    changed = _Parser(100_000)
    changed.tokens[-1] = 0
    assert not same(Outcome("returned", value=_Parser(100_000)), Outcome("returned", value=changed))


def test_lists_of_objects_equal_by_state_but_not_by_identity_are_still_equal():
    # `==` says no (another object each), the walk says yes: the quick path never decides no.
    assert equal([_Parser(2), _Parser(3)], [_Parser(2), _Parser(3)])
