"""Calls stuck inside C, where a call's SIGALRM cannot stop them: a forked probe is ended
by the call's CPU timer and runs again with that call counted as hung, not made."""

from __future__ import annotations

import collections
import gc
import json
import subprocess
import sys
import time

import pytest

from auditor.probes.child import _run_forked
from auditor.probes.hangs import CallTimeout, alarm, guarded_call

STUCK = 10**18
"""deque(range(STUCK), maxlen=1) walks the range inside C for years."""


def _calls(lengths: list[int], timeout: float = 0.05) -> list[bool]:
    """In the fork: which calls were made, each draining range(length) inside C."""
    made = []
    for length in lengths:
        with guarded_call(timeout) as make:
            if make:
                collections.deque(range(length), maxlen=1)
            made.append(make)
    return made


def test_a_call_stuck_inside_c_is_counted_hung_and_the_calls_after_it_are_made():
    text, why = _run_forked(lambda: _calls([10, STUCK, 10]), budget=10)
    assert why == ""
    assert json.loads(text or "") == [True, False, True]


def _items_drained_in(seconds: float) -> int:
    """How many items deque(range(n), maxlen=1) drains in about `seconds` of CPU here:
    machines differ by 3x, so a fixed count is either under the timeout or near the cap."""
    started = time.process_time()
    collections.deque(range(10**6), maxlen=1)
    return int(10**6 * seconds / max(time.process_time() - started, 1e-4))


def test_a_call_that_ends_inside_c_soon_after_its_timeout_is_made():
    # About 0.15 s inside C: past a 50 ms timeout, well within the CPU time a call gets
    # before it counts as stuck (SHORTEST_CPU_SECONDS); waiting is cheaper than a rerun.
    length = _items_drained_in(0.15)
    text, _ = _run_forked(lambda: _calls([length]), budget=10)
    assert json.loads(text or "") == [True]


def test_work_with_too_many_calls_stuck_inside_c_ends_with_the_reason():
    text, why = _run_forked(lambda: _calls([STUCK] * 6), budget=30)
    assert text is None
    assert why == "5 calls hung inside C code, where no timeout stops them"


def test_outside_a_forked_probe_every_call_is_made_without_a_cpu_timer():
    assert _calls([10, 10]) == [True, True]


def test_an_alarm_is_not_lost_in_a_garbage_collector_callback():
    # What a gc callback raises is ignored: one that runs most of the time (Hypothesis
    # keeps one; code that allocates fast collects all the time) would swallow the alarm.
    def busy(phase: str, info: dict) -> None:
        if phase == "start":
            until = time.perf_counter() + 0.002
            while time.perf_counter() < until:
                pass

    gc.collect()  # earlier tests' garbage: a finalizer it runs may swallow the alarm too
    gc.callbacks.append(busy)
    try:
        with pytest.raises(CallTimeout), alarm(0.05):
            until = time.monotonic() + 3
            while time.monotonic() < until:
                [[] for _ in range(1000)]
    finally:
        gc.callbacks.remove(busy)


KEPT_HANDLERS = """
import os, signal, time
from auditor.probes.hangs import CallTimeout, alarm, keep_alarm_handlers

keep_alarm_handlers()
for cpu in (True, False):
    try:
        with alarm(0.05, cpu=cpu):
            until = time.monotonic() + 3
            while time.monotonic() < until:
                pass
        print("not stopped")
    except CallTimeout:
        print("stopped")
os.kill(os.getpid(), signal.SIGALRM)  # a timer that fired as its block ended
time.sleep(0.01)
print("alive")
"""


def test_with_the_handlers_kept_an_alarm_stops_a_loop_and_a_late_one_stops_nothing():
    # The probe process keeps the handlers installed (installing and restoring them
    # took most of each call's cost); an alarm still stops its block, and one that
    # fires once its block has ended is ignored rather than raised elsewhere.
    result = subprocess.run(
        [sys.executable, "-c", KEPT_HANDLERS], capture_output=True, text=True, timeout=30
    )
    assert result.stdout.split() == ["stopped", "stopped", "alive"], result.stderr
