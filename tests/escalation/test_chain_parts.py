"""The parts of the filter chain that need no test run: parsing, minimizing, composing
the hardened file, and `audit generate` against the scripted server."""

from __future__ import annotations

import os

import pytest

from auditor.escalation.hardened import compose, hardened_header
from auditor.escalation.proving import check_parses, minimize
from auditor.report import Candidate
from tests.conftest import run_audit
from tests.escalation.server import Answer, ScriptedServer, structured


def candidate(number: int, code: str = "", kills=(), lines=(), stage="adds value") -> Candidate:
    return Candidate(
        id=f"pkg/mod.py#0.{number}",
        module="pkg/mod.py",
        origin="model",
        round=0,
        name=f"test_{number}",
        code=code or f"def test_{number}():\n    assert {number}\n",
        stage=stage,
        kills=list(kills),
        new_lines={"pkg/mod.py": list(lines)} if lines else {},
    )


def test_syntax_errors_stop_at_generated_with_the_line():
    broken = candidate(1, "def test_x(:\n    pass\n", stage="generated")
    check_parses(broken)
    assert (broken.stage, broken.reason) == ("generated", "does not parse: line 1: invalid syntax")


def test_code_without_a_test_function_is_not_parsed():
    helper = candidate(1, "def helper():\n    return 1\n", stage="generated")
    check_parses(helper)
    assert helper.stage == "generated" and helper.reason == "no test function in it"


def test_minimize_drops_a_candidate_whose_kills_others_already_make():
    wide, narrow, other = (
        candidate(1, kills=["a", "b"]),
        candidate(2, kills=["a"]),
        candidate(3, lines=[7]),
    )
    minimize([narrow, wide, other])
    assert (wide.accepted, narrow.accepted, other.accepted) == (True, False, True)
    assert narrow.reason.startswith("redundant")


def test_minimize_ignores_candidates_that_did_not_add_value():
    failing = candidate(1, kills=["a"], stage="clean")
    minimize([failing])
    assert not failing.accepted and failing.stage == "clean"


def test_composed_file_keeps_both_tests_when_names_clash():
    first = candidate(1, "import math\n\n\ndef test_same():\n    assert math.floor(1.5) == 1\n")
    second = candidate(2, "import math\n\n\ndef test_same():\n    assert math.ceil(1.5) == 2\n")
    text = compose(hardened_header("pkg/mod.py"), [first, second])
    assert text.count("import math") == 1
    namespace: dict = {}
    exec(compile(text, "hardened", "exec"), namespace)
    tests = sorted(name for name in namespace if name.startswith("test_"))
    assert tests == ["test_same", "test_same_0_2"]
    for name in tests:
        namespace[name]()


def test_composed_file_keeps_decorators():
    code = (
        "import pytest\n\n\n@pytest.mark.parametrize('x', [1, 2])\ndef test_x(x):\n    assert x\n"
    )
    text = compose("", [candidate(1, code)])
    assert "@pytest.mark.parametrize('x', [1, 2])\ndef test_x(x):" in text


@pytest.mark.slow
def test_generate_writes_the_fast_models_suite(project_copy):
    root = project_copy("shop")
    suite = structured(
        {
            "name": "test_round",
            "code": "from decimal import Decimal\nfrom shop.pricing import "
            "round_money\n\n\ndef test_round():\n    assert round_money(Decimal('1.005')) == "
            "Decimal('1.01')\n",
        },
        {"name": "test_broken", "code": "def test_broken(:\n"},
    )
    with ScriptedServer([Answer(suite)]) as server:
        with (root / "pyproject.toml").open("a") as config:
            config.write(f'\n[tool.audit.escalation]\nbase_url = "{server.base_url}"\n')
        os.environ["AUDIT_TEST_KEY"] = "sk-generate"
        try:
            config_text = (root / "pyproject.toml").read_text()
            (root / "pyproject.toml").write_text(config_text + 'api_key_env = "AUDIT_TEST_KEY"\n')
            result = run_audit("generate", "shop/pricing.py", cwd=root)
        finally:
            del os.environ["AUDIT_TEST_KEY"]
        model = server.requests[0].body["model"]
    assert result.returncode == 0, result.stderr
    assert model == "gpt-5.1-codex-mini"
    written = root / ".audit" / "generated" / "test_shop_pricing.py"
    assert "def test_round():" in written.read_text()
    assert "dropped test_broken: does not parse" in result.stderr


def test_generate_without_a_key_is_a_one_line_error(project_copy):
    root = project_copy("shop")
    env_key = os.environ.pop("OPENAI_API_KEY", None)
    try:
        result = run_audit("generate", "shop/pricing.py", cwd=root)
    finally:
        if env_key is not None:
            os.environ["OPENAI_API_KEY"] = env_key
    assert result.returncode == 2
    assert result.stderr.strip() == "audit: generate: no API key: set OPENAI_API_KEY"


def test_require_escalation_fails_the_gate_when_nothing_was_accepted():
    from auditor.gate import require_escalation
    from auditor.report import EscalatedModule, EscalationSection, GateSection

    module = EscalatedModule(file="pkg/mod.py", reasons=["x"], survivors=3, escalated=True)
    section = EscalationSection(mode="offline", modules=[module], candidates=[], funnel={})
    gate = require_escalation(GateSection(verdict="pass", conditions=[]), section)
    assert gate.verdict == "fail"
    assert gate.conditions[-1].message == "escalation accepted 0 tests (at least 1 required)"
    module.accepted = 2
    assert require_escalation(GateSection(verdict="pass", conditions=[]), section).verdict == "pass"


def test_minimize_keeps_one_of_two_candidates_taking_the_same_new_branch():
    first, second = candidate(1), candidate(2)
    for each in (first, second):
        each.new_arcs = {"pkg/mod.py": [(3, 5)]}
    minimize([second, first])
    assert (first.accepted, second.accepted) == (True, False)


def test_budget_stops_at_the_first_limit_reached_and_says_which():
    from auditor.config import EscalationConfig
    from auditor.escalation.model import Reply
    from auditor.escalation.stage import Budget
    from auditor.report import ModelUsage

    settings = EscalationConfig(
        max_requests=5, max_tokens=1000, max_cost=0.01, prices={"m": (1.0, 10.0)}
    )
    budget = Budget(settings, ModelUsage())
    assert budget.allows_request()
    budget.record("m", Reply([], "", structured=True, prompt_tokens=400, completion_tokens=100))
    assert budget.usage.cost == 0.0014
    assert budget.allows_request()
    budget.record("m", Reply([], "", structured=True, prompt_tokens=400, completion_tokens=200))
    assert not budget.allows_request()
    assert budget.exhausted == "max_tokens (1000) reached"


def test_budget_counts_failed_requests_against_max_requests():
    from auditor.config import EscalationConfig
    from auditor.escalation.stage import Budget
    from auditor.report import ModelUsage

    budget = Budget(EscalationConfig(max_requests=1), ModelUsage())
    budget.record("m", None)
    assert (budget.usage.requests, budget.usage.failed_requests) == (1, 1)
    assert not budget.allows_request() and budget.exhausted == "max_requests (1) reached"


def test_budget_sends_no_request_once_the_runs_time_budget_is_used_up():
    import time

    from auditor.config import EscalationConfig
    from auditor.escalation.stage import Budget
    from auditor.report import TIME_BUDGET_USED_UP, ModelUsage

    budget = Budget(EscalationConfig(), ModelUsage(), deadline=time.monotonic() - 1)
    assert not budget.allows_request()
    assert budget.exhausted == TIME_BUDGET_USED_UP
