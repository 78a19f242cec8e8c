"""A probe process's work items: each makes the functions it calls in a fork of its own,
so what making one does (an instance built) reaches no other item, and a probe that
fails is still reported with what it was probed with."""

from __future__ import annotations

import importlib
import io
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from auditor.probes import child
from auditor.probes.protocol import ProbeWork, TargetSpec
from tests.conftest import probe_spec, source_module, target_spec

SOURCE = """
import time

MADE = []


class Registered:
    def __init__(self, name=None):
        MADE.append(name)

    def check(self, value: str) -> bool:
        return bool(value)


def slow(n: int) -> int:
    time.sleep(0.05)
    return n
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The memory limits are a probe process's, set from its spec: here, out of the way.
    monkeypatch.setattr(child, "_memory_limit_mb", 1 << 20)
    monkeypatch.setattr(child, "_growth_limit_mb", 4096)
    name, path = source_module(SOURCE, tmp_path, monkeypatch)
    yield name, path
    sys.modules.pop(name, None)


def _target(module: tuple[str, Path], qualname: str) -> TargetSpec:
    name, path = module
    return target_spec(f"{path.name}::{qualname}", str(path.resolve()), name)


def _probed(module: tuple[str, Path], target: TargetSpec, time_budget: float) -> dict:
    """The result of the probe item of `target`, run as a probe process runs it."""
    path = module[1]
    spec = probe_spec(
        root=str(path.parent),
        source_files=[str(path.resolve())],
        max_examples=20,
        time_budget=time_budget,
        modules=[module[0]],
    )
    results = io.StringIO()
    work = child._Work(spec, results)
    work.prepare(ProbeWork(targets=[target], survivors=[], items=[], growth_limit_mb=4096))
    work.probe(target.key)
    (result,) = [json.loads(line) for line in results.getvalue().splitlines()]
    return result["probe"]


def test_an_item_makes_its_functions_in_its_own_fork(module):
    # Building `Registered(name='x')` has a side effect: made in the probe process, it
    # would reach every later item, and which items a process gets varies between runs.
    calls = {"Registered.__init__": [{"name": ("'x'", "str")}]}
    target = replace(_target(module, "Registered.check"), kind="method", constructions=calls)
    probe = _probed(module, target, time_budget=30.0)
    assert probe["status"] == "probed"
    assert "1 built as the tests built them" in probe["params"][0]["detail"]
    assert importlib.import_module(module[0]).MADE == []


def test_a_probe_that_runs_out_of_time_is_reported_with_what_it_was_probed_with(module):
    probe = _probed(module, _target(module, "slow"), time_budget=0.3)
    assert (probe["status"], probe["reason"]) == ("failed", "time budget of 0.3s exceeded")
    assert probe["params"] == [{"name": "n", "source": "type hint", "detail": "int"}]
