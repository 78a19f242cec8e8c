"""The whole project's last known verdicts, kept per file between runs.

A `--diff` run plans only the functions its change reaches, and reports the whole
project's scores over every verdict known (`mutation.project_known`) without planning
the rest. Each run but a shard, a sample, or a re-measure of chosen mutants records, per
mutant it planned, what its verdict is now: this run's, the cache's that still holds,
or the status planning decides (NoCoverage, Ignored, CompileError). A mutant no run has
judged since (not planned, out of a diff's scope) keeps its last verdict: the last known
one, which the next run that judges it brings up to date; one gone from its file loses
it.
Rows are per settings (operators, import-time mutants, timeouts, the test paths, the
audit version): a run with other settings neither reads nor replaces them, and the
rows of the four latest settings are kept."""

from __future__ import annotations

import json
from collections.abc import Iterable

from auditor.mutation.cache import ResultCache
from auditor.mutation.keys import digest
from auditor.mutation.scoring import STATUSES, Verdict


def settings_key(*parts: object) -> str:
    """Of everything besides the code and tests that decides which mutants a file has
    and what their verdicts mean."""
    return digest(*map(repr, parts))


def record(
    cache: ResultCache,
    settings: str,
    planned: dict[str, dict[str, Verdict | None]],
    files: Iterable[str],
    partly: dict[str, set[str]] | None = None,
) -> None:
    """`planned`: per file planned this run, its mutants' verdicts by id (None for one
    this run did not judge: out of a diff's scope, or left when the budget ran out);
    `files`: every mutated file of the project, so those gone lose their rows; `partly`:
    per file planned only in part, the ids of all its mutants. A mutant of the file now
    that this run did not judge keeps its earlier verdict."""
    partly = partly or {}
    unjudged = any(None in verdicts.values() for verdicts in planned.values())
    earlier = cache.known_verdicts(settings) if partly or unjudged else {}
    rows = {}
    for file, verdicts in planned.items():
        kept = _rows(earlier.get(file))
        now = partly.get(file, verdicts.keys())
        row = {m: kept[m] for m in now if verdicts.get(m) is None and m in kept}
        row |= {m: _row(v) for m, v in verdicts.items() if v is not None}
        rows[file] = json.dumps(row, sort_keys=True)
    cache.put_known_verdicts(settings, rows, set(files))


def read(cache: ResultCache, settings: str) -> list[Verdict]:
    verdicts = []
    for value in cache.known_verdicts(settings).values():
        try:
            rows = [Verdict(*row) for row in _rows(value).values()]
        except TypeError:
            continue  # a row another version wrote: its verdicts are unknown
        verdicts.extend(v for v in rows if v.status in STATUSES and isinstance(v.by_check, bool))
    return verdicts


def _rows(value: str | None) -> dict[str, list]:
    """A file's rows by mutant id; none from a value in another shape."""
    try:
        rows = json.loads(value) if value else {}
    except ValueError:
        return {}
    return rows if isinstance(rows, dict) else {}


def _row(verdict: Verdict) -> list:
    return [verdict.status, verdict.kill_kind, verdict.by_check]
