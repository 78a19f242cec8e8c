"""The whole project's last known verdicts, kept per file between runs.

A `--diff` run plans only the files its change reaches, and reports the whole project's
scores over every verdict known (`mutation.project_known`) without planning the rest.
Each run that plans whole files (all but a shard, a sample, or a re-measure of chosen
mutants) records, per file it planned, what its mutants' verdicts are now: this run's,
the cache's that still hold, and the statuses planning decides (NoCoverage, Ignored,
CompileError). A file planned by no run since keeps its last planning's verdicts: they
are the last known ones, which the next run that plans the file brings up to date.
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
    planned: dict[str, list[Verdict]],
    files: Iterable[str],
) -> None:
    """`planned`: per file planned this run, its mutants' known verdicts (maybe none);
    `files`: every mutated file of the project, so those gone lose their rows."""
    cache.put_known_verdicts(
        settings,
        {file: json.dumps([_row(v) for v in verdicts]) for file, verdicts in planned.items()},
        set(files),
    )


def read(cache: ResultCache, settings: str) -> list[Verdict]:
    verdicts = []
    for value in cache.known_verdicts(settings).values():
        try:
            rows = [Verdict(*row) for row in json.loads(value)]
        except (ValueError, TypeError):
            continue  # a row another version wrote: its verdicts are unknown
        verdicts.extend(v for v in rows if v.status in STATUSES and isinstance(v.by_check, bool))
    return verdicts


def _row(verdict: Verdict) -> list:
    return [verdict.status, verdict.kill_kind, verdict.by_check]
