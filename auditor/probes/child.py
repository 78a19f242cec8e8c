"""The probe process: `python -m auditor.probes.child SPEC.json`.

It imports Hypothesis, installs the guard, then imports the code under test. Each
function's probes and each survivor's witness search run in a forked child with a
resource limit and a time budget, so a crash, a hang or a runaway input costs one
result, not the run. audit hands out the work an item at a time (`_Audit`); results are
appended as JSON lines to the spec's results file. Everything up to the first fork needs
only the spec, so the process can start before the work is known."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import math
import os
import queue
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, NoReturn

from auditor.baseline.patterns import compile_all
from auditor.containment import wire
from auditor.containment.memory import address_space_bytes
from auditor.probes import hangs
from auditor.probes.protocol import (
    FunctionResult,
    ProbeSpec,
    ProbeWork,
    SurvivorSpec,
    TargetSpec,
    WitnessResult,
    search_items,
)
from auditor.probes.ran import Ran, RanLog
from auditor.report import FunctionProbe, ParamStrategy, Witness

if TYPE_CHECKING:  # imported once the probe process is set up (`main`)
    from auditor.probes.calls import Subject
    from auditor.probes.witness import Inputs, WitnessBatch


def _run_forked(work: Callable[[], object], budget: float) -> tuple[str | None, str]:
    """(JSON result, '') or (None, why it has none). A call that hangs inside C, where its
    timeout cannot stop it, ends the child; the work then runs again with that call
    counted as hung (`hangs`), within the same budget."""
    deadline = time.monotonic() + budget
    hung: set[int] = set()
    while True:
        numbers = hangs.CallNumbers()
        try:
            text, why, status = _fork_once(work, budget, deadline, numbers, frozenset(hung))
            if not hangs.hung_in_c(status):
                return text, why
            hung.add(numbers.started - 1)
        finally:
            numbers.close()
        if len(hung) > hangs.RERUNS:
            return None, f"{len(hung)} calls hung inside C code, where no timeout stops them"


def _fork_once(
    work: Callable[[], object],
    budget: float,
    deadline: float,
    numbers: hangs.CallNumbers,
    hung: frozenset[int],
) -> tuple[str | None, str, int]:
    """One run of `work` in a forked child: its result or why it has none, and its wait
    status."""
    from auditor.containment.sandbox import limit_resources

    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        code = 0
        try:
            os.setpgid(0, 0)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # audit's orders are not its input
            # An input that makes the code allocate without bound gets a MemoryError
            # (an outcome like any other), not gigabytes: the address space may grow by
            # the probes' allowance beyond the parent's.
            allowed = address_space_bytes() // 2**20 + _growth_limit_mb
            limit_resources(min(_memory_limit_mb, allowed), cpu_seconds=math.ceil(budget) + 2)
            hangs.number_calls(numbers, hung)
            data = wire.encode(work()).encode()
            view = memoryview(data)
            while view:
                written = os.write(write_end, view)
                view = view[written:]
        except BaseException as error:
            message = f"{type(error).__name__}: {error}".splitlines()[0][:300]
            os.write(write_end, json.dumps({"error": message}).encode())
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    chunks: list[bytes] = []
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_end], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    if timed_out:
        for target in (-pid, pid):
            with contextlib.suppress(OSError):
                os.kill(target, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return None, f"time budget of {budget:g}s exceeded", status
    text = b"".join(chunks).decode("utf-8", "replace")
    if os.WIFSIGNALED(status):
        return None, f"the probe crashed ({signal.Signals(os.WTERMSIG(status)).name})", status
    if text.startswith('{"error"'):
        return None, json.loads(text)["error"], status
    if not text:
        return None, "the probe exited without a result", status
    return text, "", status


def _why(error: Exception) -> str:
    return f"{type(error).__name__}: {error}".splitlines()[0]


def _warm_hypothesis() -> None:
    """Hypothesis does some work once per process: it registers its own random generator
    (with a full `gc.collect()`), builds its shrinker's tables, and collects the
    constants of the code under test (to try them as inputs). One search through
    generation and shrinking here, once the code is imported, does that work once rather
    than in every forked probe. Its result is thrown away, so it may be random.

    Hypothesis collects the constants at the first draw that wants one, and a random
    search may make none: then every fork collected them again, resolving the path of
    every loaded module to tell the user's code from the rest. Asked for here, they are
    collected once."""
    from hypothesis import Phase, find, settings, strategies

    # Not the explain phase: probes never run it, and it costs more than the rest.
    phases = [Phase.generate, Phase.shrink]
    find(strategies.integers(), lambda _: True, settings=settings(database=None, phases=phases))
    from hypothesis.internal.conjecture import providers

    from auditor.probes import draws

    with contextlib.suppress(AttributeError):  # a private function: may go in a release
        providers._get_local_constants()
    draws.internals_known()  # checked once, not in every fork that draws inputs


def _hide_own_constants() -> None:
    """Hypothesis also tries, as inputs, the constants of every module it takes for the
    user's code: any file outside site-packages. Installed from a checkout (editable),
    audit's own modules pass for such code, and their strings would turn up among the
    inputs: other inputs, hence other witnesses, than a regular install finds, changing
    with every edit of audit. Marked as seen once audit's modules are imported, they are
    never read. Hypothesis keeps that mark in a private set; without it, nothing changes."""
    from hypothesis.internal.conjecture import providers

    seen = getattr(providers, "_seen_modules", None)
    if not isinstance(seen, set):
        return
    installed = Path(__file__).resolve().parents[2]
    own = tuple(f"{installed / package}{os.sep}" for package in ("auditor", "mutators", "reports"))
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and os.path.realpath(file).startswith(own):
            seen.add(id(module))


_memory_limit_mb = 1024
_growth_limit_mb = 128


class _Audit:
    """audit's side of the conversation. Its first line on stdin is the path of the work
    (`ProbeWork`), sent when the survivors are known, which may be long after this
    process started; an empty line instead means there is none. Then the work, one item
    at a time: ask audit on `requests` (a newline), read the index of the next item; an
    empty line means no more. Handing out items as processes finish keeps every core
    busy to the end: how long an item takes varies a hundredfold (a function's probes,
    a group of survivors' witness searches).

    End of file on stdin means audit died (even by SIGKILL), and anything but what it
    sends means the channel broke: either way this process group stops (the sandbox
    wrapper included). Forked probes have groups of their own and end with their time
    budget."""

    def __init__(self, requests: int) -> None:
        self._requests = requests
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        # os.read, not sys.stdin: a forked probe must not inherit a held buffer lock.
        pending = b""
        try:
            while chunk := os.read(0, 1024):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    self._lines.put(line.decode())
                    if not line:
                        return
        except (OSError, UnicodeDecodeError):
            pass  # a channel that breaks or carries something else: as if audit died
        _stop_here()

    def work(self) -> ProbeWork | None:
        """The work, once audit sends it; None when there is none."""
        path = self._lines.get()
        if not path:
            return None
        try:
            return wire.decode(ProbeWork, Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            _stop_here()

    def orders(self) -> Iterator[int]:
        """The index of each item of the work this process is to do."""
        while True:
            os.write(self._requests, b"\n")
            line = self._lines.get()
            if not line:
                return
            try:
                yield int(line)
            except ValueError:
                _stop_here()


def _stop_here() -> NoReturn:
    """Stops this process group: whatever the signal reached, the work waits on audit."""
    with contextlib.suppress(OSError):
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os._exit(1)


def main(spec_path: str) -> int:
    spec = wire.decode(ProbeSpec, Path(spec_path).read_text(encoding="utf-8"))
    _contain(spec)
    results = open(spec.results_file, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
    audit = _Audit(_output_to_log(spec))

    import hypothesis  # noqa: F401 - imported before the guard, with its own files

    # What the work needs, imported before the guard is on.
    from auditor.containment import guard
    from auditor.mutation import swap  # noqa: F401
    from auditor.probes import calls, draws, search, strategies, witness  # noqa: F401

    if spec.searches:
        # A witness's test that expects an exception imports pytest, and each runs in a
        # fork of its own: imported here once, not in every fork.
        import pytest  # noqa: F401

    if spec.guard:
        guard.install(spec.allowed_roots, lambda blocked: None, [spec.root])
    strategies.register_types()  # before any strategy is built
    draws.draw_branches_directly()
    hangs.keep_alarm_handlers()
    work = _Work(spec, results)
    _hide_own_constants()
    _warm_hypothesis()
    handed = audit.work()
    if handed is not None:
        work.prepare(handed)
        for item in audit.orders():
            kind, name = handed.items[item]
            if kind == "search":
                work.search(name)
            else:
                work.probe(name)
    results.close()
    return 0


def _contain(spec: ProbeSpec) -> None:
    global _memory_limit_mb
    from auditor.containment.sandbox import limit_resources, quiet_bytecode

    _memory_limit_mb = spec.memory_limit_mb
    limit_resources(spec.memory_limit_mb)
    quiet_bytecode()
    os.chdir(spec.root)


def _output_to_log(spec: ProbeSpec) -> int:
    """Sends what the code under test prints to the log; returns the descriptor of the
    original stdout, where the process asks audit for work."""
    log = os.open(spec.log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    requests = os.dup(1)
    os.dup2(log, 1)
    os.dup2(log, 2)
    return requests


class _Work:
    """The two kinds of work item: probing a function, and searching witnesses for a
    file's survivors. Each item makes the functions it calls callable in its own fork:
    making one evaluates the values the tests passed and builds instances, whose side
    effects must not reach later items (which items a process gets varies from run to
    run), and a run about one change needs a few of the project's functions, not all."""

    def __init__(self, spec: ProbeSpec, results: IO[str]) -> None:
        self.spec, self.results = spec, results
        self.source_files = set(spec.source_files)
        self.targets: dict[str, TargetSpec] = {}
        for module in sorted(spec.modules):
            # Imported before the warm-up, whose first draw collects their constants.
            with contextlib.suppress(Exception):
                importlib.import_module(module)
        self.generated: dict[str, Inputs] = {}
        """Witness inputs generated per function, reused by later searches."""
        self.drawn_by: dict[str, Ran | None] = {}
        """For each function's generated inputs, the code the search that drew them ran."""

    def prepare(self, work: ProbeWork) -> None:
        """What the work needs before its first fork."""
        global _growth_limit_mb
        _growth_limit_mb = work.growth_limit_mb
        self.targets = {target.key: target for target in work.targets}
        compile_all(work.patterns)  # once here, not in every fork
        self._prepare_searches(work.survivors)

    def _prepare_searches(self, survivors: list[SurvivorSpec]) -> None:
        from auditor.mutation.swap import live_functions
        from auditor.probes.reach import statements_of

        self.groups = search_items(survivors)
        self.alive = live_functions(self.source_files) if survivors else {}
        for path in {survivor.path for survivor in survivors}:
            statements_of(path)  # parsed here once, not again in every group's fork

    def emit(self, result: FunctionResult | WitnessResult) -> None:
        self.results.write(wire.encode(result) + "\n")

    def _subject(self, key: str) -> Subject | FunctionProbe:
        """The function made callable, or the record of why it cannot be."""
        from auditor.probes.calls import NotProbeable, Subject

        target = self.targets[key]
        try:
            return Subject(target, self.source_files)
        except NotProbeable as why:
            return _probe(target, "not probeable", str(why), [])
        except Exception as error:
            return _probe(target, "failed", _why(error), [])

    def _probed(self, key: str, log: RanLog) -> FunctionResult:
        """Its probes' result; `failed` where making it callable or drawing its inputs
        raised, which it does alike in every run."""
        log.record(self.source_files)
        return dataclasses.replace(self._probe_once(key), ran=log.ran())

    def _probe_once(self, key: str) -> FunctionResult:
        from auditor.probes.search import probe_function

        subject = self._subject(key)
        if isinstance(subject, FunctionProbe):
            return FunctionResult(probe=subject)
        try:
            return probe_function(subject, self.spec)
        except Exception as error:
            failed = _probe(self.targets[key], "failed", _why(error), subject.params)
            return FunctionResult(probe=failed)

    def _params(self, key: str) -> list[ParamStrategy]:
        subject = self._subject(key)
        return [] if isinstance(subject, FunctionProbe) else subject.params

    def probe(self, key: str) -> None:
        spec = self.spec
        log = RanLog()
        try:
            text, reason = _run_forked(lambda: self._probed(key, log), spec.time_budget)
        finally:
            log.close()
        if text is not None:
            self.results.write(text + "\n")
            return
        # What it was probed with, made again in a fork of its own (making one takes
        # milliseconds): the probe ran out of time or crashed, making it did not.
        shown, _ = _run_forked(lambda: self._params(key), 4 * spec.call_timeout)
        params = [ParamStrategy(**param) for param in json.loads(shown or "[]")]
        failed = _probe(self.targets[key], "failed", reason, params)
        self.emit(FunctionResult(probe=failed, ended=True))

    def _searched(self, group: str, log: RanLog) -> WitnessBatch:
        from auditor.probes.witness import witnesses_for_group

        log.record(self.source_files)
        survivors = self.groups[group]
        keys = self._searched_through(group)
        made = {key: self._subject(key) for key in keys}
        subjects = {key: made[key] for key in keys if not isinstance(made[key], FunctionProbe)}
        return witnesses_for_group(
            survivors, subjects, self.spec, self.alive, _run_forked, self.generated
        )

    def _searched_through(self, group: str) -> list[str]:
        """The functions a group's search draws inputs for (or reuses them)."""
        return sorted({key for survivor in self.groups[group] for key in survivor.targets})

    def search(self, group: str) -> None:
        from auditor.probes.witness import WitnessBatch

        survivors, spec = self.groups[group], self.spec
        reused = [key for key in self._searched_through(group) if key in self.generated]
        log = RanLog()
        try:
            text, reason = _run_forked(
                lambda: self._searched(group, log), spec.time_budget * (len(survivors) + 2)
            )
            ran = log.ran()
        finally:
            log.close()
        if text is not None:
            batch = wire.decode(WitnessBatch, text)
            ran = _with_drawing(ran, [self.drawn_by[key] for key in reused])
            self.generated.update(batch.inputs)
            self.drawn_by.update((key, ran) for key in batch.inputs)
            for witness in batch.witnesses:
                self.emit(WitnessResult(witness=witness, ran=ran))
            return
        for survivor in survivors:
            witness = Witness(mutant_id=survivor.mutant_id, status="not probeable", reason=reason)
            self.emit(WitnessResult(witness=witness))


def _with_drawing(ran: Ran | None, drawing: list[Ran | None]) -> Ran | None:
    """What a search ran, with what the earlier searches whose inputs it reused ran to
    draw them; None where any of it is unknown."""
    if ran is None or None in drawing:
        return None
    return sorted({*ran, *(entry for drawn in drawing for entry in drawn or ())})


def _probe(
    target: TargetSpec, status: str, reason: str, params: list[ParamStrategy]
) -> FunctionProbe:
    """The record of a function whose probes did not run (or did not finish)."""
    return FunctionProbe(
        file=target.file,
        function=target.qualname,
        line=target.line,
        status=status,  # type: ignore[arg-type]
        reason=reason,
        params=params,
    )


if __name__ == "__main__":
    code = main(sys.argv[1])
    os._exit(code)
