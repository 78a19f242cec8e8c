"""Results cache: one sqlite row per mutant, keyed by content, written as results come;
per source file its mutation sites and their swap-path code, so a rerun neither parses
nor compiles a file that did not change; and the probes' results (`probes.cache`).

The key covers the mutated function's code, the mutation, the covering tests' files,
conftest files and the config, never paths or times, so `.audit/` can move between
machines. Each row carries a checksum of its value: a corrupted row is a miss, never a
wrong verdict."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.containment import wire
from auditor.mutation.compiler import Swap
from auditor.mutation.protocol import JobResult
from auditor.mutation.ran_code import Code
from mutators.sites import Site

if TYPE_CHECKING:
    from auditor.context import RunContext

_TABLES = (
    "results",
    "earlier",
    "test_sets",
    "sites",
    "swaps",
    "probes",
    "type_checks",
    "smells",
    "baselines",
    "known_verdicts",
)
_KEPT_SETTINGS = 4
"""Sets of settings whose last known verdicts are kept (`mutation.known`), the latest
first: two test folders audited in turn each keep theirs."""
_KEPT_BASELINES = 4
"""Baselines kept, one per set of settings, the latest first (each a few MB for a suite
of a thousand tests)."""
_BUSY = 30.0
"""Seconds a write waits for another audit of the project to finish its own."""
_LOCK_PROBE_MS = 5000
"""How long opening the cache waits for the write lock before reading it only: a write
holds it for milliseconds, a loaded machine can stretch that to seconds."""
_SCHEMA = """
create table if not exists {table} (
    key text primary key,
    value text not null,
    checksum text not null
)
"""


def _swap(row: list | None) -> Swap | None:
    if row is None:
        return None
    original, mutated, code, line, name = row
    return Swap(original, mutated, base64.b64decode(code, validate=True), (line, name))


def _swap_row(swap: Swap | None) -> list | None:
    if swap is None:
        return None
    return [swap.original, swap.mutated, base64.b64encode(swap.code).decode(), *swap.target]


def _site(row: dict) -> Site:
    return Site(**{**row, "function_classes": tuple(row["function_classes"])})


@dataclass(frozen=True)
class Earlier:
    """A verdict as `earlier` keeps it: the tests it had (function, cases, file digest)
    and the function bodies they ran (`ran_code`)."""

    cases: Sequence[tuple[str, int, str]]
    code: Code
    result: JobResult


def _checksum(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _connect(path: Path, read_only: bool, checked: bool) -> tuple[sqlite3.Connection, str, bool]:
    """The cache at `path`, what was wrong with it, if anything, with what this run
    does instead, and whether it is open for reading only: a cache that cannot be used
    costs time, never a verdict."""
    if read_only:
        return _read_only(path), "", True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection, rebuilt = _open(path, checked)
    except (OSError, sqlite3.OperationalError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return (
            _open(Path(":memory:"))[0],
            f"{path} cannot be used ({reason}): this run's results are not kept",
            False,
        )
    except sqlite3.DatabaseError as exc:
        for stale in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))):
            stale.unlink(missing_ok=True)  # not a sound database: rebuild it
        condition = f"{path} was not a sound database ({exc}): started again, empty"
        return _open(path)[0], condition, False
    if not _can_write(connection):
        connection.close()
        condition = (
            f"{path} is locked by another process: its results are read, this run's are not kept"
        )
        return _read_only(path), condition, True
    if rebuilt:
        condition = f"{path}: tables of another layout emptied ({', '.join(rebuilt)})"
        return connection, condition, False
    return connection, "", False


def _read_only(path: Path) -> sqlite3.Connection:
    try:
        return sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=_BUSY)
    except sqlite3.Error:
        return _open(Path(":memory:"))[0]


def _open(path: Path, checked: bool = False) -> tuple[sqlite3.Connection, list[str]]:
    """The connection, and the tables found in another layout (an older audit's),
    emptied and made again. `checked`: the file's pages were checked at the start of
    the run; checking them again would read the whole file, and a page spoilt since
    then fails the read or write that meets it, which costs a cached result, never a
    verdict."""
    connection = sqlite3.connect(path, timeout=_BUSY)
    rebuilt = []
    try:
        if not checked:
            (status,) = connection.execute("pragma quick_check").fetchone()
            if status != "ok":
                raise sqlite3.DatabaseError(status.splitlines()[0])
        for table in _TABLES:
            columns = [row[1] for row in connection.execute(f"pragma table_info({table})")]
            if columns and columns != ["key", "value", "checksum"]:
                connection.execute(f"drop table {table}")
                rebuilt.append(table)
            connection.execute(_SCHEMA.format(table=table))
        connection.commit()
        connection.execute("pragma journal_mode=wal")
        # A process killed mid-run keeps every committed row; only a power cut may
        # lose the last ones, which costs the next run time, never a wrong verdict.
        connection.execute("pragma synchronous=normal")
    except sqlite3.DatabaseError:
        connection.close()
        raise
    return connection, rebuilt


def _can_write(connection: sqlite3.Connection) -> bool:
    """Whether the write lock comes within `_LOCK_PROBE_MS`. Another audit of the project
    holds it for milliseconds; a process stuck in a transaction holds it for good, and
    every write would wait for it."""
    connection.execute(f"pragma busy_timeout = {_LOCK_PROBE_MS}")
    try:
        connection.execute("begin immediate")
        connection.rollback()
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        connection.execute(f"pragma busy_timeout = {int(_BUSY * 1000)}")


class ResultCache:
    def __init__(self, root: Path, read_only: bool = False, checked: bool = False) -> None:
        """The cache of the project at `root`: `.audit/cache.sqlite`; `condition` says
        what was wrong with it, if anything (`Report.store`). `read_only`: a run that
        found it locked at the start reads it without waiting for the lock again.
        `checked`: the run checked the file's soundness at its start (`store_condition`),
        so this open of it does not again."""
        self._test_sets: dict[str, tuple[list[tuple[str, int, str]], Code] | None] = {}
        self.connection, self.condition, self.read_only = _connect(
            root / ".audit" / "cache.sqlite", read_only, checked
        )

    @classmethod
    def of_run(cls, run: RunContext) -> ResultCache:
        """The cache as a stage of `run` opens it: checked at the run's start, read only
        if it was locked then."""
        return cls(run.project.root, run.cache_read_only, checked=True)

    def _read(self, table: str, key: str) -> str | None:
        try:
            row = self.connection.execute(
                f"select value, checksum from {table} where key = ?", (key,)
            ).fetchone()
        except sqlite3.DatabaseError:
            return None
        if row is None or _checksum(row[0]) != row[1]:
            return None
        return row[0]

    def _write(self, table: str, key: str, value: str) -> None:
        try:
            self.connection.execute(
                f"insert or replace into {table} (key, value, checksum) values (?, ?, ?)",
                (key, value, _checksum(value)),
            )
            self.connection.commit()
        except sqlite3.DatabaseError:
            pass  # a cache that cannot be written only costs the next run time

    def get(self, key: str) -> JobResult | None:
        value = self._read("results", key)
        try:
            return None if value is None else wire.decode(JobResult, value)
        except ValueError:
            return None

    def keep_plans(self, keys: set[str]) -> None:
        """Drop the sites and compilations of every source but these."""
        try:
            for table in ("sites", "swaps"):
                stale = [
                    (key,)
                    for (key,) in self.connection.execute(f"select key from {table}")
                    if key not in keys
                ]
                self.connection.executemany(f"delete from {table} where key = ?", stale)
            self.connection.commit()
        except sqlite3.DatabaseError:
            pass

    def is_empty(self) -> bool:
        try:
            return self.connection.execute("select 1 from results limit 1").fetchone() is None
        except sqlite3.DatabaseError:
            return True

    def put(self, key: str, result: JobResult) -> None:
        self._write("results", key, wire.encode(result))

    def get_earlier(self, stem: str) -> Earlier | None:
        """The latest verdict of a mutant whatever its tests were (`mutation.extension`),
        with those tests and the code they ran."""
        value = self._read("earlier", stem)
        try:
            row = None if value is None else json.loads(value)
            ran = None if row is None else self._test_set(row["tests"])
            if row is None or ran is None:
                return None
            cases, code = ran
            return Earlier(cases, code, wire.decode(JobResult, row["result"]))
        except (ValueError, TypeError, KeyError):
            return None

    def _test_set(self, key: str) -> tuple[list[tuple[str, int, str]], Code] | None:
        """A set of tests and the bodies they ran, read once per run: the mutants of
        one line share it, and the set every test makes is hundreds of KB."""
        if key not in self._test_sets:
            value = self._read("test_sets", key)
            ran = None if value is None else json.loads(value)
            self._test_sets[key] = (
                None
                if ran is None
                else (
                    [(function, n, file) for function, n, file in ran["cases"]],
                    tuple((name, digest) for name, digest in ran["code"]),
                )
            )
        return self._test_sets[key]

    def put_earlier(self, stem: str, tests: str, earlier: Earlier) -> None:
        """`tests`: the digest of the cases and code; mutants of the same tests share
        one row of them."""
        if not self._has("test_sets", tests):
            ran = {"cases": list(earlier.cases), "code": list(earlier.code)}
            self._write("test_sets", tests, json.dumps(ran))
            self._test_sets.pop(tests, None)
        row = {"tests": tests, "result": wire.encode(earlier.result)}
        self._write("earlier", stem, json.dumps(row))

    def keep_test_sets(self) -> None:
        """Drop the sets of tests no verdict names any more (each edit of a test file
        makes new ones)."""
        try:
            self.connection.execute(
                "delete from test_sets where key not in"
                " (select json_extract(value, '$.tests') from earlier)"
            )
            self.connection.commit()
        except sqlite3.DatabaseError:
            pass

    def get_probe(self, key: str) -> str | None:
        """A probe or witness result (`probes.cache`), as the JSON it was put as."""
        return self._read("probes", key)

    def put_probe(self, key: str, value: str) -> None:
        self._write("probes", key, value)

    def get_smells(self, key: str) -> str | None:
        """A test file's smells (`smells.known`), as the JSON they were put as."""
        return self._read("smells", key)

    def put_smells(self, key: str, value: str) -> None:
        self._write("smells", key, value)

    def keep_smells(self, keys: set[str]) -> None:
        """Drop the smells of other versions of these keys' files (`file:digest`): a test
        file edited in the loop leaves no row per edit behind."""
        files = {key.rpartition(":")[0] for key in keys}
        try:
            stale = [
                (key,)
                for (key,) in self.connection.execute("select key from smells")
                if key not in keys and key.rpartition(":")[0] in files
            ]
            self.connection.executemany("delete from smells where key = ?", stale)
            self.connection.commit()
        except sqlite3.DatabaseError:
            pass

    def get_baseline(self, scope: str) -> str | None:
        """The baseline kept for these settings (`baseline.known`), as its JSON."""
        return self._read("baselines", scope)

    def put_baseline(self, scope: str, value: str) -> None:
        self._write("baselines", scope, value)
        try:  # a replaced row is inserted anew: the latest rows have the highest rowids
            self.connection.execute(
                "delete from baselines where rowid not in"
                " (select rowid from baselines order by rowid desc limit ?)",
                (_KEPT_BASELINES,),
            )
            self.connection.commit()
        except sqlite3.DatabaseError:
            pass

    def known_verdicts(self, settings: str) -> dict[str, str]:
        """Each file's last known verdicts under these settings (`mutation.known`), as
        the JSON they were put as."""
        prefix = f"{settings}:"
        try:
            rows = self.connection.execute(
                "select key, value, checksum from known_verdicts where substr(key, 1, ?) = ?",
                (len(prefix), prefix),
            ).fetchall()
        except sqlite3.DatabaseError:
            return {}
        return {
            key[len(prefix) :]: value
            for key, value, checksum in rows
            if _checksum(value) == checksum
        }

    def put_known_verdicts(self, settings: str, by_file: dict[str, str], files: set[str]) -> None:
        """Replace these files' rows; drop those of files not among `files` (the
        project's mutated files now). One transaction: a project has thousands."""
        prefix = f"{settings}:"
        rows = [(prefix + file, value, _checksum(value)) for file, value in by_file.items()]
        try:
            kept = self.connection.execute(
                "select key from known_verdicts where substr(key, 1, ?) = ?",
                (len(prefix), prefix),
            ).fetchall()
            gone = [(key,) for (key,) in kept if key[len(prefix) :] not in files]
            self.connection.executemany(
                "insert or replace into known_verdicts (key, value, checksum) values (?, ?, ?)",
                rows,
            )
            self.connection.executemany("delete from known_verdicts where key = ?", gone)
            # The latest settings' rows only (each audit version makes new settings).
            self.connection.execute(
                "delete from known_verdicts where substr(key, 1, instr(key, ':')) not in"
                " (select substr(key, 1, instr(key, ':')) from known_verdicts"
                "  group by 1 order by max(rowid) desc limit ?)",
                (_KEPT_SETTINGS,),
            )
            self.connection.commit()
        except sqlite3.DatabaseError:
            pass  # a cache that cannot be written only leaves the last known verdicts

    def get_type_checks(self, key: str) -> dict[str, str] | None:
        """A file's type-checked mutants: each one's key and the error rejecting it."""
        value = self._read("type_checks", key)
        try:
            found = None if value is None else json.loads(value)
        except ValueError:
            return None
        return found if isinstance(found, dict) else None

    def put_type_checks(self, key: str, verdicts: dict[str, str]) -> None:
        self._write("type_checks", key, json.dumps(verdicts, sort_keys=True))

    def keep_type_checks(self, prefix: str) -> None:
        """Drop the type checks made of other sources, configurations or checkers."""
        try:
            self.connection.execute(
                "delete from type_checks where substr(key, 1, ?) != ?", (len(prefix), prefix)
            )
            self.connection.commit()
        except sqlite3.DatabaseError:
            pass

    def get_sites(self, key: str) -> list[Site] | None:
        value = self._read("sites", key)
        try:
            rows = None if value is None else json.loads(value)
            return None if rows is None else [_site(row) for row in rows]
        except (ValueError, TypeError):
            return None

    def has_sites(self, key: str) -> bool:
        return self._has("sites", key)

    def _has(self, table: str, key: str) -> bool:
        """Whether a row is there, without reading (and checksumming) its value."""
        try:
            found = self.connection.execute(f"select 1 from {table} where key = ?", (key,))
            return found.fetchone() is not None
        except sqlite3.DatabaseError:
            return False

    def put_sites(self, key: str, sites: list[Site]) -> None:
        self._write("sites", key, json.dumps([dataclasses.asdict(site) for site in sites]))

    def get_swaps(self, key: str) -> dict[str, dict[str, Swap | None]] | None:
        """A file's compilations: per function (`compiler.Swaps`), per site."""
        value = self._read("swaps", key)
        try:
            rows = None if value is None else json.loads(value)
            return (
                None
                if rows is None
                else {
                    function: {local_id: _swap(row) for local_id, row in sites.items()}
                    for function, sites in rows.items()
                }
            )
        except (ValueError, TypeError, AttributeError, binascii.Error):
            return None

    def put_swaps(self, key: str, swaps: dict[str, dict[str, Swap | None]]) -> None:
        rows = {
            function: {local_id: _swap_row(swap) for local_id, swap in sites.items()}
            for function, sites in swaps.items()
        }
        self._write("swaps", key, json.dumps(rows, sort_keys=True))

    def close(self) -> None:
        self.connection.close()


def store_condition(root: Path) -> tuple[str, bool]:
    """What is wrong with the project's cache at the start of a run, and what the run
    does instead (`ResultCache.condition`; empty when it is sound), and whether the run
    may only read it (another process holds its write lock)."""
    cache = ResultCache(root)
    cache.close()
    return cache.condition, cache.read_only
