"""Accepted survivors: a mutant a person has looked at and decided needs no test (an
equivalent mutant, a log message), with the reason.

Two ways to say so. A comment on the mutated line of the code under test,
`# audit: accept[the reason]`, accepts every survivor on that line for as long as the
comment stays. The ledger `.audit/accepted.toml`, which `audit accept MUTANT_ID
--reason ...` writes, accepts one mutant for as long as its change is the same: an
entry holds a digest of the mutant's id and its diff (the mutated lines before and
after), so it expires when those lines change, and not when code or tests elsewhere
do. An accepted survivor gets status `Ignored` (it leaves the scores, as Stryker's
ignored mutants do), its reason in `accepted`, and the gate can cap how many there are
(`max_accepted_percent`).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from auditor.errors import AcceptanceError
from auditor.report import Mutant

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

LEDGER = Path(".audit") / "accepted.toml"
_COMMENT = re.compile(r"#\s*audit:\s*accept\[(?P<reason>[^\]]*)\]")
_KEYS = {"mutant", "reason", "digest"}


@dataclass(frozen=True)
class Entry:
    mutant: str
    reason: str
    digest: str


def digest(mutant: Mutant) -> str:
    """What an acceptance is of: the mutant's id and its change, nothing around them."""
    return hashlib.sha256(f"{mutant.id}\0{mutant.diff}".encode()).hexdigest()[:16]


def read_ledger(root: Path) -> dict[str, Entry]:
    """The ledger's entries by mutant id; a ledger that does not parse is a one-line
    error naming the file and the entry."""
    path = root / LEDGER
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise AcceptanceError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise AcceptanceError(f"{path} is not valid TOML: {exc}") from None
    entries = data.get("accepted", [])
    if set(data) - {"accepted"} or not isinstance(entries, list):
        raise AcceptanceError(f"{path} holds only [[accepted]] tables")
    found = {}
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or set(entry) != _KEYS:
            raise AcceptanceError(
                f"{path}, entry {number}: needs exactly mutant, reason and digest"
            )
        if not all(isinstance(entry[key], str) and entry[key] for key in _KEYS):
            raise AcceptanceError(f"{path}, entry {number}: values must be non-empty text")
        found[entry["mutant"]] = Entry(entry["mutant"], entry["reason"], entry["digest"])
    return found


def write_entry(root: Path, mutant: Mutant, reason: str) -> Path:
    """Add (or replace) the acceptance of `mutant`; entries stay sorted by id."""
    if not reason.strip():
        raise AcceptanceError("--reason must say why the mutant needs no test")
    entries = read_ledger(root)
    entries[mutant.id] = Entry(mutant.id, reason.strip(), digest(mutant))
    lines = [
        "# Accepted surviving mutants (audit accept MUTANT_ID --reason ...). An entry",
        "# expires when the mutated lines change (digest of the mutant's id and diff).",
    ]
    for entry in sorted(entries.values(), key=lambda e: e.mutant):
        lines += [
            "",
            "[[accepted]]",
            f"mutant = {json.dumps(entry.mutant)}",
            f"reason = {json.dumps(entry.reason)}",
            f"digest = {json.dumps(entry.digest)}",
        ]
    path = root / LEDGER
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def apply(
    mutants: list[Mutant], sources: dict[str, str], ledger: dict[str, Entry]
) -> tuple[list[Mutant], list[str]]:
    """The mutants with accepted survivors marked, and the ids of ledger entries that
    expired (their mutant's change is not the one accepted)."""
    lines = {file: text.splitlines() for file, text in sources.items()}
    marked, expired = [], []
    for mutant in mutants:
        reason = _comment_reason(lines.get(mutant.file, []), mutant)
        entry = ledger.get(mutant.id)
        if entry is not None and entry.digest != digest(mutant):
            expired.append(mutant.id)
            entry = None
        if not reason and entry is not None:
            reason = entry.reason
        if mutant.status == "Survived" and reason:
            mutant = mutant.model_copy(
                update={
                    "status": "Ignored",
                    "status_reason": f"accepted: {reason}",
                    "accepted": reason,
                }
            )
        marked.append(mutant)
    return marked, sorted(expired)


def _comment_reason(lines: list[str], mutant: Mutant) -> str:
    for number in range(mutant.line, max(mutant.line, mutant.end_line) + 1):
        if 0 < number <= len(lines):
            match = _COMMENT.search(lines[number - 1])
            if match and match["reason"].strip():
                return match["reason"].strip()
    return ""
