"""Run mutants on a Dask distributed cluster (`--executor dask --scheduler tcp://...`).

The parent packs the project into an archive that every worker unpacks once into its own
folder; a worker keeps one runner pool (one runner, forking per mutant, exactly as on
this machine) per project and runs batches of jobs on it. Results stream back as batches
finish and go into the same cache. A worker lost mid-batch is Dask's to handle: the
scheduler runs the batch again elsewhere, and a mutant's result is taken once, by id.

Workers need the same Python environment as the parent (the project's dependencies and
audit installed); nothing else is shared."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hashlib
import io
import itertools
import os
import re
import shutil
import socket
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.containment import wire
from auditor.containment.scratch import held_folder
from auditor.errors import DistributedError
from auditor.mutation.executor import PoolSettings
from auditor.mutation.protocol import BaselineFacts, Job, JobResult

_BATCH_SIZE = 16
_COPY_KIND = "audit-dask-"
_SKIPPED = {".audit", ".git", "__pycache__", ".tox", ".venv", "venv", ".mypy_cache"}


def pack_project(root: Path) -> bytes:
    """The project tree as a gzip-ed tar, without caches, VCS data or virtualenvs."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if any(part in _SKIPPED for part in relative.parts) or not path.is_file():
                continue
            archive.add(path, arcname=relative.as_posix(), recursive=False)
    return buffer.getvalue()


# worker side -----------------------------------------------------------------


@dataclass
class _ProjectCopy:
    """A worker's copy of one audit's project, and the runner pool over it."""

    home: Path
    hold: int
    """The descriptor holding `home` (see `held_folder`)."""
    root: Path
    """The unpacked project's realpath."""
    pool: Any


_WORKER_POOLS: dict[str, _ProjectCopy] = {}
"""By project digest."""
_WORKER_LOCK = threading.Lock()


def _close_worker_pools() -> None:
    with _WORKER_LOCK:
        for digest in list(_WORKER_POOLS):
            _release(digest)


def _release(digest: str) -> None:
    copy = _WORKER_POOLS.pop(digest)
    copy.pool.close()
    shutil.rmtree(copy.home, ignore_errors=True)
    os.close(copy.hold)


def release_project(digest: str) -> None:
    """Run on every worker when an audit ends: a long-lived cluster keeps no runners
    and no copy of the project from runs that are over."""
    with _WORKER_LOCK:
        if digest in _WORKER_POOLS:
            _release(digest)


def _worker_pool(digest: str, archive: bytes, settings: PoolSettings) -> tuple[Path, Any]:
    """This worker's copy of the project (its realpath) and runner, made on first use."""
    from auditor.mutation.executor import RunnerPool

    if digest not in _WORKER_POOLS:
        if not _WORKER_POOLS:
            atexit.register(_close_worker_pools)
        # A killed worker leaves its copy behind: the next worker to make one removes it.
        home, hold = held_folder(Path(tempfile.gettempdir()), _COPY_KIND, f"{digest[:8]}-")
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as unpacked:
            unpacked.extractall(home / "project", filter="data")
        (home / "work").mkdir()
        root = Path(os.path.realpath(home / "project"))
        pool = RunnerPool(root=root, settings=settings, workdir=home / "work", jobs=1)
        _WORKER_POOLS[digest] = _ProjectCopy(home, hold, root, pool)
    copy = _WORKER_POOLS[digest]
    return copy.root, copy.pool


def run_batch(
    digest: str, archive: bytes, settings: PoolSettings, jobs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A Dask task: run jobs (files relative to the project) in this worker's copy."""
    with _WORKER_LOCK:
        root, pool = _worker_pool(digest, archive, settings)
        results: list[JobResult] = []
        batch = [Job(**{**job, "file": str(root / job["file"])}) for job in jobs]
        pool.run(batch, results.append)
        return [dataclasses.asdict(result) for result in results]


# parent side -----------------------------------------------------------------


def check_scheduler(address: str, timeout: float = 5.0) -> None:
    """Fail before the baseline, not after it, when the scheduler cannot be reached."""
    match = re.fullmatch(r"(?:tcp://)?\[?([^\]]+?)\]?:(\d+)", address.strip())
    if not match:
        raise DistributedError(f"--scheduler expects tcp://HOST:PORT; got '{address}'")
    try:
        socket.create_connection((match[1], int(match[2])), timeout=timeout).close()
    except OSError as exc:
        message = f"cannot reach the Dask scheduler {address}: {exc.strerror or exc}"
        raise DistributedError(message) from None


@dataclass
class DaskPool:
    """The RunnerPool interface (`run`, `close`) over a Dask cluster."""

    scheduler: str
    root: Path
    settings: PoolSettings
    batch_size: int = _BATCH_SIZE
    client: Any = None
    archive: Any = None
    digest: str = ""
    batches: itertools.count = field(default_factory=itertools.count)

    def measured(self, facts: BaselineFacts) -> None:
        """The baseline's facts, which every batch's runners get."""
        self.settings = dataclasses.replace(self.settings, facts=facts)

    def connect(self) -> int:
        """Connect, ship the project to every worker; the cluster's worker threads."""
        try:
            from distributed import Client
        except ImportError:
            raise DistributedError(
                "--executor dask needs dask.distributed: pip install 'audit-tests[dask]'"
            ) from None
        try:
            self.client = Client(self.scheduler, timeout=10)
        except (OSError, TimeoutError) as exc:
            message = f"cannot reach the Dask scheduler {self.scheduler}: {exc}"
            raise DistributedError(message) from None
        packed = pack_project(self.root)
        self.digest = hashlib.sha256(packed).hexdigest()
        self.archive = self.client.scatter(packed, broadcast=True, hash=False)
        return max(1, sum(self.client.nthreads().values()))

    def run(
        self,
        jobs: Iterable[Job],
        on_result: Callable[[JobResult], None],
        stop_at: float | None = None,
    ) -> None:
        from distributed import TimeoutError as BatchTimeout
        from distributed import as_completed

        root = os.path.realpath(self.root)
        futures = {}
        jobs_iter = iter(jobs)
        while batch := list(itertools.islice(jobs_iter, self.batch_size)):
            payload = [
                {**dataclasses.asdict(job), "file": os.path.relpath(job.file, root)}
                for job in batch
            ]
            future = self.client.submit(
                run_batch,
                self.digest,
                self.archive,
                self.settings,
                payload,
                key=f"audit-batch-{self.digest[:12]}-{next(self.batches)}",
                pure=False,
                retries=2,
            )
            futures[future] = batch
        seen: set[str] = set()
        wait = None if stop_at is None else max(0.0, stop_at - time.monotonic())
        try:
            for future in as_completed(futures, timeout=wait):
                self._take(future, futures[future], seen, on_result)
        except BatchTimeout:  # the time budget: batches still out give no results
            self.client.cancel(list(futures))

    @staticmethod
    def _take(
        future: Any, batch: list[Job], seen: set[str], on_result: Callable[[JobResult], None]
    ) -> None:
        """One finished batch's results; a mutant's result is taken once, by id."""
        try:
            results = [wire.check(JobResult, item) for item in future.result()]
        except Exception as exc:  # the batch failed on every worker it was tried on
            detail = f"the Dask batch failed: {type(exc).__name__}: {exc}"[:300]
            results = [JobResult(id=job.id, status="RuntimeError", detail=detail) for job in batch]
        for result in results:
            if result.id not in seen:
                seen.add(result.id)
                on_result(result)

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):  # a worker gone already has nothing left
                self.client.run(release_project, self.digest)
            self.client.close()
            self.client = None
