"""Witnesses for surviving mutants, a group at a time (`search_items`), inside a forked
child.

The inputs are generated once per function and the original's outcome on each is
computed once; each survivor then runs in a throwaway grandchild that applies the mutant
from the job the engine ran it with, as the engine's child did (`PreparedMutant`),
replays the same inputs, and keeps the simplest one on which a test could tell the two
apart. The suggested test is checked both ways: it fails in the grandchild (mutant) and
passes back here (original)."""

from __future__ import annotations

import base64
import copyreg
import functools
import hashlib
import io
import itertools
import pickle
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from auditor.containment import wire
from auditor.mutation.mutant import FunctionIndex, MutantSources, PreparedMutant
from auditor.mutation.swap import SwapError
from auditor.probes.calls import Example, Subject
from auditor.probes.draws import Choices, drawn, drawn_with_choices, redrawn
from auditor.probes.hangs import CallTimeout, alarm, guarded_call
from auditor.probes.outcomes import Outcome, equal, same
from auditor.probes.own_time import Budget
from auditor.probes.protocol import ProbeSpec, Reads, SurvivorSpec, share_of
from auditor.probes.reach import FileLines, States, statement_lines
from auditor.probes.receiver_type import decides_by_receiver_type
from auditor.probes.suggest import NoLiteral, name_for, render, run_test
from auditor.report import Witness

ENOUGH = 20
"""Differing inputs to choose the simplest from: the replay stops there."""


@dataclass
class Trial:
    subject: Subject
    example: Example
    outcome: Outcome
    ran: FileLines | None = None
    """The lines of the survivors' file the original ran on this input (a search's)."""


@dataclass
class Draft:
    """What the mutant's grandchild sends back."""

    index: int = -1
    """The trial that tells them apart; -1 when none does."""
    original: str = ""
    mutant: str = ""
    test: str = ""
    reason: str = ""
    examples: int = 0


@dataclass
class Inputs:
    """What a function's trial run in a grandchild sends back: which of the inputs it
    generated the original behaves on as a test can check (`trials_for`), and those
    inputs, each pickled before any call (generating is the costly part), or where
    pickle refuses one (a lambda Hypothesis draws for a `Callable`, a lock), the choices
    that make it again."""

    usable: list[int] = field(default_factory=list)
    """Their places in generation order: derandomized, generation gives them again."""
    count: int = 0
    """How many were generated: what the group needed of this function. A group that
    needs another number generates them again."""
    pickled: str = ""
    failed: str = ""
    """Why the trial run ended without them (its time budget, a crash): it would again,
    so later groups of the process leave the function out rather than try it again."""

    def examples(self, subject: Subject) -> list[Example]:
        if not self.usable:
            return []
        restored = _restored(self.pickled, subject)
        if restored is not None:
            return restored
        generated = examples_for(subject, self.count)
        return [generated[place] for place in self.usable if place < len(generated)]


@dataclass
class WitnessBatch:
    witnesses: list[Witness]
    inputs: dict[str, Inputs] = field(default_factory=dict)
    """The inputs this group tried, by function: the probe process keeps them for the
    next group that searches through the same function."""


def _tried_inputs(subject: Subject, spec: ProbeSpec, count: int) -> Inputs:
    """Runs in a grandchild: generate `count` inputs and call the function on them."""
    made = drawn_with_choices(subject.strategy, count)
    examples = [example for example, _ in made]
    stored = [_stored(example, choices) for example, choices in made]
    kept = {id(trial.example) for trial in trials_for(subject, spec, examples)}
    usable = [place for place, example in enumerate(examples) if id(example) in kept]
    pickled = pickle.dumps([stored[place] for place in usable])
    return Inputs(usable=usable, count=count, pickled=base64.b64encode(pickled).decode())


def _stored(example: Example, choices: Choices | None) -> tuple[str, Any]:
    """An input as a later group gets it back: pickled, else the choices that made it
    (drawing it again from them is one draw, where generating the function's inputs
    again draws them all)."""
    try:
        return ("input", _pickled(example))
    except Exception:  # an input holding a lambda, a lock, a generator...
        return ("choices", choices)


_VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items"}


def _pickled(example: Example) -> bytes:
    """`pickle.dumps`, and what Hypothesis draws for `Iterable` and `Collection`
    parameters that pickle has no reducer for: dict views (as views of a fresh dict) and
    memoryviews. Without them, a function that draws one would have its inputs generated
    again by its survivors' search."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer)
    pickler.dispatch_table = {
        **copyreg.dispatch_table,
        **dict.fromkeys(_VIEWS, _reduce_view),
        memoryview: _reduce_memoryview,
    }
    pickler.dump(example)
    return buffer.getvalue()


def _reduce_memoryview(
    view: memoryview,
) -> tuple[Callable[..., memoryview], tuple[bytes, bool, str, tuple[int, ...]]]:
    """Hypothesis draws `binary().map(memoryview)` for `Sized` and `Iterable` (an input
    in eight on marshmallow's `Length.__call__`), which pickle refuses."""
    return _memoryview, (view.tobytes(), view.readonly, view.format, view.shape or ())


def _memoryview(data: bytes, readonly: bool, form: str, shape: tuple[int, ...]) -> memoryview:
    view = memoryview(data if readonly else bytearray(data))
    return view if (form, shape) == ("B", (len(data),)) else view.cast(form, shape)


def _reduce_view(view: Any) -> tuple[Callable[[str, list[Any]], Any], tuple[str, list[Any]]]:
    return _view, (_VIEWS[type(view)], list(view))


def _view(kind: str, items: list[Any]) -> Any:
    if kind == "keys":
        return dict.fromkeys(items).keys()
    if kind == "values":
        return dict(enumerate(items)).values()
    return dict(items).items()


def _restored(pickled: str, subject: Subject) -> list[Example] | None:
    """The inputs `_stored` kept, each unpickled or drawn again from its choices; None
    when one cannot be."""
    if not pickled:
        return None
    try:
        entries = pickle.loads(base64.b64decode(pickled))
        return [_restored_one(kind, data, subject) for kind, data in entries]
    except Exception:
        return None


def _restored_one(kind: str, data: Any, subject: Subject) -> Example:
    if kind == "input":
        return pickle.loads(data)
    made = redrawn(subject.strategy, data) if data is not None else None
    if made is None:
        raise ValueError("no choices, or choices that make no input")
    return made[0]


def examples_for(subject: Subject, count: int) -> list[Example]:
    """Up to `count` distinct inputs of the function, the simplest first."""
    return drawn(subject.strategy, count)


def trials_for(
    subject: Subject, spec: ProbeSpec, examples: list[Example], watched: str = ""
) -> list[Trial]:
    """The inputs and the original's outcome on each, for those on which the original
    behaves as a test can check, and quickly: it returns or raises within a tenth of the
    call timeout (so that a mutant's hang takes ten times the original's time, not load,
    and every replay stays cheap), and not for running out of memory (whether memory or
    time runs out first is the machine's doing, not the code's: a mutant's other one is
    no witness). A function that runs slow gets fewer (half its time budget at most).

    The first call, discarded, pays what a fresh process pays once (a lazy import, a
    regex compiled on first use): counted against an input, it left out marshmallow's
    `AwareDateTime()` in some runs and not in others. With a file `watched`, each trial
    keeps the lines of it that its call ran."""
    trials: list[Trial] = []
    budget = _half_budget(spec)
    if examples:
        subject.invoke(examples[0], spec.call_timeout)
    for example in examples:
        if budget.spent():
            break
        subject.hangs = 0  # an input that hangs is left out, not every one after it
        ran = FileLines(watched) if watched else None
        outcome = subject.invoke(example, spec.call_timeout / 10, watch=ran)
        if not outcome.exhausted:
            trials.append(Trial(subject, example, outcome, ran))
    subject.hangs = 0
    return trials


def _half_budget(spec: ProbeSpec) -> Budget:
    """Half the work's time budget, in the calls' own time, so that as many inputs are
    tried whatever the load; the clock stops it short of the whole budget, after which
    the fork is killed with every result."""
    return Budget(spec.time_budget / 2, backstop=0.9 * spec.time_budget)


def _on_mutant(
    survivor: SurvivorSpec,
    mutant: PreparedMutant,
    alive: FunctionIndex,
    trials: list[Trial],
    spec: ProbeSpec,
) -> Draft:
    """Runs in the grandchild: replay the trials on the mutant."""
    mutant.apply(alive)
    outcomes: list[Outcome] = []
    differing: list[int] = []
    budget = _half_budget(spec)
    for index, trial in enumerate(trials):
        outcomes.append(trial.subject.invoke(trial.example, spec.call_timeout))
        if not same(trial.outcome, outcomes[index]):
            differing.append(index)
        if len(differing) >= ENOUGH or budget.spent():
            break
    if not differing:
        return Draft(examples=len(outcomes))
    # The simplest input whose test also fails here; a few tries at most.
    ordered = sorted(
        differing, key=lambda i: (len(trials[i].subject.call_text(trials[i].example)), i)
    )
    reason = ""
    for index in ordered[:5]:
        trial, mutant = trials[index], outcomes[index]
        state = _state_differences(trial.outcome, mutant)
        test, reason = _render(trial, state, survivor)
        if test and _passes(test, _name(trial, survivor), spec):
            test, reason = "", "no ready test: the rendered test does not fail on the mutant"
        if test:
            break
    else:
        index = ordered[0]
        trial, mutant, test = trials[index], outcomes[index], ""
        state = _state_differences(trial.outcome, mutant)
    original, changed = trial.outcome.describe(state), mutant.describe(state)
    if original == changed:  # a repr that hides the attributes that differ
        original, changed = trial.outcome.describe(state, True), mutant.describe(state, True)
    return Draft(
        index=index,
        original=original,
        mutant=changed,
        test=test,
        reason=reason,
        examples=len(outcomes),
    )


@dataclass
class Infections:
    """What the infection check in a grandchild sends back."""

    inputs: int = 0
    """Inputs on which the mutant left another state where it is than the original."""
    traced: int = 0
    """Inputs traced on both versions (the time budget may stop it earlier)."""


def _states(trial: Trial, survivor: SurvivorSpec, spec: ProbeSpec) -> str | None:
    """A digest of the states at the mutated lines on one input; None when the call did
    not return (a change made before an exception that both raise is no evidence of
    equivalence)."""
    states = States(survivor.path, survivor.first_line, survivor.last_line)
    outcome = trial.subject.invoke(trial.example, spec.call_timeout, watch=states)
    if outcome.kind != "returned":
        return None
    return hashlib.blake2b(repr(states.records).encode(), digest_size=16).hexdigest()


@dataclass
class Traced:
    """What tracing the original in a grandchild sends back."""

    states: list[str | None] = field(default_factory=list)
    """Per input, in order, the original's states at the mutated lines (`_states`); the
    time budget may stop it before the last."""


def _original_states(
    survivor: SurvivorSpec, trials: list[Trial], spec: ProbeSpec, seconds: float
) -> Traced:
    """Runs in a grandchild: the original's states at the survivor's lines on each input,
    for `seconds` at most."""
    budget = Budget(seconds, backstop=1.8 * seconds)  # its fork is killed at twice
    traced = Traced()
    for trial in trials:
        if budget.spent():
            break
        traced.states.append(_states(trial, survivor, spec))
    return traced


class OriginalStates:
    """The original's states at a survivor's lines, traced once per group of survivors
    for the same lines and inputs: several mutants of one line share them, and tracing
    the original was half of each infection check."""

    def __init__(
        self,
        spec: ProbeSpec,
        run_forked: Callable[[Callable[[], object], float], tuple[str | None, str]],
    ) -> None:
        self._spec, self._run_forked = spec, run_forked
        self._traced: dict[tuple[int, int, tuple[int, ...]], list[str | None] | None] = {}

    def of(
        self, survivor: SurvivorSpec, trials: list[Trial], seconds: float
    ) -> list[str | None] | None:
        """The states on `trials`, traced within `seconds` in a grandchild when they have
        not been; None when the grandchild ended without them."""
        key = (survivor.first_line, survivor.last_line, tuple(map(id, trials)))
        if key not in self._traced:
            text, _ = self._run_forked(
                lambda: _original_states(survivor, trials, self._spec, seconds), 2 * seconds
            )
            self._traced[key] = wire.decode(Traced, text).states if text else None
        return self._traced[key]


@dataclass(frozen=True)
class _Infecting:
    """The mutant's side of the infection check, called in a grandchild of its own (the
    mutant cannot be taken back)."""

    mutant: PreparedMutant
    alive: FunctionIndex
    survivor: SurvivorSpec
    spec: ProbeSpec

    def __call__(self, trials: list[Trial], before: list[str | None], seconds: float) -> Infections:
        """The mutant's states at its lines on each input, against the original's
        (`before`, which may stop before the last input), for `seconds` at most."""
        self.mutant.apply(self.alive)
        budget = Budget(seconds, backstop=1.8 * seconds)  # its fork is killed at twice
        infected = traced = 0
        for trial, original in zip(trials, before, strict=False):
            if budget.spent():
                break
            after = _states(trial, self.survivor, self.spec)
            infected += original is not None and after is not None and after != original
            traced += 1
        return Infections(inputs=infected, traced=traced)


def _to_replay(survivor: SurvivorSpec, trials: list[Trial]) -> tuple[list[Trial], Evidence]:
    """The trials on which the mutant may do other than the original, and what the
    original's runs say about reaching it."""
    lines = statement_lines(survivor.path, survivor.first_line, survivor.last_line)
    reaching = [trial for trial in trials if trial.ran is not None and trial.ran.ran(*lines)]
    evidence = Evidence(reached=bool(reaching))
    if survivor.job.path == "swap":
        # Its function's code is the original's up to the mutated lines: on an input
        # that does not run them, the mutant does what the original does.
        return reaching, evidence
    if survivor.reads is not None:
        # Its values are the original's wherever its file's code does not read them.
        reading = [trial for trial in trials if _reads(trial, survivor.reads)]
        evidence.reading = len(reading)
        return reading, evidence
    return trials, evidence


def _reads(trial: Trial, reads: Reads) -> bool:
    """Whether the original ran, on the trial's input, code that reads the values."""
    return trial.ran is not None and not trial.ran.lines.isdisjoint(reads.lines)


def _name(trial: Trial, survivor: SurvivorSpec) -> str:
    return name_for(trial.subject, survivor.mutant_id)


def _interleaved(groups: list[list[Trial]], limit: int) -> list[Trial]:
    """Trials of several functions taken in turn, `limit` at most: a survivor searched
    through every function of its file costs no more than one searched directly."""
    mixed: list[Trial] = []
    for row in itertools.zip_longest(*groups):
        mixed.extend(trial for trial in row if trial is not None)
    return mixed[:limit]


def _state_differences(original: Outcome, mutant: Outcome) -> set[str]:
    """Mutable arguments (or `self`) left in another state by the mutant."""
    if not original.kind == mutant.kind == "returned":
        return set()
    return {
        name
        for name in original.after
        if not equal(original.after.get(name), mutant.after.get(name))
    }


def _render(trial: Trial, state: set[str], survivor: SurvivorSpec) -> tuple[str, str]:
    original = trial.outcome
    doc = f"Kills {survivor.mutant_id} ({survivor.description})."
    doc = doc.replace('"""', "'''").replace("\\", "\\\\")
    try:
        return render(
            trial.subject, trial.example, original, _name(trial, survivor), doc, state
        ), ""
    except (NoLiteral, RecursionError) as why:
        return "", f"no ready test: {why}"


def _passes(test: str, name: str, spec: ProbeSpec) -> bool:
    return _timed(lambda: run_test(test, name), spec.call_timeout * 2) is None


def _timed(run: Callable[[], BaseException | None], seconds: float) -> BaseException | None:
    with guarded_call(seconds) as make:
        if not make:
            return CallTimeout()
        try:
            with alarm(seconds):
                return run()
        except CallTimeout as timeout:
            return timeout


def witnesses_for_group(
    survivors: list[SurvivorSpec],
    subjects: dict[str, Subject],
    spec: ProbeSpec,
    alive: FunctionIndex,
    run_forked: Callable[[Callable[[], object], float], tuple[str | None, str]],
    generated: Mapping[str, Inputs],
) -> WitnessBatch:
    """Runs in the group's child: original outcomes here, each mutant in a grandchild.
    `generated`: the inputs earlier groups of this process generated (generating is most
    of a search's time; derandomized, they come out the same each time)."""
    keys = sorted({key for survivor in survivors for key in survivor.targets if key in subjects})
    # A function whose inputs kill the process (a segfault, a hang past the budget)
    # would take every survivor of the file down with it: try its inputs in a
    # grandchild first, and take back the inputs it generated. Inputs an earlier group
    # took back have been tried.
    trials_by_key = {}
    new_inputs: dict[str, Inputs] = {}
    # A survivor's search takes its functions' inputs in turn, `witness_examples` in all:
    # the original's outcomes are needed for those only.
    share = min(share_of(survivor, spec.witness_examples) for survivor in survivors)
    for key in keys:
        count = max(s.inputs.get(key, share) for s in survivors if key in s.targets)
        inputs = generated.get(key)
        if inputs is None or not (inputs.failed or inputs.count == count):
            text, why = run_forked(
                lambda key=key, count=count: _tried_inputs(subjects[key], spec, count),
                spec.time_budget,
            )
            inputs = wire.decode(Inputs, text) if text else Inputs(failed=why or "no inputs")
            new_inputs[key] = inputs
        if inputs.failed:
            continue
        examples = inputs.examples(subjects[key])
        trials_by_key[key] = trials_for(subjects[key], spec, examples[:share], survivors[0].path)
    sources = MutantSources()  # the group's file, read once
    originals = OriginalStates(spec, run_forked)
    found = []
    for survivor in survivors:
        trials = _interleaved(
            [trials_by_key[key] for key in survivor.targets if key in trials_by_key],
            spec.witness_examples,
        )
        if not trials:
            found.append(_not_probeable(survivor, "no probeable function reaches it"))
            continue
        replayed, evidence = _to_replay(survivor, trials)
        if not replayed:
            found.append(_unshown(survivor, Draft(examples=len(trials)), evidence))
            continue
        trials = replayed
        try:
            mutant = sources.prepare(survivor.job)
        except SwapError as changed:
            found.append(_not_probeable(survivor, str(changed)))
            continue
        text, why = run_forked(
            lambda s=survivor, m=mutant, t=trials: _on_mutant(s, m, alive, t, spec),
            spec.time_budget,
        )
        if text is None:
            found.append(_not_probeable(survivor, why))
            continue
        draft = wire.decode(Draft, text)
        if draft.index < 0 and evidence.reached and survivor.direct:
            evidence.infected, evidence.traced = _infection_check(
                functools.partial(originals.of, survivor),
                _Infecting(mutant, alive, survivor, spec),
                trials,
                spec,
                run_forked,
            )
        found.append(_finish(survivor, trials, draft, spec, evidence))
    return WitnessBatch(witnesses=found, inputs=new_inputs)


INFECTION_CHUNK = 100
"""Inputs the infection check traces at a time. Tracing both versions is most of the
cost of a search that told nothing apart; once the first inputs have decided (no change
made on any, or on `ENOUGH_INPUTS`) the rest would not change the status."""

Originals = Callable[[list[Trial], float], "list[str | None] | None"]
"""The original's states on some inputs, traced within the seconds given (None: no answer)."""
MutantCheck = Callable[[list[Trial], "list[str | None]", float], Infections]
"""The mutant's infections on some inputs against the original's states, within the
seconds given: run in a grandchild of its own (the mutant cannot be taken back)."""


def _infection_check(
    originals: Originals,
    check: MutantCheck,
    trials: list[Trial],
    spec: ProbeSpec,
    run_forked: Callable[[Callable[[], object], float], tuple[str | None, str]],
) -> tuple[int, int]:
    """Inputs on which the mutant changed the state where it is, and inputs traced: a
    chunk at a time, within half the time budget in all, half of what is left for each
    version."""
    deadline = time.monotonic() + spec.time_budget / 2
    infected = traced = 0
    for start in range(0, len(trials), INFECTION_CHUNK):
        left = deadline - time.monotonic()
        if (start and _decided(infected)) or left <= 0:
            break
        chunk = trials[start : start + INFECTION_CHUNK]
        before = originals(chunk, left / 2)
        if before is None:
            break
        text, _ = run_forked(lambda chunk=chunk, b=before, s=left / 2: check(chunk, b, s), left)
        if text is None:
            break
        result = wire.decode(Infections, text)
        infected, traced = infected + result.inputs, traced + result.traced
    return infected, traced


def _decided(infected: int) -> bool:
    """Whether the inputs traced so far settle the status: no change made on any, or on
    enough to call the mutant likely equivalent."""
    return infected == 0 or infected >= ENOUGH_INPUTS


def _not_probeable(survivor: SurvivorSpec, reason: str) -> Witness:
    return Witness(mutant_id=survivor.mutant_id, status="not probeable", reason=reason)


@dataclass
class Evidence:
    """What a search that told nothing apart still learnt about a survivor."""

    reached: bool
    """The original ran the mutated lines on some of the inputs."""
    infected: int = 0
    """Inputs on which the mutant changed the state where it is: its frame's locals,
    `self`'s attributes, the next line run or the value returned (checked only for a
    survivor searched through its own function, which reached it)."""
    traced: int = 0
    """Inputs the infection check traced on both versions."""
    reading: int = -1
    """Inputs that ran code reading an import-time survivor's values (`Reads`); -1 when
    any input may read them."""


ENOUGH_INPUTS = 10
"""Inputs a search through the mutant's own function must have tried, and inputs on
which the mutant must have changed the state where it is with both versions returning,
before the probes call it likely equivalent."""


def _unshown(survivor: SurvivorSpec, draft: Draft, evidence: Evidence) -> Witness:
    """A survivor no input told apart. Likely equivalent only on evidence that held on
    marshmallow and semver: its own function called, its lines run, and its change made
    where it is on many inputs that returned, without showing outside. A change never
    made says nothing: the inputs may lack the values that make it (an option never
    passed)."""
    tried = draft.examples
    names = ", ".join(survivor.reads.names) if survivor.reads else ""
    if evidence.reading == 0:
        reason = f"none of {tried} inputs ran code that reads {names}"
    elif evidence.reading > 0 and not evidence.reached:
        reason = f"{tried} inputs ran code that reads {names}: none told it apart"
    elif not evidence.reached:
        reason = f"none of {tried} inputs ran the mutated line"
    elif not survivor.direct:
        reason = f"searched through other functions: none of {tried} inputs told it apart"
    elif tried < ENOUGH_INPUTS:
        reason = f"only {tried} inputs could be tried"
    elif evidence.infected < ENOUGH_INPUTS:
        reason = (
            f"{tried} inputs ran the mutated line; on {evidence.infected} of the "
            f"{evidence.traced} traced did it change the state there and both versions "
            "return: too few to call it equivalent"
        )
    elif decides_by_receiver_type(survivor.path, survivor.first_line, survivor.last_line):
        reason = (
            f"{tried} inputs told nothing apart, but the change is to code that decides "
            "by the type of `self`: it shows only for a subclass or another type, which "
            "the probes do not build"
        )
    else:
        return Witness(
            mutant_id=survivor.mutant_id,
            status="likely_equivalent",
            examples=tried,
            reason=f"on {evidence.infected} of the {evidence.traced} inputs traced (of "
            f"{tried} tried) the mutant changed the state where it is, and no call showed "
            "a difference",
        )
    return Witness(mutant_id=survivor.mutant_id, status="not_shown", examples=tried, reason=reason)


def _finish(
    survivor: SurvivorSpec, trials: list[Trial], draft: Draft, spec: ProbeSpec, evidence: Evidence
) -> Witness:
    if draft.index < 0:
        return _unshown(survivor, draft, evidence)
    trial = trials[draft.index]
    test, reason = draft.test, draft.reason
    if test and not _passes(test, _name(trial, survivor), spec):
        test, reason = "", "no ready test: the rendered test does not pass on the original"
    return Witness(
        mutant_id=survivor.mutant_id,
        status="found",
        function=trial.subject.spec.qualname,
        input=trial.subject.call_text(trial.example),
        original=draft.original,
        mutant=draft.mutant,
        examples=draft.examples,
        test=test,
        reason=reason,
    )
