"""Results cache: one sqlite row per mutant, keyed by content, written as results come.

The key covers the mutated function's code, the mutation, the covering tests' files,
conftest files and the config, never paths or times, so `.audit/` can move between
machines. Each row carries a checksum of its value: a corrupted row is a miss, never a
wrong verdict."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from auditor.engine.protocol import JobResult, read_result, to_json

_SCHEMA = """
create table if not exists results (
    key text primary key,
    value text not null,
    checksum text not null
)
"""


def _checksum(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class ResultCache:
    def __init__(self, root: Path) -> None:
        """The cache of the project at `root`: `.audit/cache.sqlite`."""
        path = root / ".audit" / "cache.sqlite"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.connection = self._open(path)
        except (OSError, sqlite3.OperationalError):
            self.connection = self._open(Path(":memory:"))  # unwritable: no cache this run
        except sqlite3.DatabaseError:
            for stale in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))):
                stale.unlink(missing_ok=True)  # not a sound database: rebuild it
            self.connection = self._open(path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        connection = sqlite3.connect(path, timeout=30)
        try:
            (status,) = connection.execute("pragma quick_check").fetchone()
            if status != "ok":
                raise sqlite3.DatabaseError(status)
            connection.execute(_SCHEMA)
            connection.execute("pragma journal_mode=wal")
            # A process killed mid-run keeps every committed row; only a power cut may
            # lose the last ones, which costs the next run time, never a wrong verdict.
            connection.execute("pragma synchronous=normal")
        except sqlite3.DatabaseError:
            connection.close()
            raise
        return connection

    def get(self, key: str) -> JobResult | None:
        try:
            row = self.connection.execute(
                "select value, checksum from results where key = ?", (key,)
            ).fetchone()
        except sqlite3.DatabaseError:
            return None
        if row is None or _checksum(row[0]) != row[1]:
            return None
        try:
            return read_result(json.loads(row[0]))
        except ValueError:
            return None

    def is_empty(self) -> bool:
        try:
            return self.connection.execute("select 1 from results limit 1").fetchone() is None
        except sqlite3.DatabaseError:
            return True

    def put(self, key: str, result: JobResult) -> None:
        value = to_json(result)
        try:
            self.connection.execute(
                "insert or replace into results (key, value, checksum) values (?, ?, ?)",
                (key, value, _checksum(value)),
            )
            self.connection.commit()
        except sqlite3.DatabaseError:
            pass  # a cache that cannot be written only costs the next run time

    def close(self) -> None:
        self.connection.close()
