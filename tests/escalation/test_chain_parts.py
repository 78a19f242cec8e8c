"""The parts of the filter chain that need no test run: parsing, minimizing, composing
the hardened file, and `audit generate` against the scripted server."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from auditor.escalation.hardened import compose, share_files
from auditor.escalation.policy import weak_modules
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


def _files(*candidates: Candidate) -> list[list[int]]:
    return [[int(c.id.rsplit(".", 1)[1]) for c in group] for group in share_files(candidates)]


def test_tests_of_the_same_name_go_to_two_files_unrenamed():
    first = candidate(1, "import math\n\n\ndef test_same():\n    assert math.floor(1.5) == 1\n")
    second = candidate(2, "import math\n\n\ndef test_same():\n    assert math.ceil(1.5) == 2\n")
    groups = share_files([first, second])
    assert [[c.id for c in group] for group in groups] == [[first.id], [second.id]]
    texts = [compose("", group) for group in groups]
    for text, expected in zip(texts, ("floor", "ceil"), strict=True):
        namespace: dict = {}
        exec(compile(text, "hardened", "exec"), namespace)
        assert (expected in text, "test_same" in namespace) == (True, True)
        namespace["test_same"]()


def test_a_fixture_that_would_hide_the_conftest_one_another_test_requests_is_apart():
    # GPT-4o's answers for a timers package: one candidate defines its own `timers`
    # fixture, another takes `timers` from conftest.
    own = candidate(
        1,
        "import pytest\n\n\n@pytest.fixture\ndef timers():\n    return {}\n\n\n"
        "def test_empty(timers):\n    assert timers == {}\n",
    )
    from_conftest = candidate(
        2, "def test_add(timers):\n    timers.add('x', 1)\n    assert timers\n"
    )
    assert _files(own, from_conftest) == [[1], [2]]


def test_a_local_definition_of_a_name_another_candidate_imports_is_apart():
    imported = candidate(2, "from pkg.mod import Section\n\n\ndef test_b():\n    assert Section\n")
    local = candidate(
        1,
        "from collections import namedtuple\n\nSection = namedtuple('Section', 'a')\n\n\n"
        "def test_a():\n    assert Section(1).a == 1\n",
    )
    helper = candidate(
        3, "def _clean_str(s):\n    return s\n\n\ndef test_c():\n    assert _clean_str('a')\n"
    )
    uses = candidate(
        4, "from pkg.mod import _clean_str\n\n\ndef test_d():\n    assert _clean_str('a')\n"
    )
    assert _files(local, imported, helper, uses) == [[1, 3], [2, 4]]


def test_candidates_sharing_imports_and_a_helper_word_for_word_share_a_file():
    helper = "import math\n\n\ndef _half(x):\n    return x / 2\n\n\n"
    first = candidate(1, helper + "def test_one():\n    assert _half(math.pi) > 1\n")
    second = candidate(2, helper + "def test_two():\n    assert _half(4) == 2\n")
    (group,) = share_files([first, second])
    text = compose("", group)
    assert (text.count("import math"), text.count("def _half")) == (1, 1)
    namespace: dict = {}
    exec(compile(text, "hardened", "exec"), namespace)
    namespace["test_one"](), namespace["test_two"]()


def test_top_level_code_that_acts_on_the_whole_file_keeps_its_candidate_apart():
    setup = candidate(
        1, "import sys\n\nsys.path.insert(0, 'x')\n\n\ndef test_a():\n    assert sys\n"
    )
    other = candidate(2)
    assert _files(setup, other) == [[1], [2]]


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
        {
            "name": "test_round_again",  # the same name: it must not replace the first
            "code": "from decimal import Decimal\nfrom shop.pricing import "
            "round_money\n\n\ndef test_round():\n    assert round_money(Decimal('2.5')) == "
            "Decimal('2.50')\n",
        },
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
    folder = root / ".audit" / "generated"
    texts = [
        (folder / name).read_text() for name in ("test_shop_pricing.py", "test_shop_pricing_2.py")
    ]
    assert ["def test_round():" in text for text in texts] == [True, True]
    assert ("1.005" in texts[0], "2.5" in texts[1]) == (True, True)
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


def test_survivors_labelled_likely_equivalent_are_targets_but_not_the_rank():
    # The label is no proof: on two field packages real deep-model tests killed 18 of 20,
    # 6 of 17 and 39 of 162 survivors so labelled.
    mutants = [
        SimpleNamespace(id="m.py::f::a", file="m.py", status="Survived"),
        SimpleNamespace(id="m.py::f::b", file="m.py", status="Survived"),
        SimpleNamespace(id="m.py::f::c", file="m.py", status="NoCoverage"),
    ]
    mutation = SimpleNamespace(
        mutants=mutants,
        pseudo_tested=[],
        files=[SimpleNamespace(path="m.py", scores=SimpleNamespace(covered_score=10.0))],
    )
    probes = SimpleNamespace(
        witnesses=[SimpleNamespace(mutant_id="m.py::f::b", status="likely_equivalent")],
        findings=[],
    )
    baseline, smells = SimpleNamespace(tests=[]), SimpleNamespace(findings=[])
    (module,) = weak_modules(baseline, smells, mutation, probes, 70.0)
    assert module.survivors == ["m.py::f::a"]
    assert module.targets == ["m.py::f::a", "m.py::f::b", "m.py::f::c"]
