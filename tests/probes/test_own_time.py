"""A probe call's time is its own: the CPU it uses and the time it sleeps. Waiting for a
CPU the machine gave to other processes, and the collector's work on garbage others
left, count against no call, so the same inputs are trials and the same calls hang on
an idle machine and a loaded one."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

from auditor.probes.child import _run_forked
from auditor.probes.witness import trials_for
from tests.conftest import probe_spec, subject_of

SOURCE = """
import gc
import time

def burn(n: int) -> int:
    total = 0
    for number in range(n):
        total += number * number
    return n

def collections_during(n: int) -> int:
    before = sum(generation["collections"] for generation in gc.get_stats())
    kept = [[number] for number in range(n)]
    return sum(generation["collections"] for generation in gc.get_stats()) - before

def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds
"""


def test_an_input_the_load_slows_down_is_still_a_trial(module):
    # Beside fifteen busy processes on its CPU, a call takes about sixteen times its CPU
    # time on the clock (past any fixed multiple of its timeout a clock could allow);
    # its CPU time itself grows with the load, by up to half again.
    subject = subject_of(module, "burn")
    given = [{"n": 600_000 + n} for n in range(3)]
    spent = max(_cpu_seconds(lambda: subject.invoke(given[0], 10.0)) for _ in range(3))
    spec = probe_spec(call_timeout=30 * spent)  # a trial's tenth: three times its CPU time
    with _crowded_cpu(busy=15):
        trials = trials_for(subject, spec, given)
    assert [trial.example["n"] for trial in trials] == [600_000, 600_001, 600_002]


def test_in_a_forked_probe_the_load_is_still_not_a_calls_time(module):
    # The fork must read its own thread's waits, not those of the thread it was forked
    # from (whose figures it could still read through an inherited descriptor).
    subject = subject_of(module, "burn")
    given = [{"n": 600_000 + n} for n in range(3)]
    spent = max(_cpu_seconds(lambda: subject.invoke(given[0], 10.0)) for _ in range(3))
    spec = probe_spec(call_timeout=30 * spent)
    with _crowded_cpu(busy=15):
        text, why = _run_forked(
            lambda: [trial.example["n"] for trial in trials_for(subject, spec, given)], 30.0
        )
    assert (json.loads(text or "null"), why) == ([600_000, 600_001, 600_002], "")


def test_no_collection_runs_inside_a_probes_call(module):
    # Ten times the young generation's threshold: the collector would run during it.
    subject = subject_of(module, "collections_during")
    outcome = subject.invoke({"n": 7_000}, 5.0)
    assert (outcome.kind, outcome.value) == ("returned", 0)


def test_a_call_that_sleeps_past_its_timeout_hangs(module):
    subject = subject_of(module, "nap")
    assert subject.invoke({"seconds": 0.15}, 0.05).kind == "hung"
    assert subject.invoke({"seconds": 0.01}, 0.05).kind == "returned"


def _cpu_seconds(call: Callable[[], object]) -> float:
    started = time.process_time()
    call()
    return time.process_time() - started


@contextlib.contextmanager
def _crowded_cpu(busy: int) -> Iterator[None]:
    """This thread and `busy` processes that spin, all on one CPU."""
    kept = os.sched_getaffinity(0)
    cpu = min(kept)
    spin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nprint(flush=True)\nwhile True: pass"
    spinners = [
        subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE) for _ in range(busy)
    ]
    try:
        for spinner in spinners:
            assert spinner.stdout is not None
            spinner.stdout.readline()  # pinned and spinning
        os.sched_setaffinity(0, {cpu})
        yield
    finally:
        os.sched_setaffinity(0, kept)
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
