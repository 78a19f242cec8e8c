"""A shields.io endpoint badge: `https://img.shields.io/endpoint?url=...` draws it from
this JSON (https://shields.io/badges/endpoint-badge)."""

from __future__ import annotations

import json

from auditor.report import Report

_COLOR = {"strong": "brightgreen", "adequate": "yellowgreen", "weak": "orange", "shallow": "red"}


def render(report: Report, previous: Report | None = None) -> str:
    rating = report.gate.rating
    scores = report.mutation.scores if report.mutation else None
    score = rating.score if rating is not None else scores.score if scores else None
    message = f"{score:.1f}%" if score is not None else "not measured"
    if report.gate.conditions:
        color = "brightgreen" if report.gate.verdict == "pass" else "red"
    elif rating is not None:
        color = _COLOR[rating.level]
        message += f" ({rating.level})"
    else:
        color = "lightgrey"
    if report.status != "complete":
        color, message = "lightgrey", f"{message}, incomplete"
    badge = {"schemaVersion": 1, "label": "mutation score", "message": message, "color": color}
    return json.dumps(badge, sort_keys=True) + "\n"
