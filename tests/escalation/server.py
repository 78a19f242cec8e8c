"""A real OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script.

It serves `/v1/chat/completions` and `/v1/responses`; each request takes the first
scripted answer whose `match` occurs in the request body (and that has uses left). Every
request is recorded, headers included, so tests can check what was sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Answer:
    content: str = ""
    """The assistant's text: JSON for structured output, or prose/Markdown."""
    match: str = ""
    status: int = 200
    delay: float = 0.0
    uses: int = 1
    headers: dict[str, str] = field(default_factory=dict)


def structured(*tests: dict[str, Any]) -> str:
    return json.dumps({"tests": [{"targets": [], "rationale": "", **t} for t in tests]})


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class ScriptedServer:
    def __init__(self, answers: list[Answer], default: Answer | None = None) -> None:
        self.answers = answers
        self.default = default or Answer(content=structured())
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, raw: str) -> Answer:
        with self._lock:
            for answer in self.answers:
                if answer.uses > 0 and answer.match in raw:
                    answer.uses -= 1
                    return answer
        return self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                body = json.loads(raw or "{}")
                with server._lock:
                    server.requests.append(
                        Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                answer = server._next(raw)
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.status != 200:
                    payload = {"error": {"message": f"scripted {answer.status}", "type": "x"}}
                elif self.path.endswith("/responses"):
                    payload = _response(body, answer.content)
                else:
                    payload = _completion(body, answer.content)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

        return Handler


def _tokens(body: dict[str, Any], content: str) -> tuple[int, int]:
    return len(json.dumps(body)) // 4, len(content) // 4


def _completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    prompt, completion = _tokens(body, content)
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _response(body: dict[str, Any], content: str) -> dict[str, Any]:
    prompt, completion = _tokens(body, content)
    return {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 0,
        "model": body.get("model", ""),
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": "msg_scripted",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": content, "annotations": []}],
            }
        ],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def escalate(root: Path, script: list[Answer], *flags: str) -> dict[str, Any]:
    """`audit tests_shallow --escalate` on `root`, asking a scripted server (a request
    no answer matches gets no test); the report it wrote."""
    with ScriptedServer(script, default=Answer(structured())) as server:
        with (root / "pyproject.toml").open("a") as config:
            config.write(
                "\n[tool.audit.escalation]\n"
                f'base_url = "{server.base_url}"\nrepair_rounds = 0\nrequest_timeout = 20\n'
            )
        result = subprocess.run(
            [sys.executable, "-m", "auditor", "tests_shallow", "-q", "--escalate", *flags],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "OPENAI_API_KEY": "sk-scripted-0123456789"},
        )
    assert result.returncode == 0, result.stderr
    return json.loads((root / ".audit" / "report.json").read_text())
