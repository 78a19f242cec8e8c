import textwrap

import pytest

from auditor.smells.analyzer import analyze_module
from auditor.smells.source import parse_test_module

HEADER = """\
import os
import time
from unittest import mock
from unittest.mock import Mock, patch

import pytest

from shop import total, Cart
"""


def findings_for(body: str, helpers: frozenset[str] = frozenset()):
    source = HEADER + "\n\n" + textwrap.dedent(body)
    module = parse_test_module("tests/test_x.py", source.encode(), {"shop"}, {})
    return analyze_module(module, set(helpers))


@pytest.fixture
def codes():
    """The smell codes found in a snippet of test code (the header imports `shop`)."""

    def run(body: str, helpers: frozenset[str] = frozenset()) -> set[str]:
        return {finding.code for finding in findings_for(body, helpers)}

    return run
