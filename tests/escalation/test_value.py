"""What counts as value: a candidate whose checks catch mutants the suite only crashes on
is kept (python-slugify's suite, its assertions stripped, kills most mutants by an
error; a test of five exact slugs was thrown away for "killing no surviving mutant").

The shop fixture's shallow suite kills every mutant of `Cart.subtotal`, all by an error;
the scripted model (127.0.0.1) answers the request for `shop/cart.py`."""

from __future__ import annotations

import pytest

from tests.conftest import copy_fixture
from tests.escalation.server import Answer, escalate, structured

EXACT = """from decimal import Decimal

from shop.cart import Cart


def test_an_empty_cart_costs_nothing():
    assert Cart().subtotal() == Decimal("0.00")
"""
SMOKE = """from shop.cart import Cart


def test_a_cart_builds():
    assert isinstance(Cart(), Cart)
"""


@pytest.fixture(scope="module")
def candidates(tmp_path_factory):
    root = copy_fixture("shop", tmp_path_factory.mktemp("value") / "shop")
    answer = structured(
        {"name": "test_an_empty_cart_costs_nothing", "code": EXACT},
        {"name": "test_a_cart_builds", "code": SMOKE},
    )
    report = escalate(root, [Answer(answer, match="tests for `shop/cart.py`")], "--no-probes")
    return {c["name"]: c for c in report["escalation"]["candidates"]}, report


@pytest.mark.slow
def test_a_check_catching_what_the_suite_only_crashes_on_is_accepted(candidates):
    found, report = candidates
    exact = found["test_an_empty_cart_costs_nothing"]
    by_error = {
        m["id"]: m["file"]
        for m in report["mutation"]["mutants"]
        if m["status"] == "Killed" and m["kill_kind"] != "assertion"
    }
    assert (exact["accepted"], exact["kills"], exact["new_lines"]) == (True, [], {})
    assert "shop/cart.py::Cart.subtotal::extreme.body@1:8#0" in exact["checked_kills"]
    assert set(exact["checked_kills"]) <= set(by_error)
    # Filed under the module most of its catches are in: round_money's two, here.
    files = [by_error[m] for m in exact["checked_kills"]]
    assert exact["filed_under"] == max(sorted(set(files)), key=files.count)


@pytest.mark.slow
def test_a_test_that_kills_checks_and_covers_nothing_new_is_still_rejected(candidates):
    found, _ = candidates
    smoke = found["test_a_cart_builds"]
    assert (smoke["accepted"], smoke["checked_kills"]) == (False, [])
    assert smoke["reason"].startswith("kills no surviving mutant, its checks catch none")
