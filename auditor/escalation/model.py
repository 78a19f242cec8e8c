"""The deep (or fast) model behind the official `openai` client.

Any OpenAI-compatible endpoint works. Answers are asked for as structured output (the
client's `parse` support with a pydantic model); an endpoint that refuses structured
output, or answers in prose, is read by taking the fenced Python blocks out of the text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import openai
from pydantic import BaseModel, Field, ValidationError

from auditor.config import EscalationConfig
from auditor.escalation.prompts import Prompt


class TestProposal(BaseModel):
    __test__ = False
    name: str
    code: str
    targets: list[str] = Field(default_factory=list)
    rationale: str = ""


class Proposals(BaseModel):
    tests: list[TestProposal]


class ModelError(Exception):
    """A request that failed for good (after the client's retries): one line."""


@dataclass
class Reply:
    proposals: list[TestProposal]
    text: str
    """The answer as the model wrote it (JSON or prose), kept in the escalation log."""
    structured: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0
    notes: list[str] = field(default_factory=list)


_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)
_TEST_DEF = re.compile(r"^(?:async\s+)?def\s+(test_\w+)", re.MULTILINE)


def proposals_from_text(text: str) -> list[TestProposal]:
    """Fenced Python blocks with at least one test function, one proposal each (the
    fallback for endpoints without structured output)."""
    found = []
    for block in _FENCE.findall(text):
        names = _TEST_DEF.findall(block)
        if names:
            found.append(TestProposal(name=names[0], code=block))
    return found


class ChatModel:
    """One model on one endpoint. `api_key` is passed in, never read from or written to a
    file by this class; error messages never include it."""

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str | None,
        api: str = "chat",
        timeout: float = 120.0,
        max_retries: int = 2,
    ) -> None:
        self.model = model
        self.api = api
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    @classmethod
    def configured(cls, settings: EscalationConfig, model: str, api_key: str) -> ChatModel:
        """`model` on the endpoint, API and limits of `[tool.audit.escalation]`."""
        return cls(
            model,
            api_key,
            settings.base_url,
            settings.api,
            settings.request_timeout,
            settings.max_retries,
        )

    def close(self) -> None:
        self._client.close()

    def ask(self, prompt: Prompt) -> Reply:
        try:
            if self.api == "responses":
                return self._ask_responses(prompt)
            return self._ask_chat(prompt)
        except openai.APITimeoutError:
            raise ModelError(f"{self.model}: no answer within the timeout") from None
        except openai.APIConnectionError as exc:
            raise ModelError(f"{self.model}: cannot connect ({exc.__cause__ or exc})") from None
        except openai.APIStatusError as exc:
            raise ModelError(f"{self.model}: HTTP {exc.status_code}: {_short(exc)}") from None

    def _ask_chat(self, prompt: Prompt) -> Reply:
        messages: Any = prompt.messages()
        try:
            raw = self._client.chat.completions.with_raw_response.parse(
                model=self.model, messages=messages, response_format=Proposals
            )
        except openai.BadRequestError as exc:
            # An endpoint without structured output: ask again in plain text.
            plain = self._client.chat.completions.create(model=self.model, messages=messages)
            text = (plain.choices[0].message.content or "") if plain.choices else ""
            reply = _from_text(text, plain.usage)
            reply.notes.append(f"structured output refused ({_short(exc)}): read fenced code")
            return reply
        body = json.loads(raw.http_response.text)
        text = (body.get("choices") or [{}])[0].get("message", {}).get("content") or ""
        try:
            parsed = raw.parse().choices[0].message.parsed
        except (ValidationError, ValueError, IndexError):
            parsed = None
        usage = body.get("usage") or {}
        if parsed is None:
            return _from_text(text, usage)
        return Reply(
            parsed.tests,
            text,
            structured=True,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )

    def _ask_responses(self, prompt: Prompt) -> Reply:
        raw = self._client.responses.with_raw_response.parse(
            model=self.model,
            instructions=prompt.system,
            input=prompt.user,
            text_format=Proposals,
        )
        body = json.loads(raw.http_response.text)
        usage = body.get("usage") or {}
        text = "".join(
            part.get("text", "")
            for item in body.get("output") or []
            for part in item.get("content") or []
            if isinstance(part, dict)
        )
        try:
            parsed = raw.parse().output_parsed
        except (ValidationError, ValueError):
            parsed = None
        tokens = (int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))
        if parsed is None:
            reply = _from_text(text, None)
            reply.prompt_tokens, reply.completion_tokens = tokens
            return reply
        return Reply(parsed.tests, text, True, *tokens)


def _from_text(text: str, usage: Any) -> Reply:
    if usage is not None and not isinstance(usage, dict):
        usage = usage.model_dump()
    usage = usage or {}
    proposals = proposals_from_text(text)
    notes = [] if proposals else ["no Python test in the answer"]
    return Reply(
        proposals,
        text,
        structured=False,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        notes=notes,
    )


def _short(exc: openai.APIStatusError) -> str:
    message = exc.message if isinstance(exc.message, str) else str(exc)
    return message.splitlines()[0][:200] if message else type(exc).__name__
