"""The model client over real HTTP, against the scripted server on 127.0.0.1."""

from __future__ import annotations

import pytest

from auditor.escalation.model import ChatModel, ModelError, proposals_from_text
from auditor.escalation.prompts import Prompt
from tests.escalation.server import Answer, ScriptedServer, structured

PROMPT = Prompt("system text", "user text")
GOOD = structured({"name": "test_one", "code": "def test_one():\n    assert 1 + 1 == 2\n"})
KEY = "sk-client-test-key"


def ask(answers: list[Answer], api: str = "chat", timeout: float = 5, retries: int = 2):
    with ScriptedServer(answers) as server:
        model = ChatModel("deep", KEY, server.base_url, api, timeout, retries)
        try:
            return model.ask(PROMPT), server.requests
        finally:
            model.close()


def test_structured_answer_is_parsed_with_its_token_counts():
    reply, requests = ask([Answer(GOOD)])
    assert reply.structured
    assert [p.name for p in reply.proposals] == ["test_one"]
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert requests[0].body["response_format"]["type"] == "json_schema"


def test_the_key_travels_only_in_the_authorization_header():
    _, requests = ask([Answer(GOOD)])
    assert requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in str(requests[0].body)


def test_prose_with_a_fenced_block_is_read_as_a_test():
    reply, _ = ask([Answer("Sure:\n```python\ndef test_two():\n    assert 2 == 2\n```\n")])
    assert not reply.structured
    assert [p.name for p in reply.proposals] == ["test_two"]


def test_prose_without_code_gives_no_proposal_and_says_so():
    reply, _ = ask([Answer("I would test the edge cases carefully.")])
    assert reply.proposals == []
    assert reply.notes == ["no Python test in the answer"]


def test_a_429_is_retried_and_the_next_answer_used():
    reply, requests = ask([Answer(status=429, headers={"retry-after-ms": "10"}), Answer(GOOD)])
    assert [p.name for p in reply.proposals] == ["test_one"]
    assert len(requests) == 2


@pytest.mark.slow
def test_a_lasting_500_is_one_line_error_after_the_retries():
    with pytest.raises(ModelError, match="HTTP 500") as error:
        ask([Answer(status=500, uses=10)], retries=1)
    assert "\n" not in str(error.value)


@pytest.mark.slow
def test_a_slow_answer_past_the_timeout_is_an_error():
    with pytest.raises(ModelError, match="no answer within the timeout"):
        ask([Answer(GOOD, delay=3)], timeout=0.5, retries=0)


def test_endpoint_refusing_structured_output_is_asked_again_in_plain_text():
    fenced = "```python\ndef test_three():\n    assert 3 == 3\n```"
    reply, requests = ask([Answer(status=400), Answer(fenced)])
    assert [p.name for p in reply.proposals] == ["test_three"]
    assert "response_format" not in requests[1].body


@pytest.mark.slow
def test_responses_api_is_parsed_too():
    reply, requests = ask([Answer(GOOD)], api="responses")
    assert requests[0].path == "/v1/responses"
    assert [p.name for p in reply.proposals] == ["test_one"]


def test_fenced_blocks_without_a_test_function_are_ignored():
    text = "```python\nx = 1\n```\n```python\ndef test_a():\n    assert x\n```"
    assert [p.name for p in proposals_from_text(text)] == ["test_a"]
