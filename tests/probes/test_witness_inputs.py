"""A function's witness inputs are generated once: the grandchild that tries them hands
them back, so neither the file's child nor a later group of the process generates them
again; and Hypothesis draws no constant from audit's own code."""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import strategies as st

from auditor.containment import wire
from auditor.mutation.mutant import MutantSources
from auditor.mutation.protocol import Job
from auditor.probes import witness as witness_search
from auditor.probes.calls import NotProbeable, Subject
from auditor.probes.protocol import ProbeSpec, SurvivorSpec, input_counts
from auditor.probes.witness import (
    Draft,
    Inputs,
    _restored,
    _tried_inputs,
    examples_for,
    trials_for,
    witnesses_for_group,
)
from auditor.report import Witness
from tests.conftest import probe_spec, subject_of

SOURCE = """
import time
from typing import Any

class Opaque:
    def __init__(self, handle):
        self.handle = handle

def describe(value: Any, extra: dict[str, Any]) -> str:
    return repr(value) + repr(extra)

def unwrap(box: Opaque) -> object:
    return box.handle

def scale(values: list[int], factor: int) -> list[int]:
    return [value * factor for value in values]

def holds(lock: Any) -> bool:
    return lock.locked()

def settle(n: int) -> int:
    while n > 100:
        pass
    return n

def settle_holding(n: int, lock: Any) -> int:
    return settle(n)

def crawl(n: int) -> int:
    if n > 100:
        time.sleep(0.03)
    return n

def refuse(values: list[int]) -> list[int]:
    if not values:
        raise ValueError(
            "no values "
            "given"
        )
    return values

def reserve(n: int) -> list[int]:
    if n > 100:
        raise MemoryError  # what an allocation past the memory limit raises
    return [n]
"""


def _spec(examples: int = 40, call_timeout: float = 0.5) -> ProbeSpec:
    return probe_spec(max_examples=examples, witness_examples=examples, call_timeout=call_timeout)


def test_the_inputs_handed_back_are_the_ones_generation_gives(module):
    subject = subject_of(module, "scale")
    handed_back = _restored(
        wire.decode(Inputs, wire.encode(_tried_inputs(subject, _spec(), 40))).pickled, subject
    )
    assert handed_back is not None
    assert handed_back == examples_for(subject, 40)
    assert len(handed_back) > 1


def test_trials_on_handed_back_inputs_equal_trials_on_fresh_ones(module):
    subject = subject_of(module, "scale")
    handed_back = _restored(_tried_inputs(subject, _spec(), 40).pickled, subject)
    again = trials_for(subject, _spec(), handed_back)
    fresh = trials_for(subject, _spec(), examples_for(subject, _spec().witness_examples))
    assert [(t.example, t.outcome.value) for t in again] == [
        (t.example, t.outcome.value) for t in fresh
    ]


def test_inputs_on_which_the_original_hangs_are_no_trials(module):
    # Every later input is still tried: a witness needs an input a test can call.
    subject = subject_of(module, "settle")
    given = [{"n": n} for n in (5, 500, 7, 900, 3, 1000, 9)]
    trials = trials_for(subject, _spec(call_timeout=0.05), given)
    assert [trial.example["n"] for trial in trials] == [5, 7, 3, 9]


def test_inputs_on_which_the_original_runs_out_of_memory_are_no_trials(module):
    subject = subject_of(module, "reserve")
    given = [{"n": n} for n in (5, 500, 7)]
    assert [trial.example["n"] for trial in trials_for(subject, _spec(), given)] == [5, 7]


def test_inputs_on_which_the_original_is_slow_are_no_trials(module):
    # 30 ms against a call timeout of 100 ms: a mutant's hang could be load.
    subject = subject_of(module, "crawl")
    given = [{"n": n} for n in (5, 500, 7)]
    trials = trials_for(subject, _spec(call_timeout=0.1), given)
    assert [trial.example["n"] for trial in trials] == [5, 7]


def test_unpicklable_inputs_generated_again_leave_out_those_the_original_hangs_on(
    module, monkeypatch
):
    subject = subject_of(module, "settle_holding")
    numbers = st.builds(lambda n: {"n": n, "lock": threading.Lock()}, st.integers())
    monkeypatch.setattr(subject, "strategy", numbers)
    inputs = _tried_inputs(subject, _spec(call_timeout=0.02), 40)
    generated = examples_for(subject, 40)
    again = inputs.examples(subject)
    assert [e["n"] for e in again] == [e["n"] for e in generated if e["n"] <= 100]
    assert len(again) < len(generated)


def test_the_inputs_handed_back_leave_out_those_the_original_hangs_on(module):
    subject = subject_of(module, "settle")
    handed_back = _restored(_tried_inputs(subject, _spec(call_timeout=0.02), 40).pickled, subject)
    generated = examples_for(subject, 40)
    assert handed_back == [example for example in generated if example["n"] <= 100]
    assert len(handed_back) < len(generated)


PLAIN_DATA = (type(None), bool, int, float, str, bytes, list, dict)


def test_a_parameter_typed_any_is_probed_with_plain_data(module):
    # Hypothesis refuses to build `Any`: every draw was rejected, and the function
    # passed for probed on no input at all.
    subject = subject_of(module, "describe")
    examples = examples_for(subject, 40)
    assert len(examples) == 40
    assert {type(example["value"]) for example in examples} <= set(PLAIN_DATA)
    assert {type(key) for example in examples for key in example["extra"]} <= {str}


def test_a_type_hypothesis_cannot_build_and_no_test_passed_is_not_probeable(module):
    with pytest.raises(NotProbeable, match="no way to generate box"):
        subject_of(module, "unwrap")


def test_a_function_on_which_nothing_could_be_generated_is_not_generated_again(module, monkeypatch):
    subject = subject_of(module, "scale")
    draws = []
    monkeypatch.setattr(subject, "strategy", st.integers().filter(lambda n: draws.append(n)))
    inputs = _tried_inputs(subject, _spec(5), 5)
    drawn = len(draws)
    assert drawn > 0
    assert (inputs.examples(subject), len(draws)) == ([], drawn)


def test_an_input_that_cannot_be_pickled_is_drawn_again_on_its_own(module, monkeypatch):
    # A lock in every third input: those come back drawn from their choices, one draw
    # each, the others unpickled; all 30 as generation gives them.
    subject = subject_of(module, "holds")
    draws = []

    def made(n: int) -> dict:
        draws.append(n)
        return {"lock": threading.Lock() if n % 3 == 0 else n}

    monkeypatch.setattr(subject, "strategy", st.builds(made, st.integers()))
    inputs = wire.decode(Inputs, wire.encode(_tried_inputs(subject, _spec(30), 30)))
    draws.clear()
    again = inputs.examples(subject)
    locks = [example for example in again if not isinstance(example["lock"], int)]
    assert len(draws) == len(locks) == 10
    assert [repr(example["lock"])[:12] for example in again] == [
        repr(example["lock"])[:12] for example in examples_for(subject, 30)
    ]


def test_inputs_an_earlier_group_generated_are_not_generated_again(module):
    subject = subject_of(module, "scale")
    key = subject.spec.key
    job = Job(id="m", path="swap", file=subject.spec.path, module_name="", tests=[], timeout=1.0)
    # A stale digest: the search stops before running the mutant, after the inputs.
    survivor = SurvivorSpec(job=replace(job, source_digest="stale"), description="", targets=[key])
    generations = []

    def run_forked(work, budget):
        generations.append(work)
        return wire.encode(work()), ""

    first = witnesses_for_group([survivor], {key: subject}, _spec(), {}, run_forked, {})
    assert (len(generations), list(first.inputs)) == (1, [key])
    second = witnesses_for_group([survivor], {key: subject}, _spec(), {}, run_forked, first.inputs)
    assert (len(generations), second.inputs) == (1, {})


def _stale_survivor(subject: Subject, targets: list[str]) -> SurvivorSpec:
    """A swap-path survivor of `subject`'s file with a stale digest: its search stops
    before running the mutant, after the inputs."""
    job = Job(id="m", path="swap", file=subject.spec.path, module_name="", tests=[], timeout=1.0)
    return SurvivorSpec(job=replace(job, source_digest="stale"), description="", targets=targets)


def _generating(work, budget):
    return wire.encode(work()), ""


def test_a_survivor_searched_through_two_functions_generates_half_the_inputs_for_each(module):
    # Its search takes the two functions' inputs in turn, `witness_examples` in all.
    subjects = {s.spec.key: s for s in (subject_of(module, "scale"), subject_of(module, "refuse"))}
    survivor = _stale_survivor(subjects[next(iter(subjects))], list(subjects))
    batch = witnesses_for_group([survivor], subjects, _spec(40), {}, _generating, {})
    assert {key: inputs.count for key, inputs in batch.inputs.items()} == dict.fromkeys(
        subjects, 20
    )


def test_a_group_that_needs_another_number_of_inputs_generates_them_again(module):
    subjects = {s.spec.key: s for s in (subject_of(module, "scale"), subject_of(module, "refuse"))}
    scale = next(iter(subjects))
    through_both = _stale_survivor(subjects[scale], list(subjects))
    first = witnesses_for_group([through_both], subjects, _spec(40), {}, _generating, {})
    direct = _stale_survivor(subjects[scale], [scale])
    second = witnesses_for_group([direct], subjects, _spec(40), {}, _generating, first.inputs)
    assert {key: inputs.count for key, inputs in second.inputs.items()} == {scale: 40}


def test_a_function_searched_alone_and_with_others_has_its_inputs_generated_once(module):
    subjects = {s.spec.key: s for s in (subject_of(module, "scale"), subject_of(module, "refuse"))}
    scale, refuse = subjects
    direct, through_both = input_counts(
        [
            _stale_survivor(subjects[scale], [scale]),
            _stale_survivor(subjects[scale], [scale, refuse]),
        ],
        40,
    )
    assert through_both.inputs == {scale: 40, refuse: 20}
    generations = []

    def run_forked(work, budget):
        generations.append(work)
        return wire.encode(work()), ""

    first = witnesses_for_group([through_both], subjects, _spec(40), {}, run_forked, {})
    witnesses_for_group([direct], subjects, _spec(40), {}, run_forked, first.inputs)
    assert len(generations) == 2


def test_a_function_whose_inputs_could_not_be_tried_is_not_tried_again(module):
    subject = subject_of(module, "scale")
    key = subject.spec.key
    job = Job(id="m", path="swap", file=subject.spec.path, module_name="", tests=[], timeout=1.0)
    survivor = SurvivorSpec(job=job, description="", targets=[key])
    tries = []

    def run_forked(work, budget):
        tries.append(work)
        return None, "time budget of 10s exceeded"

    first = witnesses_for_group([survivor], {key: subject}, _spec(), {}, run_forked, {})
    assert first.inputs[key].failed == "time budget of 10s exceeded"
    second = witnesses_for_group([survivor], {key: subject}, _spec(), {}, run_forked, first.inputs)
    assert len(tries) == 1
    assert [w.reason for w in second.witnesses] == ["no probeable function reaches it"]


_CONSTANTS = """
import sys
from hypothesis.internal.conjecture import providers
import auditor.cli
from auditor.probes import child
if sys.argv[1] == "hidden":
    child._hide_own_constants()
print("--allow-write" in providers._get_local_constants().strings)
"""


@pytest.mark.parametrize(("mode", "drawn"), [("seen", "True"), ("hidden", "False")])
def test_hypothesis_draws_no_constant_of_audits_own_modules(mode, drawn, tmp_path):
    # Installed from this checkout, audit's modules pass for the user's code.
    result = subprocess.run(
        [sys.executable, "-c", _CONSTANTS, mode], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.stdout.strip() == drawn, result.stderr


_COLLECTED = """
import sys
from hypothesis.internal.conjecture import providers
from auditor.probes import child
import shapes
child._warm_hypothesis()
read = []
providers.constants_from_module = lambda module: read.append(module.__name__)
providers._get_local_constants()  # what a forked probe's first draw asks for
print(read, "side-of-7919" in providers._local_constants.strings)
"""


def test_the_probe_process_collects_the_codes_constants_before_it_forks(tmp_path):
    (tmp_path / "shapes.py").write_text('def side(x):\n    return x == "side-of-7919"\n')
    result = subprocess.run(
        [sys.executable, "-c", _COLLECTED], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.stdout.strip() == "[] True", result.stderr


def test_dict_views_drawn_for_an_iterable_are_handed_back_pickled():
    drawn = {"values": {"a": 1, "b": 2}.values(), "keys": {3: 0}.keys(), "items": {4: 5}.items()}
    example = pickle.loads(witness_search._pickled(drawn))
    assert {name: (type(view), list(view)) for name, view in example.items()} == {
        name: (type(view), list(view)) for name, view in drawn.items()
    }


def test_memoryviews_drawn_for_a_sized_argument_are_handed_back_pickled():
    drawn = {
        "bytes": memoryview(b"ab"),
        "writable": memoryview(bytearray(b"cd")),
        "words": memoryview(bytearray(8)).cast("I"),
    }
    example = pickle.loads(witness_search._pickled(drawn))
    described = {
        name: (view.tolist(), view.readonly, view.format, view.shape)
        for name, view in example.items()
    }
    assert described == {
        "bytes": ([97, 98], True, "B", (2,)),
        "writable": ([99, 100], False, "B", (2,)),
        "words": ([0, 0], False, "I", (2,)),
    }


def _line_of(module: tuple[str, Path], text: str) -> int:
    lines = module[1].read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def _search_once(module, qualname: str, first_line: int) -> tuple[Witness, int]:
    """The witness of a swap-path survivor of `qualname` changing `first_line`, and how
    many pieces of work were forked. Its digest is stale: a search that goes as far as
    applying the mutant stops there, "not probeable"."""
    subject = subject_of(module, qualname)
    key = subject.spec.key
    job = Job(id="m", path="swap", file=subject.spec.path, module_name="", tests=[], timeout=1.0)
    survivor = SurvivorSpec(
        job=replace(job, source_digest="stale"),
        description="",
        targets=[key],
        first_line=first_line,
        last_line=first_line,
        direct=True,
    )
    forked = []

    def run_forked(work, budget):
        forked.append(work)
        return wire.encode(work()), ""

    batch = witnesses_for_group([survivor], {key: subject}, _spec(), {}, run_forked, {})
    (witness,) = batch.witnesses
    return witness, len(forked)


def test_a_function_body_mutant_on_lines_no_input_ran_is_not_replayed(module):
    # Its code is the original's up to lines no input reaches: it cannot differ.
    witness, forked = _search_once(module, "scale", _line_of(module, "time.sleep(0.03)"))
    assert (witness.status, forked) == ("not_shown", 1)  # the inputs' generation only
    assert witness.reason == "none of 40 inputs ran the mutated line"


def test_a_function_body_mutant_is_replayed_on_the_inputs_that_run_its_lines_only(
    module, monkeypatch
):
    # On the others its code does what the original's does: replaying them on the
    # mutant, and tracing them in the infection check, told nothing.
    replayed = []

    def on_mutant(survivor, mutant, alive, trials, spec):
        replayed.extend(trial.example["n"] for trial in trials)
        return Draft(examples=len(trials))

    monkeypatch.setattr(witness_search, "_on_mutant", on_mutant)
    monkeypatch.setattr(witness_search, "_infection_check", lambda *args: (0, 0))
    monkeypatch.setattr(MutantSources, "prepare", lambda sources, job: None)
    _search_once(module, "crawl", _line_of(module, "time.sleep(0.03)"))
    assert replayed
    assert all(n > 100 for n in replayed)


def test_a_function_body_mutant_on_lines_an_input_ran_goes_on_to_the_mutant(module):
    witness, _ = _search_once(module, "scale", _line_of(module, "return [value * factor"))
    assert witness.status == "not probeable"
    assert "changed on disk" in witness.reason


def test_a_line_without_code_of_its_own_is_reached_when_its_statement_runs(module):
    # "given" is folded into the constant of the line before: no trace sees its line.
    witness, _ = _search_once(module, "refuse", _line_of(module, '"given"'))
    assert witness.status == "not probeable"
    assert "changed on disk" in witness.reason
