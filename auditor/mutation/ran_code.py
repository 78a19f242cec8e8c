"""The code a verdict depends on besides its mutant: the function bodies its tests ran,
and every module's code outside function bodies.

A mutant of `f` is judged by tests that also run `g` of another module: an edit of `g`
can change the verdict (it may now hide what `f` returns), so the bodies a set of tests
ran are part of the key of every verdict those tests give, as `f`'s own code is. A body
counts as run by a test that ran its first statement; it is named by its function
(`file::C.m`), so lines added above it do not make it another body.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterable
from pathlib import Path

from auditor.discovery.bodies import function_bodies
from auditor.mutation.coverage_index import LinesToTests

Code = tuple[tuple[str, str], ...]
"""Each body a set of tests ran (`file::qualname`) and the digest of its text."""


class RanCode:
    """Read once per run: the bodies of the measured files and the tests that ran them."""

    def __init__(
        self, root: Path, indexes: Iterable[LinesToTests], imported: Iterable[str]
    ) -> None:
        """`indexes`: the tests that ran each line; `imported`: the files whose code ran
        at import (a module of constants no test calls into counts too)."""
        indexes = list(indexes)
        self.bodies: dict[str, tuple[str, frozenset[str]]] = {}
        """Each body: its text's digest and the tests that ran it."""
        outside = hashlib.sha256()
        for file in sorted({*imported, *(file for index in indexes for file in index)}):
            bodies, outside_digest = code_of(text_of(root / file))
            for name, first, _, digest in bodies:
                ran_by = frozenset().union(
                    *(index[file].get(first, ()) for index in indexes if file in index)
                )
                self.bodies[f"{file}::{name}"] = (digest, ran_by)
            outside.update(f"{file}\n{outside_digest}\n".encode())
        self.outside = outside.hexdigest()
        """Every measured file's code outside function bodies, digested."""
        self._code: dict[frozenset[str], Code] = {}

    def running(self, bodies: Iterable[str]) -> frozenset[str]:
        """The tests that ran any of these bodies."""
        return frozenset().union(*(self.bodies[name][1] for name in bodies if name in self.bodies))

    def of(self, tests: Iterable[str]) -> Code:
        """The bodies these tests ran, with their digests, sorted."""
        key = frozenset(tests)
        if key not in self._code:
            self._code[key] = tuple(
                (name, digest)
                for name, (digest, ran_by) in sorted(self.bodies.items())
                if not ran_by.isdisjoint(key)
            )
        return self._code[key]


def edited(earlier: Code, now: Code) -> list[str]:
    """The bodies that earlier tests ran and these still run that are another text now
    (one that only removed tests ran does not count)."""
    current = dict(now)
    return [name for name, digest in earlier if name in current and current[name] != digest]


@functools.lru_cache(maxsize=2048)
def code_of(text: str) -> tuple[tuple[tuple[str, int, int, str], ...], str]:
    """A module's function bodies (name, first and last line, digest of its text), and
    the digest of its code outside them. Kept by content: the warm agent session plans
    again with one file changed."""
    lines = text.splitlines()
    try:
        bodies = function_bodies(ast.parse("\n".join(lines)))
    except (SyntaxError, ValueError):
        bodies = []
    inside: set[int] = set()
    found = []
    for body in bodies:
        inside.update(range(body.first, body.last + 1))
        text_of_body = "\n".join(lines[body.first - 1 : body.last])
        found.append((body.name, body.first, body.last, _digest(text_of_body)))
    kept = (line for number, line in enumerate(lines, 1) if number not in inside)
    return tuple(found), _digest("\n".join(kept))


def text_of(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
