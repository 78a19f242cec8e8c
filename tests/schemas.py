"""Published JSON Schemas the outputs are checked against, vendored in tests/vendored/
(where they come from and how to update them: its README)."""

from __future__ import annotations

import json
from pathlib import Path

VENDORED = Path(__file__).parent / "vendored"

SARIF = "sarif-2.1.0-rtm.5.json"
STRYKER = "mutation-testing-report-schema-3.8.4.json"


def published_schema(name: str) -> dict:
    return json.loads((VENDORED / name).read_text(encoding="utf-8"))
