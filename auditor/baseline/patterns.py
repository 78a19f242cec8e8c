"""The regular expressions the suite compiled, kept so that a process that forks a child
per mutant compiles them once, before it forks.

Code that compiles a pattern on first use (`re.sub(PATTERN, ...)` in a function, a
memoized validator such as marshmallow's `URL`) compiles it again in every child forked
from a process that never ran it. `re` keeps what it compiled in a cache keyed by the
pattern, its type and the flags it was given; the baseline's test process reads those
keys when the suite ends, and the runner compiles each before it forks, so a child's
compile is a lookup. Compiling is pure: what a test sees does not change."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

Pattern = tuple[str, int, bool]
"""(pattern, flags as given, whether it is bytes: then its text is the bytes as latin-1,
which maps each byte to one character and back)."""

MAX_PATTERNS = 512
"""What `re` keeps (`re._MAXCACHE` from 3.7 to 3.13); compiling more would push out
the first ones."""

MAX_PATTERN_CHARS = 64 * 1024
"""A longer pattern is left out: the suite's code is untrusted, and its patterns are
kept with the baseline."""


def compiled_patterns() -> list[Pattern]:
    """The patterns `re` holds compiled in this process, sorted."""
    cache: dict[Any, Any] = getattr(re, "_cache", {})
    found = set()
    for key in list(cache):
        if not (isinstance(key, tuple) and len(key) == 3):
            continue  # a cache of another shape: nothing is read from it
        kind, pattern, flags = key
        if kind not in (str, bytes) or not isinstance(pattern, kind):
            continue
        if len(pattern) <= MAX_PATTERN_CHARS:
            text = pattern if kind is str else pattern.decode("latin-1")
            found.add((text, int(flags), kind is bytes))
    return sorted(found)


def merged(*lists: Iterable[Pattern]) -> list[Pattern]:
    """The distinct patterns of all `lists`, sorted, `MAX_PATTERNS` at most."""
    distinct = {(text, flags, binary) for patterns in lists for text, flags, binary in patterns}
    return sorted(distinct)[:MAX_PATTERNS]


def compile_all(patterns: Iterable[Pattern]) -> None:
    """Compile each pattern as the suite did, filling `re`'s cache. One that no longer
    compiles (another Python) is left out: its first use raises as it would have."""
    for text, flags, binary in patterns:
        try:
            re.compile(text.encode("latin-1") if binary else text, flags)
        except (re.error, TypeError, ValueError, OverflowError, RecursionError):
            continue
