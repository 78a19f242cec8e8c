"""A decorated function is probed through its decorator, as its callers call it, with
the parameters and lines of the function it wraps; one its decorator replaces without
saying so (no `functools.wraps`) is not probeable, and so is one on which no input
could be made (an abstract method)."""

from __future__ import annotations

import pytest

from auditor.probes.calls import NotProbeable
from auditor.probes.search import NOTHING_DRAWN, probe_function
from auditor.probes.targets import find_targets
from tests.conftest import probe_spec, subject_of

SOURCE = """
import abc
import functools

def flagging(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs) or "rejected"
    return wrapper

def bare(function):
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper

@flagging
def is_even(n: int) -> bool:
    return n % 2 == 0

@bare
def is_odd(n: int) -> bool:
    return n % 2 == 1

class Rule(abc.ABC):
    @abc.abstractmethod
    def __call__(self, value: int) -> bool: ...
"""


def test_functions_behind_any_decorator_are_targets(module):
    name, path = module
    found = {target.qualname for target in find_targets(path, path.name, name)}
    assert found == {"flagging", "bare", "is_even", "is_odd", "Rule.__call__"}


def test_a_wrapped_function_is_called_through_its_decorator(module):
    subject = subject_of(module, "is_even")
    assert [param.name for param in subject.params] == ["n"]
    assert subject.invoke({"n": 3}, timeout=1.0).value == "rejected"
    assert subject.invoke({"n": 4}, timeout=1.0).value is True


def test_a_function_its_decorator_replaces_unsaid_is_not_probeable(module):
    with pytest.raises(NotProbeable, match="replaced by its decorator's wrapper"):
        subject_of(module, "is_odd")


def test_a_method_no_instance_can_be_built_for_is_not_probeable_rather_than_probed(module):
    # An abstract class refuses every instance drawn: no input at all, which the
    # report called "probed" on 0 inputs.
    probe = probe_function(subject_of(module, "Rule.__call__", kind="method"), probe_spec()).probe
    assert (probe.status, probe.reason, probe.examples) == ("not probeable", NOTHING_DRAWN, 0)
