"""A test file's smells kept between runs, keyed by content as mutant verdicts are.

What the analysis of one file finds depends on that file, the conftest files between it
and the root (their fixtures), the packages under test, the configured assertion
helpers and the rules' own code: the key covers exactly that. A rerun with nothing
changed parses no test file (libcst's parse is most of the stage: 4 s of marshmallow's
1,192 tests)."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from auditor import __version__
from auditor.report import CollectionError, Smell


class FileSmells(BaseModel):
    """What the analysis of one test file found: its smells, or why it could not parse."""

    model_config = ConfigDict(frozen=True)

    smells: list[Smell] = []
    error: CollectionError | None = None


class SmellStore(Protocol):
    """Where known smells are kept (`ResultCache`, `.audit/cache.sqlite`)."""

    def get_smells(self, key: str) -> str | None: ...

    def put_smells(self, key: str, value: str) -> None: ...

    def keep_smells(self, keys: set[str]) -> None: ...


@functools.cache
def _rules_digest() -> str:
    """The analysis's own code: a rule changed between two runs of the same version must
    not bring back what the old one found."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def salt(packages: Iterable[str], assertion_helpers: Iterable[str]) -> str:
    settings = [__version__, _rules_digest(), sorted(packages), sorted(assertion_helpers)]
    return hashlib.sha256(json.dumps(settings).encode()).hexdigest()


def key(salt: str, relative: str, raw: bytes, conftests: Iterable[bytes]) -> str:
    """`file:digest`: the store drops a file's older versions by the part before the
    last colon."""
    digest = hashlib.sha256(salt.encode())
    for part in (raw, *conftests):
        digest.update(hashlib.sha256(part).digest())
    return f"{relative}:{digest.hexdigest()}"


def known(store: SmellStore | None, key: str) -> FileSmells | None:
    value = None if store is None else store.get_smells(key)
    if value is None:
        return None
    try:
        return FileSmells.model_validate_json(value)
    except ValidationError:
        return None  # written by another version of the report model: a miss
