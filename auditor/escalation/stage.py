"""The escalate stage: weak modules go to the deep model; only proven tests are kept.

With an API key: one request per weak module (within the budget), the answers through
the filter chain, repair rounds that send the failures back, then the accepted tests
written to `.audit/hardened/` and measured again. Without a key: the requests are written
out, and the probes' witnesses become characterization tests that go through the same
chain. Everything sent and received is kept under `.audit/escalation/`; the key is not.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from auditor.config import EscalationConfig
from auditor.context import RunContext
from auditor.discovery.audit_folder import audit_folder
from auditor.discovery.project import Project, relative
from auditor.escalation import prompts
from auditor.escalation.as_written import settle
from auditor.escalation.model import ChatModel, ModelError, Reply, TestProposal
from auditor.escalation.policy import WeakModule, weak_modules
from auditor.escalation.proving import STAGES, measure_files, minimize, prove, suite_folder
from auditor.mutation import scoring
from auditor.report import (
    TIME_BUDGET_USED_UP,
    Candidate,
    EscalatedModule,
    EscalationSection,
    ModelUsage,
    Mutant,
    Origin,
    Report,
)


def api_key(config: EscalationConfig) -> str | None:
    return os.environ.get(config.api_key_env) or None


@dataclass
class Budget:
    """The limits of one run: modules, requests, tokens and (with prices) cost."""

    config: EscalationConfig
    usage: ModelUsage
    exhausted: str = ""
    deadline: float | None = None
    """When the run's time budget runs out (`time.monotonic()`)."""

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.exhausted = TIME_BUDGET_USED_UP
            return True
        return False

    def price(self, model: str, prompt: int, completion: int) -> float | None:
        if model not in self.config.prices:
            return None
        per_input, per_output = self.config.prices[model]
        return (prompt * per_input + completion * per_output) / 1_000_000

    def allows_request(self) -> bool:
        config, usage = self.config, self.usage
        if self.out_of_time():
            return False
        if usage.requests >= config.max_requests:
            self.exhausted = f"max_requests ({config.max_requests}) reached"
        elif usage.prompt_tokens + usage.completion_tokens >= config.max_tokens:
            self.exhausted = f"max_tokens ({config.max_tokens}) reached"
        elif config.max_cost is not None and (usage.cost or 0.0) >= config.max_cost:
            self.exhausted = f"max_cost ({config.max_cost:g}) reached"
        else:
            return True
        return False

    def record(self, model: str, reply: Reply | None) -> None:
        self.usage.requests += 1
        if reply is None:
            self.usage.failed_requests += 1
            return
        self.usage.prompt_tokens += reply.prompt_tokens
        self.usage.completion_tokens += reply.completion_tokens
        cost = self.price(model, reply.prompt_tokens, reply.completion_tokens)
        if cost is not None:
            self.usage.cost = round((self.usage.cost or 0.0) + cost, 6)


def _slug(file: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", file.removesuffix(".py")).strip("_")


class _Log:
    """`.audit/escalation/`: every request, answer and verdict of the run, in files."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / ".audit" / "escalation"
        if self.folder.exists():
            shutil.rmtree(self.folder)
        audit_folder(root, "escalation")

    def write(self, name: str, text: str) -> str:
        path = self.folder / name
        path.write_text(text, encoding="utf-8")
        return relative(path, self.root)


class Escalation:
    def __init__(self, run: RunContext, report: Report):
        self.run = run
        self.project = run.project
        self.config = run.config
        self.settings = run.config.escalation
        self.report = report
        self.log = _Log(run.project.root)
        self.usage = ModelUsage()
        self.budget = Budget(self.settings, self.usage)
        self.errors: list[str] = []
        self.candidates: list[Candidate] = []
        self.seen: set[str] = set()
        self.repeats = 0

    def import_name(self, file: str) -> str:
        return self.project.module_name(self.project.root / file)

    def _intake(
        self, module: WeakModule, proposals: list[TestProposal], origin: Origin, round_: int
    ) -> list[Candidate]:
        made = []
        for number, proposal in enumerate(proposals, start=1):
            if _seen_before(proposal.code, self.seen):
                self.repeats += 1
                continue
            made.append(
                Candidate(
                    id=f"{module.file}#{round_}.{number}",
                    module=module.file,
                    origin=origin,
                    round=round_,
                    name=re.sub(r"\W+", "_", proposal.name).strip("_") or f"test_{number}",
                    code=proposal.code,
                    targets=sorted(set(proposal.targets)),
                    rationale=proposal.rationale,
                    stage="generated",
                )
            )
        self.candidates.extend(made)
        return made

    def _ask(self, model: ChatModel, prompt: prompts.Prompt, name: str) -> Reply | None:
        if not self.budget.allows_request():
            return None
        self.log.write(f"{name}.request.md", prompt.as_markdown())
        try:
            reply = model.ask(prompt)
        except ModelError as exc:
            self.budget.record(model.model, None)
            self.errors.append(f"{name}: {exc}")
            self.log.write(f"{name}.error.txt", f"{exc}\n")
            return None
        self.budget.record(model.model, reply)
        self.log.write(f"{name}.response.txt", reply.text)
        if not reply.proposals:
            self.errors.extend(f"{name}: {note}" for note in reply.notes)
        return reply

    def _prove(self, candidates: list[Candidate], modules: list[WeakModule]) -> None:
        if candidates and not self.budget.out_of_time():
            targets = {t for m in modules for t in m.targets}
            unchecked = {u for m in modules for u in m.unchecked}
            proof = prove(self.run, self.report.baseline, candidates, targets, unchecked)
            self.errors.extend(proof.problems)

    def run_model(
        self, modules: list[WeakModule], requests: dict[str, prompts.Prompt], key: str
    ) -> None:
        settings = self.settings
        model = ChatModel.configured(settings, settings.deep_model, key)
        try:
            asked: dict[str, list[Candidate]] = {}
            for module in modules:
                reply = self._ask(model, requests[module.file], _slug(module.file))
                if reply is not None:
                    asked[module.file] = self._intake(module, reply.proposals, "model", 0)
            self._prove([c for batch in asked.values() for c in batch], modules)
            for round_ in range(1, settings.repair_rounds + 1):
                repaired = []
                for module in modules:
                    rejected = [
                        c
                        for c in asked.get(module.file, [])
                        if c.stage in ("generated", "parsed", "clean")
                    ]
                    if not rejected:
                        continue
                    name = f"{_slug(module.file)}.repair{round_}"
                    reply = self._ask(model, prompts.repair(module, rejected), name)
                    if reply is not None:
                        asked[module.file] = self._intake(module, reply.proposals, "repair", round_)
                        repaired += asked[module.file]
                self._prove(repaired, modules)
        finally:
            model.close()

    def run_offline(self, modules: list[WeakModule]) -> None:
        witnesses = {
            w.mutant_id: w
            for w in (self.report.probes.witnesses if self.report.probes else [])
            if w.test
        }
        for module in modules:
            proposals = [
                TestProposal(
                    name=re.findall(r"def (test_\w+)", witnesses[m].test)[0],
                    code=witnesses[m].test,
                    targets=[m],
                    rationale=f"characterization test from the probes' witness for {m}",
                )
                for m in module.survivors
                if m in witnesses
            ]
            self._intake(module, proposals, "witness", 0)
        if modules and not self.candidates:
            why = "the probes did not run" if self.report.probes is None else "none was found"
            self.errors.append(f"offline: no witness test to try ({why})")
        self._prove(list(self.candidates), modules)


def run_escalation(run: RunContext, report: Report) -> EscalationSection:
    """No request is sent and no candidate proved once the run's time budget is used up."""
    project, config = run.project, run.config
    started = time.perf_counter()
    settings = config.escalation
    assert report.mutation is not None
    escalation = Escalation(run, report)
    escalation.budget.deadline = run.deadline
    weak = weak_modules(
        report.baseline, report.smells, report.mutation, report.probes, settings.weak_below
    )
    chosen = weak[: settings.max_modules]
    if len(weak) > len(chosen):
        escalation.budget.exhausted = f"max_modules ({settings.max_modules}) reached"
    key = api_key(settings)
    asks = {m.file: prompts.harden(report, m, escalation.import_name(m.file)) for m in chosen}
    requests = {
        file: escalation.log.write(f"{_slug(file)}.request.md", prompt.as_markdown())
        for file, prompt in asks.items()
    }
    if key:
        escalation.run_model(chosen, asks, key)
    else:
        escalation.run_offline(chosen)
    minimize(escalation.candidates)
    modules = _finish(escalation, weak, chosen, requests)
    candidates = sorted(escalation.candidates, key=lambda c: (c.module, c.round, _number(c.id)))
    escalation.log.write(
        "candidates.json", json.dumps([c.model_dump(mode="json") for c in candidates], indent=2)
    )
    escalation.log.write("usage.json", escalation.usage.model_dump_json(indent=2))
    hardened = sorted(path for m in modules for path in m.hardened_files)
    return EscalationSection(
        mode="model" if key else "offline",
        model=settings.deep_model if key else "",
        modules=modules,
        candidates=candidates,
        repeats=escalation.repeats,
        funnel={
            stage: sum(STAGES.index(c.stage) >= i for c in candidates)
            for i, stage in enumerate(STAGES)
        },
        usage=escalation.usage,
        errors=escalation.errors,
        budget_exhausted=escalation.budget.exhausted,
        hardened_files=hardened,
        applied_files=_apply(project, hardened) if settings.apply else [],
        log_dir=project.relative(escalation.log.folder),
        duration=round(time.perf_counter() - started, 3),
    )


def _seen_before(code: str, seen: set[str]) -> bool:
    """Whether the same code (as Python, whatever its layout) was proposed already; the
    first time, it is remembered."""
    try:
        key = ast.dump(ast.parse(code))
    except (SyntaxError, ValueError):
        key = code.strip()
    if key in seen:
        return True
    seen.add(key)
    return False


def _number(candidate_id: str) -> tuple[int, ...]:
    return tuple(int(part) for part in candidate_id.rsplit("#", 1)[1].split("."))


def _finish(
    escalation: Escalation,
    weak: list[WeakModule],
    chosen: list[WeakModule],
    requests: dict[str, str],
) -> list[EscalatedModule]:
    """Write each module's hardened file and measure the module again with it."""
    report, config = escalation.report, escalation.config
    assert report.mutation is not None
    by_module: dict[str, list[Candidate]] = {}
    for candidate in sorted(escalation.candidates, key=lambda c: (c.round, _number(c.id))):
        if candidate.accepted:
            candidate.filed_under = _filed_under(candidate, report.mutation.mutants)
            by_module.setdefault(candidate.filed_under, []).append(candidate)
    folder = escalation.project.root / config.escalation.hardened_dir
    slugs = {module: _slug(module) for module in by_module}
    files = settle(escalation.run, by_module, slugs) if by_module else []
    if folder.exists():
        shutil.rmtree(folder)
    after: dict[str, Mutant] = {}
    if files:
        folder.mkdir(parents=True)
        for file in files:
            (folder / file.name).write_text(file.text, encoding="utf-8")
        targets = {t for m in chosen for t in m.targets}
        written = {file.name: file.text for file in files}
        final = measure_files(escalation.run, report.baseline, written, targets)
        after = final.mutants
        escalation.errors.extend(final.problems)
    modules = []
    for module in weak:
        mine = [m for m in report.mutation.mutants if m.file == module.file]
        now = [after.get(m.id, m) for m in mine]
        newly = sorted(
            m.id
            for m, n in zip(mine, now, strict=True)
            if not scoring.is_detected(m) and scoring.is_detected(n)
        )
        hardened = [f for f in files if f.module == module.file]
        measured = bool(after) and module in chosen
        modules.append(
            EscalatedModule(
                file=module.file,
                reasons=module.reasons,
                survivors=len(module.survivors),
                escalated=module in chosen,
                request=requests.get(module.file, ""),
                before=scoring.scores(mine),
                after=scoring.scores(now) if measured else None,
                newly_killed=newly,
                hardened_files=[escalation.project.relative(folder / f.name) for f in hardened],
                accepted=sum(len(f.candidates) for f in hardened),
            )
        )
    return modules


def _filed_under(candidate: Candidate, mutants: list[Mutant]) -> str:
    """The module whose mutants it kills (or catches by a check) most: the one it was
    asked for on a tie, or when it kills none (it covers new code)."""
    files = {m.id: m.file for m in mutants}
    kills = Counter(files[k] for k in candidate.kills + candidate.checked_kills if k in files)
    if not kills:
        return candidate.module
    most = max(kills.values())
    if kills.get(candidate.module) == most:
        return candidate.module
    return min(file for file, count in kills.items() if count == most)


def _apply(project: Project, hardened: list[str]) -> list[str]:
    """`--apply`: copy the hardened files into the suite's folder, never over a file."""
    folder = suite_folder(project)
    applied = []
    for name in hardened:
        target = folder / Path(name).name
        if target.exists():
            continue
        shutil.copyfile(project.root / name, target)
        applied.append(project.relative(target))
    return applied
