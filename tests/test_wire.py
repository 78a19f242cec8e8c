"""What crosses to and from audit's child processes: plain dataclasses as JSON, checked
field by field when a child sends them (`auditor.containment.wire`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from auditor.baseline import protocol as baseline
from auditor.baseline.runner import _read_events
from auditor.containment import wire
from auditor.errors import SuiteUnusableError
from auditor.mutation.protocol import BaselineFacts, Job, JobResult, Ready, RunnerSpec
from auditor.probes.protocol import (
    FunctionResult,
    ProbeResult,
    ProbeSpec,
    ProbeWork,
    SurvivorSpec,
    WitnessResult,
)
from auditor.report import FunctionProbe, ProbeFinding, Witness
from tests.conftest import target_spec

JOB = Job(
    id="pkg/m.py::f::constants.number@2:11#0",
    path="module",
    file="/p/pkg/m.py",
    module_name="pkg.m",
    tests=["tests/test_m.py::test_f"],
    timeout=2.5,
    source_digest="abc",
    patch_start=10,
    patch_end=11,
    replacement="2",
    rerun_lines=[[1, 3]],
    consumers=[["/p/pkg/n.py", "pkg.n", 4, 4]],
)
EVENTS = [
    baseline.Collecting(path="/p/tests/test_m.py"),
    baseline.CollectError(path="/p/tests/test_n.py", message="SyntaxError", line=3),
    baseline.Collected(count=2, resident_mb=40.5),
    baseline.Start(nodeid="tests/test_m.py::test_f"),
    baseline.Result(
        nodeid="tests/test_m.py::test_f",
        file="/p/tests/test_m.py",
        outcome="passed",
        duration=0.01,
        message="",
        blocked=[{"event": "open", "target": "/etc/passwd"}],
        spawns_python=True,
    ),
    baseline.Observed(file="/p/pkg/m.py", qualname="f", calls=[{"n": ("3", "int")}]),
    baseline.Finish(exitstatus=0, peak_mb=51.0),
    baseline.Resume(),
]
PROBE_SPEC = ProbeSpec(
    root="/p",
    source_files=["/p/pkg/m.py"],
    allowed_roots=["/p"],
    guard=True,
    memory_limit_mb=1024,
    log_file="/s/log",
    results_file="/s/results.jsonl",
    max_examples=100,
    witness_examples=300,
    time_budget=10.0,
    call_timeout=1.0,
    expected_exceptions=["ValueError"],
    modules=["pkg.m"],
    searches=True,
)
PROBE_WORK = ProbeWork(
    targets=[target_spec("pkg/m.py::f", "/p/pkg/m.py", "pkg.m")],
    growth_limit_mb=256,
    patterns=[("[a-z]+", 2, False)],
    survivors=[SurvivorSpec(job=JOB, description="1 -> 2", targets=["pkg/m.py::f"])],
    items=[("search", "/p/pkg/m.py::pkg/m.py::f#0"), ("probe", "pkg/m.py::f")],
)
FUNCTION_RESULT = FunctionResult(
    probe=FunctionProbe(file="pkg/m.py", function="f", line=1, status="probed"),
    findings=[
        ProbeFinding(
            kind="unhandled_crash",
            file="pkg/m.py",
            function="f",
            line=2,
            message="ZeroDivisionError",
            input="f(0)",
            observed="raised ZeroDivisionError",
        )
    ],
)


@pytest.mark.parametrize(
    "message",
    [
        JOB,
        JobResult(id="m", status="Killed", killed_by=["t"], kills=[("t", "assertion", 3)]),
        Ready(collected=3),
        RunnerSpec("/p", ["tests"], ["/p/pkg/m.py"], ["/p"], 1024, "/l", "/b", "/s"),
        BaselineFacts(["t"], {"t": 0.5}, [("a+", 0, False)], 128),
        *EVENTS,
        PROBE_SPEC,
        PROBE_WORK,
        FUNCTION_RESULT,
        WitnessResult(witness=Witness(mutant_id="m", status="found", input="f(1)")),
    ],
    ids=lambda message: type(message).__name__,
)
def test_every_message_comes_back_as_it_was_sent(message):
    assert wire.decode(type(message), wire.encode(message)) == message


def test_a_flat_spec_audit_wrote_is_built_as_it_was_sent():
    assert wire.build(Job, wire.encode(JOB)) == JOB


@pytest.mark.parametrize("event", EVENTS, ids=lambda event: type(event).__name__)
def test_an_event_is_told_apart_from_the_others_by_its_kind(event):
    assert wire.decode(baseline.Event, wire.encode(event)) == event


def test_a_probe_result_is_told_apart_by_its_kind():
    assert wire.decode(ProbeResult, wire.encode(FUNCTION_RESULT)) == FUNCTION_RESULT


@pytest.mark.parametrize(
    "text",
    [
        '{"kind": "result", "nodeid": 3}',
        '{"kind": "collected", "count": "many", "resident_mb": 1}',
        '{"kind": "launch_missiles"}',
        "not json",
    ],
)
def test_a_message_that_is_not_one_is_refused(text):
    with pytest.raises(ValueError):
        wire.decode(baseline.Event, text)


def test_a_line_of_the_events_file_that_is_no_event_is_a_one_line_error(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text(wire.encode(EVENTS[0]) + '\n{"kind": "result", "nodeid": 3}\n')
    with pytest.raises(SuiteUnusableError, match="not one of audit's events") as error:
        _read_events(events, 0)
    assert "\n" not in error.value.message


def test_the_baseline_child_and_a_runner_import_no_pydantic():
    modules = "auditor.baseline.child, auditor.baseline.plugin, auditor.mutation.runner"
    check = f"import sys, {modules}; print('pydantic' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr
