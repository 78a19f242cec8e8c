"""When two calls behaved the same as far as a test could tell."""

import functools

from auditor.probes.outcomes import equal


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
