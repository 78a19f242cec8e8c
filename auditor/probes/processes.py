"""The probe processes of a run (`python -m auditor.probes.child`), under the sandbox,
each in a folder of its own.

A process starts with what is known before any test runs (`ProbeSpec`: the modules to
import, the exceptions the tests expect, the limits) and gets the work (`ProbeWork`: the
functions with what the baseline saw of them, the survivors) once the mutation stage has
found them. Started after a change's baseline, one is ready when the probes start: its
start (Python, Hypothesis, the code under test) took 1.7-1.8 s of a marshmallow change's
2.2-2.8 s probe stage."""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from auditor.containment import wire
from auditor.containment.hypothesis_storage import storage_folder
from auditor.containment.sandbox import child_environment
from auditor.context import RunContext
from auditor.errors import ProbeError
from auditor.probes.protocol import ProbeResult, ProbeSpec, ProbeWork


class ProbeProcesses:
    """The probe processes and their folders, from their start to their results."""

    def __init__(
        self, run: RunContext, modules: list[str], expected: list[str], *, searches: bool
    ) -> None:
        """`modules`: those of the functions to probe; `expected`: the exceptions the
        tests expect; `searches`: whether witness searches may come."""
        self._run = run
        self._modules, self._expected, self._searches = modules, expected, searches
        self._scratch = tempfile.TemporaryDirectory(prefix="audit-probes-")
        self._work: ProbeWork | None = None
        self.running: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(self) -> subprocess.Popen[bytes]:
        """One more process; it gets the work at once when the work is known."""
        home = Path(self._scratch.name) / f"probe-{len(self.running)}"
        spec = _spec(self._run, home, self._modules, self._expected, searches=self._searches)
        wire.write(home / "spec.json", spec)
        process = subprocess.Popen(
            self._run.isolation.wrap(
                [sys.executable, "-m", "auditor.probes.child", str(home / "spec.json")],
                home=str(home),
                overlaid=self._run.config.allow_write,
            ),
            cwd=self._run.project.root,
            env=_environment(self._run, home),
            stdin=subprocess.PIPE,  # closed when audit dies: the probe process then stops
            stdout=subprocess.PIPE,  # where it asks for work
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.running.append((process, home))
        if self._work is not None:
            _hand(process, home, self._work)
        return process

    def hand(self, work: ProbeWork) -> None:
        """The work, to every process started and every one started from now on."""
        self._work = work
        for process, home in self.running:
            _hand(process, home, work)

    def stop(self) -> None:
        for process, _ in self.running:
            if process.poll() is None:
                process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()

    def close(self) -> None:
        """Stops every process and removes the folders; again is a no-op."""
        self.stop()
        self._scratch.cleanup()

    def results(self, stopped: bool) -> list[ProbeResult]:
        """What every probe process wrote. A process that died (killed, out of memory)
        loses nothing: its item went to another. Only when none wrote anything and one
        failed is the probe stage itself broken (it cannot start, say), and the run
        says so."""
        results: list[ProbeResult] = []
        for _, home in self.running:
            results += read_results(home / "results.jsonl")
        failed = [(p, home) for p, home in self.running if p.returncode and not stopped]
        if failed and not results:
            process, home = failed[0]
            why = _last_line(home / "output.log")
            raise ProbeError(f"the probe process failed (exit {process.returncode}): {why}")
        return results


def _hand(process: subprocess.Popen[bytes], home: Path, work: ProbeWork) -> None:
    """Writes the work into the process's folder (the one the sandbox surely shows it)
    and sends its path, the first line the process reads."""
    wire.write(home / "work.json", work)
    send(process, f"{home / 'work.json'}\n")


def send(process: subprocess.Popen[bytes], line: str) -> None:
    """Writes `line` to the process's stdin, unbuffered: a line to a process that died
    fails once, here, where a buffered one would stay behind and fail again as the
    stream closes, ending the run with nothing said."""
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # it died; its missing results say so
        os.write(process.stdin.fileno(), line.encode())


def _spec(
    run: RunContext, home: Path, modules: list[str], expected: list[str], *, searches: bool
) -> ProbeSpec:
    """A probe process's spec, in its own folder, with its limits."""
    project, config = run.project, run.config
    (home / "tmp").mkdir(parents=True)
    results_file = home / "results.jsonl"
    results_file.touch()
    return ProbeSpec(
        root=str(project.root),
        source_files=[os.path.realpath(path) for path in project.source_files],
        allowed_roots=[str(home), *config.allow_write],
        guard=run.isolation.level != "none",
        memory_limit_mb=config.memory_limit_mb,
        log_file=str(home / "output.log"),
        results_file=str(results_file),
        max_examples=config.probe_examples,
        witness_examples=witness_examples(config.probe_examples),
        time_budget=config.probe_time_budget,
        call_timeout=min(0.5, config.probe_time_budget / 4),
        expected_exceptions=expected,
        modules=modules,
        searches=searches,
    )


def witness_examples(probe_examples: int) -> int:
    """Inputs a witness search tries: three times a function's probes (docs/probes.md)."""
    return probe_examples * 3


def _environment(run: RunContext, home: Path) -> dict[str, str]:
    roots = [str(root) for root in run.project.source_roots]
    private_tmp = home / "tmp"
    return child_environment(roots, private_tmp, storage_folder(private_tmp, run.isolation))


_MIN_PROBE_GROWTH_MB = 128


def probe_growth_limit_mb(baseline_growth_mb: float, memory_limit_mb: int) -> int:
    """How far one forked probe may grow: twice what the whole suite grew by in the
    baseline, 128 MB at least (Hypothesis's own bookkeeping and the inputs it builds).
    An input that makes the code under test grow past it (a huge repeat count, say)
    gets a MemoryError there, not at the memory limit, so the probe stage never holds
    gigabytes."""
    wanted = max(_MIN_PROBE_GROWTH_MB, math.ceil(2 * baseline_growth_mb))
    return min(memory_limit_mb, wanted)


def read_results(path: Path) -> list[ProbeResult]:
    parsed: list[ProbeResult] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            parsed.append(wire.decode(ProbeResult, line))
        except ValueError:
            continue  # a line cut short by a killed process
    return parsed


def _last_line(log: Path) -> str:
    if not log.exists():
        return ""
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[-1] if lines else ""
