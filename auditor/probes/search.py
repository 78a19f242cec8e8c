"""The probes of one function, run inside a forked child of the probe process: the crash
probe, untested error paths and edge classes never tried (witnesses: `witness.py`).

A function's searches go through one set of up to `max_examples` inputs (`draws.Drawn`):
the same every run, the simplest first; Hypothesis's shrinker turns each input a search
wants into a minimal one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from auditor.probes.calls import MAX_HANGS, Example, Subject
from auditor.probes.draws import Drawn, first, satisfying
from auditor.probes.edges import classes_of
from auditor.probes.outcomes import Outcome
from auditor.probes.protocol import FunctionResult, ProbeSpec
from auditor.probes.suggest import NoLiteral, name_for, render
from auditor.report import FunctionProbe, ProbeFinding

MAX_CRASHES = 3
"""Distinct crashes (exception type and line) reported per function."""


class _Counter:
    def __init__(self) -> None:
        self.examples = 0


def _counted(condition: Callable[[Example], bool], counter: _Counter) -> Callable[[Example], bool]:
    def counted(example: Example) -> bool:
        counter.examples += 1
        return condition(example)

    return counted


def _relative(spec: ProbeSpec, path: str) -> str:
    root = spec.root.rstrip("/") + "/"
    return path[len(root) :] if path.startswith(root) else path


def _suggest(subject: Subject, example: Example, outcome: Outcome, tag: str, doc: str) -> str:
    try:
        return render(subject, example, outcome, name_for(subject, tag), doc)
    except (NoLiteral, RecursionError):
        return ""


def probe_function(subject: Subject, spec: ProbeSpec) -> FunctionResult:
    counter = _Counter()
    inputs = Drawn(subject.strategy, spec.max_examples)
    findings = _crashes(subject, spec, inputs, counter)
    findings += _error_paths(subject, spec, inputs, counter)
    findings += _untried_edges(subject, spec, counter)
    target = subject.spec
    probe = FunctionProbe(
        file=target.file,
        function=target.qualname,
        line=target.line,
        status="probed" if counter.examples else "not probeable",
        reason="" if counter.examples else NOTHING_DRAWN,
        params=subject.params,
        examples=counter.examples,
    )
    return FunctionResult(probe=probe, findings=findings)


NOTHING_DRAWN = (
    "no input could be made: every value drawn was refused (an abstract class, a "
    "constructor that raises on all of them)"
)


def _finding(
    subject: Subject,
    example: Example,
    outcome: Outcome,
    *,
    kind: str,
    line: int,
    message: str,
    suggested: str,
) -> ProbeFinding:
    """What a call on `example` did that the report shows, with a test that pins it."""
    return ProbeFinding(
        kind=kind,  # type: ignore[arg-type]
        file=subject.spec.file,
        function=subject.spec.qualname,
        line=line,
        message=message,
        input=subject.call_text(example),
        observed=outcome.describe(),
        suggested_test=suggested,
    )


def _crashes_the_tests_make(
    subject: Subject, spec: ProbeSpec, counter: _Counter
) -> set[tuple[str, str, tuple[str, int]]]:
    """The exceptions (class and line) the suite's own calls raise: the test that made
    the call expects or handles it (`with raises(TypeError): Regex(1)`), so an input
    that raises the same is no crash the suite never tried."""
    made = set()
    for example in subject.observed:
        counter.examples += 1
        outcome = subject.invoke(example, spec.call_timeout)
        if outcome.kind == "raised" and outcome.crash:
            made.add(outcome.signature())
    return made


def _crashes(
    subject: Subject, spec: ProbeSpec, inputs: Drawn, counter: _Counter
) -> list[ProbeFinding]:
    seen = _crashes_the_tests_make(subject, spec, counter)
    last: list[Outcome] = []

    def new_crash(example: Example) -> bool:
        outcome = subject.invoke(example, spec.call_timeout)
        found = outcome.crash and outcome.signature() not in seen
        if found:
            last[:] = [outcome]  # the shrinker only accepts smaller crashes
        return found

    findings: list[ProbeFinding] = []
    for example in satisfying(inputs, _counted(new_crash, counter)):
        outcome = last[0]
        seen.add(outcome.signature())
        findings.append(_crash_finding(subject, spec, example, outcome))
        if outcome.kind == "hung":
            subject.hangs = MAX_HANGS  # one hang reported; no more calls that may hang
        if len(findings) == MAX_CRASHES:
            break
    return findings


def _crash_finding(
    subject: Subject, spec: ProbeSpec, example: Example, outcome: Outcome
) -> ProbeFinding:
    file, line = outcome.where
    if outcome.kind == "hung":
        message = f"hangs: no return within {spec.call_timeout:g}s"
    else:
        place = f"{_relative(spec, file)}:{line}" if file else "inside the call"
        message = f"{type(outcome.error).__name__} at {place}"
    doc = f"Found by audit: {subject.call_text(example)[:120]} {outcome.describe()[:80]}."
    doc = doc.replace('"""', "'''").replace("\\", "\\\\")
    suggested = _suggest(subject, example, outcome, f"crash {message}", doc)
    return _finding(
        subject,
        example,
        outcome,
        kind="unhandled_crash",
        line=line or subject.spec.line,
        message=message,
        suggested=suggested,
    )


def _exception_names(subject: Subject, name: str) -> set[str]:
    """The raised class's name and its bases' names, when it resolves in the module."""
    found = {name.rsplit(".", 1)[-1]}
    value: Any = subject.module
    for part in name.split("."):
        value = getattr(value, part, None)
    if isinstance(value, type):
        found |= {kind.__name__ for kind in value.__mro__}
    return found - {"Exception", "BaseException", "object"}


def _error_paths(
    subject: Subject, spec: ProbeSpec, inputs: Drawn, counter: _Counter
) -> list[ProbeFinding]:
    findings = []
    expected = set(spec.expected_exceptions)
    for line, name, written in subject.spec.raises:
        if not written:
            continue  # a bare `raise`: a re-raise, on purpose
        unreached = line in subject.spec.unreached_raise_lines
        # Whether a test expects it can be judged only of a class the statement names.
        unexpected = bool(name) and not (_exception_names(subject, name) & expected)
        if not (unreached or unexpected):
            continue

        def reaches(example: Example, line: int = line) -> bool:
            outcome = subject.invoke(example, spec.call_timeout)
            return outcome.kind == "raised" and outcome.where == (subject.spec.path, line)

        found = first(inputs, _counted(reaches, counter))
        short = name.rsplit(".", 1)[-1] if name else written
        why = "no passing test reaches it" if unreached else f"no test expects {short}"
        message = f"`raise {short}`: {why}"
        if found is None:
            findings.append(
                ProbeFinding(
                    kind="untested_error_path",
                    file=subject.spec.file,
                    function=subject.spec.qualname,
                    line=line,
                    message=message + " (no generated input reached it)",
                    input="",
                    observed="",
                )
            )
            continue
        example = found[0]
        outcome = subject.invoke(example, spec.call_timeout)
        doc = f"The error path at line {line} ({short}), found by audit."
        suggested = _suggest(subject, example, outcome, f"raise {line}", doc)
        findings.append(
            _finding(
                subject,
                example,
                outcome,
                kind="untested_error_path",
                line=line,
                message=message,
                suggested=suggested,
            )
        )
    return findings


def _behaviour(outcome: Outcome) -> tuple[str, str, frozenset[int]]:
    name = type(outcome.error).__name__ if outcome.error is not None else ""
    return (outcome.kind, name, outcome.lines)


def _untried_edges(subject: Subject, spec: ProbeSpec, counter: _Counter) -> list[ProbeFinding]:
    """Edge classes of the catalogue no observed call tried, on which the function
    behaves unlike on every tried input (another exception, another set of lines)."""
    if not subject.observed:
        return []
    tried = set()
    for example in subject.observed:
        counter.examples += 1
        tried.add(_behaviour(subject.invoke(example, spec.call_timeout, trace_lines=True)))
    base = subject.observed[0]
    findings = []
    for param, edges in sorted(subject.edges.items()):
        seen_classes: set[str] = set()
        for call in subject.observed:
            if param in call:
                seen_classes |= classes_of(call[param])
        reported: set[tuple[str, str, frozenset[int]]] = set()
        for edge_class, value in edges:
            if edge_class in seen_classes:
                continue
            example = {**base, param: value}
            counter.examples += 1
            outcome = subject.invoke(example, spec.call_timeout, trace_lines=True)
            behaviour = _behaviour(outcome)
            if behaviour in tried or behaviour in reported:
                continue
            reported.add(behaviour)
            new_lines = sorted(outcome.lines - set().union(*(b[2] for b in tried)))
            differs = outcome.describe() if outcome.kind != "returned" else ""
            if not differs:
                differs = (
                    f"runs line {', '.join(map(str, new_lines))} that no tried input runs"
                    if new_lines
                    else "takes a path no tried input takes"
                )
            message = f"'{edge_class}' of `{param}`; there it {differs}"
            doc = f"Edge class {edge_class!r} of {param}: pins today's behaviour (review it)."
            suggested = _suggest(subject, example, outcome, f"edge {param} {edge_class}", doc)
            findings.append(
                _finding(
                    subject,
                    example,
                    outcome,
                    kind="untried_edge_class",
                    line=subject.spec.line,
                    message=message,
                    suggested=suggested,
                )
            )
    return findings
