"""Hardened files hold up as the user runs them: the deep model's tests that clash when
put in one module (GPT-4o's answers did: a fixture of the same name in two tests, a local
`Section` replacing an imported one, helpers sharing a list) are written so that every
one passes under plain pytest, and each is filed under the module whose mutants it kills.

The answers come from a scripted OpenAI-compatible server on 127.0.0.1, all in the
answer to the request for `shop/inventory.py`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_fixture
from tests.escalation.server import Answer, escalate, structured

STOCKED_FIXTURE = """import pytest

from shop.inventory import Inventory


@pytest.fixture
def inventory():
    stocked = Inventory()
    stocked.add("apple", 10)
    return stocked


def test_ship_moves_stock(inventory):
    inventory.reserve("apple", 4)
    inventory.ship("apple", 3)
    assert inventory.stock == {"apple": 7}
    assert inventory.reserved == {"apple": 1}
"""
EMPTY_FIXTURE = """import pytest

from shop.inventory import Inventory, OutOfStock


@pytest.fixture
def inventory():
    return Inventory()


def test_out_of_stock_names_the_shortfall(inventory):
    inventory.add("pear", 2)
    with pytest.raises(OutOfStock) as error:
        inventory.reserve("pear", 5)
    assert (error.value.sku, error.value.wanted, error.value.available) == ("pear", 5, 2)
    assert str(error.value) == "pear: wanted 5, only 2 available"
"""
IMPORTED_CENT = """from decimal import Decimal

from shop.pricing import CENT, round_money


def test_round_money_rounds_half_up():
    assert round_money(Decimal("1.005")) == Decimal("1.01")
    assert round_money(Decimal("0.994")) + CENT == Decimal("1.00")
"""
LOCAL_CENT = """from decimal import Decimal

from shop.pricing import bulk_discount

CENT = Decimal("0.05")  # the step between discount tiers


def test_bulk_discount_steps_by_five_percent():
    assert bulk_discount(9) == 0
    assert bulk_discount(10) == CENT
    assert bulk_discount(20) == 2 * CENT
    assert bulk_discount(100) == 3 * CENT
"""
SEEN = """

SEEN = []


def _seen(value):
    SEEN.append(value)
    return value
"""
LINE_TOTAL = (
    "from decimal import Decimal\n\nfrom shop.pricing import line_total\n"
    + SEEN
    + """

def test_line_total_applies_the_bulk_discount():
    assert _seen(line_total(Decimal("2.00"), 10)) == Decimal("19.00")
    assert SEEN == [Decimal("19.00")]
"""
)
TAX = (
    "from decimal import Decimal\n\nimport pytest\n\nfrom shop.pricing import tax_for\n"
    + SEEN
    + """

def test_unknown_tax_category_is_a_value_error():
    with pytest.raises(ValueError, match="unknown tax category: luxury"):
        tax_for(Decimal("1"), "luxury")
    assert _seen(tax_for(Decimal("100"), "reduced")) == Decimal("5.00")
    assert SEEN == [Decimal("5.00")]
"""
)
ANSWER = {
    "test_ship_moves_stock": STOCKED_FIXTURE,
    "test_out_of_stock_names_the_shortfall": EMPTY_FIXTURE,
    "test_round_money_rounds_half_up": IMPORTED_CENT,
    "test_bulk_discount_steps_by_five_percent": LOCAL_CENT,
    "test_line_total_applies_the_bulk_discount": LINE_TOTAL,
    "test_unknown_tax_category_is_a_value_error": TAX,
}


@pytest.fixture(scope="module")
def hardened(tmp_path_factory):
    root = copy_fixture("shop", tmp_path_factory.mktemp("as-written") / "shop")
    answer = structured(*({"name": name, "code": code} for name, code in ANSWER.items()))
    report = escalate(
        root, [Answer(answer, match="tests for `shop/inventory.py`")], "--apply", "--no-probes"
    )
    return root, report["escalation"]


def _written(hardened) -> list[str]:
    root, escalation = hardened
    return [(root / path).read_text() for path in escalation["hardened_files"]]


def _accepted(escalation: dict) -> dict[str, dict]:
    return {c["name"]: c for c in escalation["candidates"] if c["accepted"]}


def _pytest(root: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    # These are the tests written above, run as a user would: plain pytest, no audit.
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_every_clashing_candidate_is_accepted(hardened):
    _, escalation = hardened
    assert sorted(_accepted(escalation)) == sorted(ANSWER)


@pytest.mark.slow
def test_the_written_files_pass_under_plain_pytest_alone_and_with_the_suite(hardened):
    root, escalation = hardened
    applied = escalation["applied_files"]
    assert len(applied) == len(escalation["hardened_files"]) >= 2
    runs = [_pytest(root, *applied), _pytest(root, "tests_shallow")]
    runs.append(_pytest(root, *reversed(applied), "tests_shallow"))
    assert [run.returncode for run in runs] == [0, 0, 0], [run.stdout[-2000:] for run in runs]


@pytest.mark.slow
def test_two_fixtures_of_one_name_are_written_apart_and_unrenamed(hardened):
    texts = _written(hardened)
    holding = [text for text in texts if "def inventory():" in text]
    assert len(holding) == 2
    assert all("def test_" in text and "(inventory):" in text for text in holding)


@pytest.mark.slow
def test_a_local_name_never_replaces_an_import_of_another_test(hardened):
    texts = _written(hardened)
    (importing,) = [t for t in texts if "def test_round_money_rounds_half_up" in t]
    assert 'CENT = Decimal("0.05")' not in importing


@pytest.mark.slow
def test_tests_sharing_a_helper_list_are_written_apart_after_failing_together(hardened):
    texts = _written(hardened)
    with_list = [t for t in texts if "SEEN = []" in t]
    assert len(with_list) == 2


@pytest.mark.slow
def test_accepted_tests_are_filed_under_the_module_whose_mutants_they_kill(hardened):
    _, escalation = hardened
    filed = {name: c["filed_under"] for name, c in _accepted(escalation).items()}
    inventory = {"test_ship_moves_stock", "test_out_of_stock_names_the_shortfall"}
    assert filed == {
        name: "shop/inventory.py" if name in inventory else "shop/pricing.py" for name in ANSWER
    }
    counts = {m["file"]: m["accepted"] for m in escalation["modules"]}
    assert (counts["shop/inventory.py"], counts["shop/pricing.py"]) == (2, 4)
    pricing = next(m for m in escalation["modules"] if m["file"] == "shop/pricing.py")
    assert pricing["after"]["score"] > pricing["before"]["score"]
