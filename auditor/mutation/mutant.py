"""Turning a process into a job's mutant: the one way the engine's children and the
witness searches of the probe stage apply a mutant, from the same `Job`.

Runs in processes that import the code under test and are thrown away afterwards (a
forked child). `MutantSources` does the reading and compiling in their parent, once per
file, so no child repeats it."""

from __future__ import annotations

import marshal
import sys
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FunctionType

from auditor.mutation.protocol import Job, text_digest
from auditor.mutation.reexecution import compile_statements, rerun_code
from auditor.mutation.swap import (
    SwapError,
    live_functions,
    module_for,
    reexecute_module,
    swap_function,
)

Consumers = list[tuple[str, list[CodeType]]]
"""Statements of other modules to run again after a module's mutant: (module, code)."""
FunctionIndex = dict[tuple[str, int, str], list[FunctionType]]


class MutantCompileError(Exception):
    """The mutated file does not compile: no test can kill it."""


class MutantImportError(Exception):
    """Running the mutated module raised: its import fails, which the first test sees."""


@dataclass(frozen=True)
class PreparedMutant:
    """A job with what its child needs read and compiled before the fork."""

    job: Job
    mutated: str
    """The mutated file's text; '' for a job that carries only a function's code."""
    consumers: Consumers

    def compile_module(self) -> CodeType:
        """The mutated file's code, compiled as the processes it is served to would."""
        try:
            return compile(self.mutated, self.job.file, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            raise MutantCompileError(f"{type(exc).__name__}: {exc}"[:300]) from None

    def apply(self, functions: FunctionIndex) -> None:
        """Apply the mutant to this process: swap the function's code, or run the mutated
        module (the chosen statements of it) again in place, then the statements of other
        modules that read what it defines. A `subprocess` job, which the engine serves
        only to the processes its tests start, is applied the same way: a witness search
        calls the code in its own process.

        `functions`: `live_functions` of the source files, taken before the fork."""
        job = self.job
        if job.path == "swap" or (job.path == "subprocess" and job.code_b64):
            key = (job.file, job.target_line, job.target_name)
            found = functions.get(key)
            if not found:  # defined in a module nothing had imported yet
                module_for(job.file, job.module_name)
                found = live_functions({job.file}).get(key, [])
            swap_function(found, marshal.loads(job.code_bytes()))
            return
        module = module_for(job.file, job.module_name)
        try:
            compiled = rerun_code(self.mutated, job.rerun_lines, job.file)
        except (SyntaxError, ValueError) as exc:
            raise MutantCompileError(f"{type(exc).__name__}: {exc}"[:300]) from None
        try:
            reexecute_module(module, compiled)
            for name, codes in self.consumers:
                consumer = sys.modules.get(name)
                if consumer is not None:  # else it imports the mutant afresh
                    reexecute_module(consumer, codes)
        except Exception as exc:
            raise MutantImportError(f"import fails: {exc!r}"[:300]) from None


class MutantSources:
    """The original files a job patches and the statements of other modules it runs
    again, read and compiled once per process."""

    def __init__(self) -> None:
        self._texts: dict[str, tuple[str, str]] = {}
        self._consumers: dict[tuple[str, int, int], list[CodeType]] = {}

    def original(self, file: str) -> tuple[str, str]:
        """The file's text and its digest ('' for a file that cannot be read)."""
        if file not in self._texts:
            try:
                text = Path(file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
            self._texts[file] = (text, text_digest(text))
        return self._texts[file]

    def prepare(self, job: Job) -> PreparedMutant:
        """SwapError when the file changed since the job was planned."""
        mutated = ""
        if job.source_digest:
            if self.changed(job):
                raise SwapError(f"{job.file} changed on disk during the run")
            mutated = job.mutated(self.original(job.file)[0])
        return PreparedMutant(job, mutated, self._consumers_of(job))

    def changed(self, job: Job) -> bool:
        """Whether the file a patch applies to differs from the one it was planned on."""
        return bool(job.source_digest) and self.original(job.file)[1] != job.source_digest

    def _consumers_of(self, job: Job) -> Consumers:
        found = []
        for file, name, start, end in job.consumers:
            key = (file, start, end)
            if key not in self._consumers:
                source, _ = self.original(file)
                self._consumers[key] = compile_statements(source, [(start, end)], file)
            found.append((name, self._consumers[key]))
        return found
