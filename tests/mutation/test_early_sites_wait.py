"""What the mutation stage's wait for the early helper says about the type check."""

from __future__ import annotations

import subprocess
import sys
import threading

from auditor.mutation.early_sites import SITES_FOUND, EarlySites


def _helper(script: str, type_checks: bool = True) -> EarlySites:
    """A stand-in for the helper: a real process that says what the helper says."""
    process = subprocess.Popen(
        [sys.executable, "-c", f"import sys, time\nsites = {SITES_FOUND!r}\n{script}"],
        stdout=subprocess.PIPE,
    )
    return EarlySites(process, type_checks)


def test_the_wait_after_the_sites_are_found_is_the_type_check_s():
    helper = _helper(
        "sys.stdout.buffer.write(sites); sys.stdout.flush()\ntime.sleep(0.5)  # the type check\n"
    )
    assert helper.wait() >= 0.5
    assert helper.process is not None and helper.process.returncode == 0


def test_a_helper_that_prints_more_than_a_pipe_holds_still_ends():
    helper = _helper(
        "sys.stdout.buffer.write(sites)\n"
        "sys.stdout.write('x' * (1 << 20))  # a checker that talks\n"
    )
    waiting = threading.Thread(target=helper.wait, daemon=True)
    waiting.start()
    waiting.join(timeout=60)  # an undrained pipe would block both ends for good
    assert not waiting.is_alive()
    assert helper.process is not None and helper.process.returncode == 0


def test_a_helper_that_ends_without_finding_the_sites_is_waited_for():
    helper = _helper("sys.exit(1)")
    helper.wait()
    assert helper.process is not None and helper.process.returncode == 1


def test_a_helper_that_runs_no_type_check_charges_it_nothing():
    helper = _helper(
        "sys.stdout.buffer.write(sites); sys.stdout.flush()\ntime.sleep(0.2)\n",
        type_checks=False,
    )
    assert helper.wait() == 0.0
    assert helper.process is not None and helper.process.returncode == 0


def test_no_helper_means_no_wait():
    assert EarlySites().wait() == 0.0
