"""The argument recorder of the baseline, called in this process on a small source tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from auditor.baseline import observe
from auditor.baseline.observe import CallRecorder
from auditor.baseline.protocol import Observed


@pytest.fixture
def sources(tmp_path: Path, monkeypatch):
    package = tmp_path / "src" / "pricing"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text("def double(value):\n    return 2 * value\n")
    (package / "test_core.py").write_text("def helper(value):\n    return value\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    yield package
    for name in ("pricing", "pricing.core", "pricing.test_core"):
        sys.modules.pop(name, None)


def _record(recorder: CallRecorder, calls) -> list[Observed]:
    recorder.start()
    try:
        calls()
    finally:
        recorder.close()
    return recorder.observations()


def test_calls_into_the_sources_are_recorded_with_their_arguments(sources):
    from pricing.core import double

    observed = _record(CallRecorder([str(sources)]), lambda: [double(3), double(3), double(4)])
    assert observed == [
        Observed(
            file=str((sources / "core.py").resolve()),
            qualname="double",
            calls=[{"value": ["3", "int"]}, {"value": ["4", "int"]}],
        )
    ]


def test_a_path_in_the_test_process_folder_is_recorded_the_same_every_run(sources, tmp_path):
    """pytest's `tmp_path` lies under that folder, whose name changes from run to run."""
    from pricing.core import double

    scratch = tmp_path / "audit-run-x1y2" / "attempt-0"
    path = str(scratch / "tmp" / "basetemp" / "test_save0" / "prices.db")
    observed = _record(CallRecorder([str(sources)], scratch=str(scratch)), lambda: double(path))
    expected = repr(f"{observe.SCRATCH}/tmp/basetemp/test_save0/prices.db")
    assert observed[0].calls == [{"value": [expected, "str"]}]


def test_test_code_among_the_sources_is_not_recorded(sources):
    from pricing.test_core import helper

    recorder = CallRecorder([str(sources)], omit=["*/test_*.py"])
    assert _record(recorder, lambda: helper(1)) == []


def test_code_in_a_folder_named_like_a_test_is_still_recorded(tmp_path, monkeypatch):
    package = tmp_path / "test_projects" / "src" / "shipping"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "rates.py").write_text("def rate(weight):\n    return weight\n")
    monkeypatch.syspath_prepend(str(package.parent))
    monkeypatch.delitem(sys.modules, "shipping", raising=False)
    from shipping.rates import rate

    try:
        recorder = CallRecorder([str(package)], omit=["*/test_*.py", "*/conftest.py"])
        observed = _record(recorder, lambda: rate(2))
    finally:
        sys.modules.pop("shipping.rates", None)
        sys.modules.pop("shipping", None)
    assert [entry.qualname for entry in observed] == ["rate"]


def test_a_test_that_patches_os_path_sees_only_its_own_calls(sources):
    from unittest import mock

    from pricing.core import double

    recorder = CallRecorder([str(sources)])
    with mock.patch("os.path.realpath") as realpath, mock.patch("os.path.join") as join:
        recorder.start()
        double(1)
        recorder.close()
    assert (realpath.call_count, join.call_count) == (0, 0)
    assert [entry.qualname for entry in recorder.observations()] == ["double"]


def test_the_profile_hook_stops_recording_after_its_budget_of_calls(sources, monkeypatch):
    from pricing.core import double

    monkeypatch.setattr(observe, "free_monitoring_tool", lambda: None)
    monkeypatch.setattr(observe, "MAX_PROFILED_CALLS", 6)
    recorder = CallRecorder([str(sources)])
    observed = _record(recorder, lambda: [double(n) for n in range(10)])
    assert 0 < len(observed[0].calls) < 10
    assert sys.getprofile() is None


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12+")
def test_on_python_3_12_calls_are_recorded_through_sys_monitoring(sources):
    from pricing.core import double

    recorder = CallRecorder([str(sources)])
    tool = recorder._tool
    assert tool is not None
    observed = _record(recorder, lambda: [double(n) for n in range(20)])
    assert sys.getprofile() is None
    assert sys.monitoring.get_tool(tool) is None
    assert [len(entry.calls) for entry in observed] == [observe.MAX_CALLS]


class _Costly:
    """An argument whose repr the test counts: describing a call builds it."""

    def __init__(self) -> None:
        self.reprs = 0

    def __repr__(self) -> str:
        self.reprs += 1
        return "Costly()"

    def __rmul__(self, other: object) -> _Costly:
        return self


def test_a_phase_describes_a_bounded_number_of_one_function_s_calls(sources):
    from pricing.core import double

    costly = _Costly()
    _record(CallRecorder([str(sources)]), lambda: [double(costly) for _ in range(1000)])
    assert 0 < costly.reprs <= observe.MAX_DESCRIBED


def test_the_next_phase_describes_the_function_s_calls_again(sources):
    from pricing.core import double

    recorder = CallRecorder([str(sources)])
    recorder.start()
    for _ in range(observe.MAX_DESCRIBED):
        double(1)
    recorder.stop()
    recorder.start()
    double(2)
    recorder.close()
    assert recorder.observations()[0].calls == [{"value": ["1", "int"]}, {"value": ["2", "int"]}]


def test_a_source_that_is_one_module_file_is_recorded(sources):
    from pricing.core import double

    observed = _record(CallRecorder([str(sources / "core.py")]), lambda: double(3))
    assert [(entry.qualname, entry.calls) for entry in observed] == [
        ("double", [{"value": ["3", "int"]}])
    ]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12+")
def test_on_python_3_12_a_function_with_all_its_calls_kept_is_called_back_no_more(sources):
    from pricing.core import double

    recorder = CallRecorder([str(sources)])
    record = recorder._record
    recorded = []

    def counted(frame, filename):
        recorded.append(filename)
        return record(frame, filename)

    recorder._record = counted  # type: ignore[method-assign]
    _record(recorder, lambda: [double(n) for n in range(1000)])
    assert len(recorded) == observe.MAX_CALLS


def test_the_process_environment_passed_to_the_code_is_not_written_out(sources):
    # A report is published (a pull request's comment, an HTML artifact): the
    # environment's API keys and tokens must not travel in it.
    from pricing.core import double

    def doubled_environment() -> None:
        with pytest.raises(TypeError):
            double(os.environ)

    observed = _record(CallRecorder([str(sources)]), doubled_environment)
    (call,) = observed[0].calls
    assert call["value"] == ["<unrepresentable>", "os._Environ"]


def test_a_repr_of_the_code_under_test_is_not_run_to_describe_an_argument(sources):
    (sources / "clock.py").write_text(
        "class Clock:\n"
        "    def __init__(self):\n"
        "        self.now = 0\n"
        "    def __repr__(self):\n"
        "        self.now += 1  # a repr that ticks, as a cache's that expires entries\n"
        "        return f'Clock({self.now})'\n"
        "    def read(self):\n"
        "        return self.now\n"
    )
    from pricing.clock import Clock

    clock = Clock()
    observed = _record(CallRecorder([str(sources)]), lambda: [clock.read(), clock.read()])
    assert clock.now == 0
    read = next(entry for entry in observed if entry.qualname == "Clock.read")
    assert read.calls == [
        {"self": ["__audit_new__('pricing.clock:Clock', {'now': 0})", "pricing.clock.Clock"]}
    ]


class _Counted:
    described = 0

    def __repr__(self) -> str:
        _Counted.described += 1
        return "Counted()"


def test_an_argument_too_long_to_keep_is_marked_without_describing_all_of_it(sources):
    from pricing.core import double

    many = [_Counted() for _ in range(10_000)]
    observed = _record(CallRecorder([str(sources)]), lambda: double(many))
    assert observed[0].calls == [{"value": ["<too long>", "list"]}]
    assert _Counted.described < 1_000
