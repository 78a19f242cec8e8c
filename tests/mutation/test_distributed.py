"""`--executor dask`: mutants run on a real Dask cluster (a LocalCluster on 127.0.0.1 with
two worker processes), including a worker killed mid-run."""

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import distributed
import pytest

from tests.conftest import copy_fixture, run_audit


@pytest.fixture(scope="module")
def cluster():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    yield cluster
    cluster.close()


def statuses(report: dict) -> dict[str, str]:
    return {m["id"]: m["status"] for m in report["mutation"]["mutants"]}


def _project_copies() -> set[str]:
    return {path.name for path in Path(tempfile.gettempdir()).glob("audit-dask-*")}


@pytest.fixture(scope="module")
def dask_report(cluster, tmp_path_factory) -> dict:
    """One audit of shop's shallow suite on the cluster, run to the end; with the copies
    of projects workers held before it (`copies_before`)."""
    copies_before = _project_copies()
    root = tmp_path_factory.mktemp("dask") / "shop"
    copy_fixture("shop", root)
    out = root.parent / "dask.json"
    result = run_audit(
        "tests_shallow", "-q", "--no-probes", "--json", str(out),
        "--executor", "dask", "--scheduler", cluster.scheduler_address,
        cwd=root,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return {**json.loads(out.read_text()), "copies_before": copies_before}


@pytest.mark.slow
def test_a_dask_run_gives_the_local_verdicts(dask_report, fixture_runs):
    assert statuses(dask_report) == statuses(fixture_runs["shop", "tests_shallow"][1])
    assert dask_report["mutation"]["jobs"] == 2


def _audit_leftovers() -> dict:
    """On a worker: the projects it holds runners for, and audit processes it started."""
    from auditor.mutation.distributed import _WORKER_POOLS

    me = str(os.getpid())
    runners = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = stat.read_text().rsplit(")", 1)[1].split()[1]
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if parent == me and b"auditor" in command:
            runners.append(stat.parent.name)
    return {"projects": sorted(_WORKER_POOLS), "runners": runners}


@pytest.mark.slow
def test_a_finished_dask_run_leaves_no_runner_or_project_copy_on_the_workers(dask_report, cluster):
    client = distributed.Client(cluster.scheduler_address)
    try:
        leftovers = client.run(_audit_leftovers)
    finally:
        client.close()
    assert len(leftovers) == 2
    assert all(left == {"projects": [], "runners": []} for left in leftovers.values())
    assert _project_copies() <= dask_report["copies_before"]  # killed workers' may go


def test_a_copy_left_by_a_killed_worker_goes_when_a_worker_next_makes_one(tmp_path, monkeypatch):
    from auditor.mutation import distributed as worker
    from auditor.mutation.executor import PoolSettings
    from auditor.mutation.protocol import BaselineFacts

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    left = tmp_path / "audit-dask-0badc0de-x"  # its worker was killed: nobody holds the lock
    (left / "project").mkdir(parents=True)
    (left / ".lock").touch()
    project = tmp_path / "shop"
    project.mkdir()
    (project / "pricing.py").write_text("FEE = 1\n")
    digest = "f" * 64
    settings = PoolSettings([], [], [], [], memory_limit_mb=0, facts=BaselineFacts())
    root, _ = worker._worker_pool(digest, worker.pack_project(project), settings)
    try:
        assert not left.exists()
        assert (root / "pricing.py").read_text() == "FEE = 1\n"
    finally:
        worker.release_project(digest)
    assert _project_copies() == set()


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_and_doubles_no_mutant(
    cluster, fixture_runs, project_copy, tmp_path, fault
):
    root = project_copy("shop")
    out = tmp_path / "dask.json"
    command = [
        sys.executable, "-m", "auditor", "tests_shallow", "-q", "--no-probes", "--json", str(out),
        "--executor", "dask", "--scheduler", cluster.scheduler_address,
    ]  # fmt: skip
    client = distributed.Client(cluster.scheduler_address)
    audit = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        busy = []
        while not busy and time.monotonic() < deadline:
            busy = [worker for worker, keys in client.processing().items() if keys]
            time.sleep(0.05)
        assert busy, "no batch ever reached a worker"
        time.sleep(1.0)  # the worker is inside a batch: its runner has started mutants
        pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
        assert audit.poll() is None, "the run finished before the worker could be killed"
        os.kill(pid, signal.SIGKILL)
        _, stderr = audit.communicate(timeout=240)
    finally:
        audit.kill()
        client.close()
    assert audit.returncode == 0, stderr.decode()[-2000:]
    mutants = json.loads(out.read_text())["mutation"]["mutants"]
    assert len({m["id"] for m in mutants}) == len(mutants)
    assert {m["id"]: m["status"] for m in mutants} == statuses(
        fixture_runs["shop", "tests_shallow"][1]
    )
    fault(
        "processes",
        "SIGKILL of a Dask worker inside a batch",
        did="ran the batch again on another worker; every verdict equals a local run's",
        exit_code=audit.returncode,
        saw="(the run's summary, as without the fault)",
        lost="nothing",
    )


@pytest.mark.slow
def test_an_unreachable_scheduler_is_a_one_line_error(project_copy):
    root = project_copy("shop")
    result = run_audit(
        "tests_shallow", "-q", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9",
        cwd=root,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith("audit: mutate: cannot reach the Dask scheduler")
    assert len(result.stderr.strip().splitlines()) == 1
