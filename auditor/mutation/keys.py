"""Cache keys: what a cached result depends on, hashed. A key changes when audit's
version, the mutation operators' code or (for compiled code) the Python running the
audit does, so a cached site, compilation or verdict is never one another setup made."""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import mutators
from auditor import __version__
from mutators.base import Operator


def digest(*parts: object) -> str:
    """A stable hash of JSON-able parts (dict keys sorted)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@functools.cache
def _mutators_digest() -> str:
    """The operators' own code: an operator changed between two runs of the same version
    must not bring back the sites the old one found."""
    digest = hashlib.sha256()
    for path in sorted(Path(mutators.__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def sites_salt(operators: Sequence[Operator]) -> str:
    return digest(__version__, [op.name for op in operators], _mutators_digest())


def sites_key(salt: str, source: str) -> str:
    """The cache key of a source's mutation sites."""
    return digest(salt, source)


def swaps_key(salt: str, filename: str) -> str:
    """The cache key of a file's swap-path compilations (`salt`: `swaps_salt`), kept per
    function within (`compiler.Swaps`)."""
    return digest(salt, filename)


def swaps_salt(sites_salt: str) -> str:
    """What compiled code depends on besides the sites: bytecode and marshal change with
    the Python running the audit."""
    return digest(sites_salt, sys.version, sys.implementation.name)
