"""Escalation end to end: the real `audit` command, the real openai client, a scripted
OpenAI-compatible server on 127.0.0.1, and the shop fixture's shallow suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.agent.feedback import build
from auditor.escalation.prompts import MAX_FINDINGS_CHARS
from auditor.report import Report
from tests.conftest import copy_fixture, tree_digest
from tests.escalation.server import Answer, ScriptedServer, structured

KEY = "sk-audit-escalation-SECRET-0123456789"

BULK = """from decimal import Decimal

import pytest

from shop.pricing import bulk_discount


@pytest.mark.parametrize(
    ("quantity", "rate"),
    [(0, "0"), (9, "0"), (10, "0.05"), (19, "0.05"), (20, "0.10"), (99, "0.10"), (100, "0.15")],
)
def test_bulk_discount_tiers(quantity, rate):
    assert bulk_discount(quantity) == Decimal(rate)
"""
TAX = """from decimal import Decimal

from shop.pricing import tax_for


def test_tax_for_each_category():
    assert tax_for(Decimal("100"), "standard") == Decimal("20.00")
    assert tax_for(Decimal("100"), "reduced") == Decimal("5.00")
    assert tax_for(Decimal("100"), "zero") == Decimal("0.00")
"""
PRICING = [
    {"name": "test_bulk_discount_tiers", "code": BULK, "targets": ["shop/pricing.py::x"]},
    {"name": "test_broken", "code": "def test_broken(:\n    assert True\n"},
    {
        "name": "test_wrong_oracle",
        "code": "from decimal import Decimal\nfrom shop.pricing import tax_for\n\n\n"
        "def test_wrong_oracle():\n    assert tax_for(Decimal('10')) == Decimal('3.00')\n",
    },
    {
        "name": "test_hangs",
        "code": "from shop.pricing import round_money\n\n\ndef test_hangs():\n"
        "    while True:\n        pass\n    assert round_money(1) == 1\n",
    },
    {
        "name": "test_writes_outside_tmp",
        "code": "from shop.pricing import tax_for\n\n\ndef test_writes_outside_tmp():\n"
        "    with open('/etc/audit-escalation-escape', 'w') as out:\n        out.write('x')\n"
        "    assert tax_for is not None\n",
    },
    {
        "name": "test_asserts_nothing",
        "code": "from decimal import Decimal\nfrom shop.pricing import line_total\n\n\n"
        "def test_asserts_nothing():\n    line_total(Decimal('1'), 3)\n",
    },
    {
        "name": "test_no_coupon_leaves_the_subtotal",
        "code": "from decimal import Decimal\nfrom shop.pricing import COUPONS, apply_coupon\n\n\n"
        "def test_no_coupon_leaves_the_subtotal():\n    COUPONS.clear()\n"
        "    assert apply_coupon(Decimal('5'), None) == Decimal('5')\n",
    },
    {
        "name": "test_imports_nothing_real",
        "code": "from shop.nowhere import magic\n\n\ndef test_imports_nothing_real():\n"
        "    assert magic() == 1\n",
    },
]
INVENTORY = """Here are tests:

```python
import pytest

from shop.inventory import Inventory, OutOfStock


def test_ship_removes_from_stock_and_reservation():
    inventory = Inventory()
    inventory.add("apple", 10)
    inventory.reserve("apple", 4)
    inventory.ship("apple", 3)
    assert inventory.stock["apple"] == 7
    assert inventory.reserved == {"apple": 1}


def test_out_of_stock_names_the_shortfall():
    inventory = Inventory()
    inventory.add("pear", 2)
    with pytest.raises(OutOfStock) as error:
        inventory.reserve("pear", 5)
    assert (error.value.wanted, error.value.available) == (5, 2)
```
"""
REPAIRED = structured({"name": "test_broken", "code": TAX, "rationale": "fixed the syntax"})


def _script() -> list[Answer]:
    return [
        Answer(structured(*PRICING), match="tests for `shop/pricing.py`"),
        Answer(status=429, headers={"retry-after-ms": "5"}, match="tests for `shop/cart.py`"),
        Answer("I would check the totals and the edge cases.", match="tests for `shop/cart.py`"),
        Answer(INVENTORY, match="tests for `shop/inventory.py`"),
        Answer(REPAIRED, match="you wrote for `shop/pricing.py`"),
    ]


def _audit(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "auditor", "tests_shallow", "-q", "--escalate", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def _copy_shop(root: Path) -> None:
    copy_fixture("shop", root)


@pytest.fixture(scope="module")
def model_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("escalate") / "shop"
    _copy_shop(root)
    before = tree_digest(root)
    with ScriptedServer(_script()) as server:
        with (root / "pyproject.toml").open("a") as config:
            config.write(
                "\n[tool.audit.escalation]\n"
                f'base_url = "{server.base_url}"\n'
                "request_timeout = 20\nmax_retries = 2\ncandidate_timeout = 2\n"
                'prices = { "gpt-5.1-codex" = [1.25, 10.0] }\n'
            )
        digest = tree_digest(root)
        env = {**os.environ, "OPENAI_API_KEY": KEY, "COLUMNS": "200"}
        result = _audit(root, "--no-probes", env=env)
        requests = list(server.requests)
    report = json.loads((root / ".audit" / "report.json").read_text())
    return result, report, root, digest, requests, before


def _candidate(report: dict, name: str, round_: int = 0) -> dict:
    found = [
        c for c in report["escalation"]["candidates"] if c["name"] == name and c["round"] == round_
    ]
    assert len(found) == 1, name
    return found[0]


@pytest.mark.slow
def test_run_completes_with_the_exit_code_of_the_gate(model_run):
    result, report, *_ = model_run
    assert result.returncode == 0, result.stderr
    assert report["status"] == "complete"
    assert report["escalation"]["mode"] == "model"
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_accepted_tests_raise_the_measured_score(model_run):
    _, report, *_ = model_run
    hardened = [m for m in report["escalation"]["modules"] if m["accepted"]]
    assert {m["file"] for m in hardened} == {"shop/pricing.py", "shop/inventory.py"}
    for module in hardened:
        assert module["after"]["score"] > module["before"]["score"]
        assert module["newly_killed"]


@pytest.mark.slow
def test_each_accepted_test_kills_a_mutant_the_suite_missed(model_run):
    _, report, *_ = model_run
    missed = {
        m["id"] for m in report["mutation"]["mutants"] if m["status"] in ("Survived", "NoCoverage")
    }
    accepted = [c for c in report["escalation"]["candidates"] if c["accepted"]]
    assert {c["name"] for c in accepted} >= {"test_bulk_discount_tiers", "test_broken"}
    for candidate in accepted:
        assert candidate["kills"] and set(candidate["kills"]) <= missed


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "stage", "reason"),
    [
        ("test_broken", "generated", "does not parse: line 1"),
        ("test_asserts_nothing", "parsed", "high-severity smell: AT001 assertion-free"),
        ("test_imports_nothing_real", "clean", "does not import"),
        ("test_wrong_oracle", "clean", "fails on the original code: test_wrong_oracle: failed"),
        (
            "test_hangs",
            "clean",
            "fails on the original code: test_hangs: timeout: timed out after 2s",
        ),
        (
            "test_writes_outside_tmp",
            "clean",
            "blocked: blocked by audit guard: open-for-write /etc/audit-escalation-escape"
            " (test_writes_outside_tmp)",
        ),
        (
            "test_no_coupon_leaves_the_subtotal",
            "passes",
            "breaks the suite: tests_shallow/test_cart.py::test_cart_total fails with it",
        ),
    ],
)
def test_bad_answers_are_rejected_with_their_reason(model_run, name, stage, reason):
    _, report, *_ = model_run
    candidate = _candidate(report, name)
    assert not candidate["accepted"]
    assert candidate["stage"] == stage
    assert candidate["reason"].startswith(reason)


@pytest.mark.slow
def test_a_test_failing_on_an_assertion_is_a_suspected_bug(model_run):
    _, report, *_ = model_run
    assert _candidate(report, "test_wrong_oracle")["suspected_bug"]
    assert not _candidate(report, "test_hangs")["suspected_bug"]


@pytest.mark.slow
def test_the_repair_round_sends_the_failures_and_its_answer_is_proven(model_run):
    _, report, _, _, requests, _ = model_run
    repair = [r for r in requests if "were rejected" in json.dumps(r.body)]
    assert len(repair) == 1
    assert "does not parse" in json.dumps(repair[0].body)
    repaired = _candidate(report, "test_broken", round_=1)
    assert repaired["origin"] == "repair" and repaired["accepted"]


@pytest.mark.slow
def test_prose_without_code_and_a_429_are_reported_and_the_run_goes_on(model_run):
    _, report, *_ = model_run
    errors = report["escalation"]["errors"]
    assert any("shop_cart" in e and "no Python test in the answer" in e for e in errors)
    cart = next(m for m in report["escalation"]["modules"] if m["file"] == "shop/cart.py")
    assert cart["escalated"] and cart["accepted"] == 0


@pytest.mark.slow
def test_funnel_counts_every_stage_in_order(model_run):
    _, report, *_ = model_run
    funnel = report["escalation"]["funnel"]
    assert list(funnel) == [
        "generated",
        "parsed",
        "clean",
        "passes",
        "stable",
        "adds value",
        "accepted",
    ]
    counts = list(funnel.values())
    assert counts == sorted(counts, reverse=True)
    assert funnel["generated"] == len(report["escalation"]["candidates"])
    assert funnel["accepted"] == sum(c["accepted"] for c in report["escalation"]["candidates"])


@pytest.mark.slow
def test_usage_and_cost_are_counted(model_run):
    _, report, *_ = model_run
    usage = report["escalation"]["usage"]
    assert usage["requests"] == 4
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["cost"] > 0


@pytest.mark.slow
def test_hardened_files_hold_the_accepted_tests_and_name_their_kills(model_run):
    _, report, root, *_ = model_run
    path = root / ".audit" / "hardened" / "test_shop_pricing_hardened.py"
    text = path.read_text()
    assert "def test_bulk_discount_tiers" in text and "def test_tax_for_each_category" in text
    assert "kills shop/pricing.py::" in text
    assert report["escalation"]["hardened_files"] == [
        ".audit/hardened/test_shop_inventory_hardened.py",
        ".audit/hardened/test_shop_pricing_hardened.py",
    ]


@pytest.mark.slow
def test_requests_carry_code_survivors_smells_and_tests(model_run):
    _, report, root, *_ = model_run
    request = (root / ".audit" / "escalation" / "shop_pricing.request.md").read_text()
    survivor = next(
        m
        for m in report["mutation"]["mutants"]
        if m["status"] == "Survived" and m["file"] == "shop/pricing.py"
    )
    assert survivor["id"] in request
    assert "  27  def bulk_discount(quantity: int) -> Decimal:" in request
    assert "AT001 assertion-free" in request
    assert "### tests_shallow/test_pricing.py" in request


@pytest.mark.slow
def test_requests_carry_the_feedback_a_fast_model_gets_about_the_module(model_run):
    _, report, root, *_ = model_run
    request = (root / ".audit" / "escalation" / "shop_pricing.request.md").read_text()
    findings = build(Report.model_validate(report), {"shop/pricing.py"})
    assert findings.render(MAX_FINDINGS_CHARS).rstrip() in request
    assert "`if quantity < 0:` -> `if quantity <= 0:` (< -> <=) was not caught" in request


@pytest.mark.slow
def test_the_api_key_is_written_nowhere(model_run):
    result, _, root, _, requests, _ = model_run
    assert requests and all(r.headers["authorization"] == f"Bearer {KEY}" for r in requests)
    for path in (root / ".audit").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in result.stdout + result.stderr


@pytest.mark.slow
def test_the_user_tree_is_untouched_and_nothing_escaped(model_run):
    _, _, root, digest, _, _ = model_run
    assert tree_digest(root) == digest
    assert not Path("/etc/audit-escalation-escape").exists()


@pytest.mark.slow
def test_offline_run_writes_requests_and_proves_witness_tests(tmp_path):
    root = tmp_path / "shop"
    _copy_shop(root)
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    result = _audit(root, "--probe-examples", "30", env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads((root / ".audit" / "report.json").read_text())
    escalation = report["escalation"]
    assert escalation["mode"] == "offline" and escalation["usage"]["requests"] == 0
    for module in escalation["modules"]:
        assert (root / module["request"]).is_file()
    accepted = [c for c in escalation["candidates"] if c["accepted"]]
    assert accepted and all(c["origin"] == "witness" and c["kills"] for c in accepted)
    missed = {
        m["id"] for m in report["mutation"]["mutants"] if m["status"] in ("Survived", "NoCoverage")
    }
    assert all(set(c["kills"]) <= missed for c in accepted)
    for module in escalation["modules"]:
        if module["accepted"]:
            assert module["after"]["score"] > module["before"]["score"]


@pytest.mark.slow
def test_html_and_markdown_show_the_funnel_and_the_measured_scores(model_run):
    from auditor.report import Report
    from reports import html, markdown

    _, _, root, *_ = model_run
    report = Report.read(root / ".audit" / "report.json")
    page = html.render(report)
    assert "<h3>Funnel</h3>" in page and "candidates-table" in page
    assert "suspected bug or wrong oracle" in page
    pricing = next(m for m in report.escalation.modules if m.file == "shop/pricing.py")
    text = markdown.render(report)
    assert f"| `shop/pricing.py` | {pricing.before.score:g}% | {pricing.after.score:g}% |" in text


# Per fixture: one module's request fails for good (a lasting 500 on textkit, an answer
# slower than the timeout on ledger); the other modules get good answers.
FAILING_REQUEST = {
    "ledger": ("ledger_io/money.py", Answer(delay=4, uses=3), "no answer within the timeout"),
    "textkit": ("src/textkit/wrap.py", Answer(status=500, uses=3), "HTTP 500"),
}


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["ledger", "textkit"])
def test_good_answers_harden_every_fixture(tmp_path, fixture):
    """The scripted model answers every request with the fixture's strong test files."""
    root = copy_fixture(fixture, tmp_path / fixture)
    strong = sorted((root / "tests_strong").glob("test_*.py"))
    answer = structured(*({"name": p.stem, "code": p.read_text()} for p in strong))
    failing_module, failure, error = FAILING_REQUEST[fixture]
    failure.match = f"tests for `{failing_module}`"
    with ScriptedServer([failure], default=Answer(answer)) as server:
        with (root / "pyproject.toml").open("a") as config:
            config.write(
                "\n[tool.audit]\nflaky_reruns = 0\n\n[tool.audit.escalation]\n"
                f'base_url = "{server.base_url}"\nrepair_rounds = 0\ncandidate_runs = 2\n'
                "request_timeout = 2\nmax_retries = 2\n"
            )
        env = {**os.environ, "OPENAI_API_KEY": KEY}
        flags = ("--no-probes", "--mutators", "comparison,constants,returns", "--apply")
        result = _audit(root, *flags, env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads((root / ".audit" / "report.json").read_text())
    escalation = report["escalation"]
    missed = {
        m["id"] for m in report["mutation"]["mutants"] if m["status"] in ("Survived", "NoCoverage")
    }
    accepted = [c for c in escalation["candidates"] if c["accepted"]]
    assert accepted
    assert all(c["kills"] and set(c["kills"]) <= missed for c in accepted)
    hardened = [m for m in escalation["modules"] if m["accepted"]]
    assert hardened and all(m["after"]["score"] > m["before"]["score"] for m in hardened)
    assert any(error in line for line in escalation["errors"])
    assert escalation["usage"]["failed_requests"] == 1
    # Every module got the same answer: each test is one candidate, its repeats counted.
    answered = escalation["usage"]["requests"] - escalation["usage"]["failed_requests"]
    assert answered >= 2
    assert len(escalation["candidates"]) == len(strong)
    assert escalation["repeats"] == (answered - 1) * len(strong)
    assert not any(c["module"] == failing_module for c in escalation["candidates"])
    for applied, source in zip(
        escalation["applied_files"], escalation["hardened_files"], strict=True
    ):
        assert applied.startswith("tests_shallow/test_")
        assert (root / applied).read_text() == (root / source).read_text()
    # As the user runs them: plain pytest, the written files with the shallow suite
    # (textkit's src layout on the path, as its installed package would be).
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests_shallow"]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    run = subprocess.run(plain, cwd=root, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stdout[-2000:]
