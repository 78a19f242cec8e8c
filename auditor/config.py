"""`[tool.audit]` from pyproject.toml, overridden by command-line flags.

The model forbids unknown keys, so a typo is an error naming the key rather than a
setting silently ignored.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from auditor.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def seconds(value: object) -> object:
    """A duration in seconds, from a number or from text such as `90`, `90s`, `5m`, `1.5h`
    (the same for a flag and for its key in pyproject.toml)."""
    if not isinstance(value, str):
        return value
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", value)
    if not match:
        raise ValueError(f"expects a duration such as 90s, 5m or 1h; got '{value}'")
    return float(match[1]) * {"": 1, "s": 1, "m": 60, "h": 3600}[match[2]]


Duration = Annotated[float, BeforeValidator(seconds)]
"""Seconds; written as a number or as `90s`, `5m`, `1h`."""

Severity = Literal["high", "medium", "low"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class GeneratorGate(_Strict):
    """Thresholds on one generator's tests (its scorecard)."""

    min_assertion_kill_share: float | None = Field(default=None, ge=0, le=100)
    max_smells_per_test: float | None = Field(default=None, ge=0)
    min_score_alone: float | None = Field(default=None, ge=0, le=100)
    """Needs `--all-killers`."""


class GateConfig(_Strict):
    """Thresholds; an unset threshold is not checked."""

    min_line_coverage: float | None = Field(default=None, ge=0, le=100)
    min_branch_coverage: float | None = Field(default=None, ge=0, le=100)
    max_failing_tests: int | None = Field(default=None, ge=0)
    max_collection_errors: int = Field(default=0, ge=0)
    """Test files pytest cannot collect (a syntax error, a failing import): the rest of
    the suite is audited, and the gate fails unless this allows them."""
    max_smells: dict[Severity, int] = Field(default_factory=dict)
    gate_on: Literal["targeted", "all"] = "targeted"
    """Which mutants the mutation thresholds count: those of the modules the test files
    import (`targeted`), or all of the code under test."""
    min_mutation_score: float | None = Field(default=None, ge=0, le=100)
    min_covered_score: float | None = Field(default=None, ge=0, le=100)
    min_assertion_kill_share: float | None = Field(default=None, ge=0, le=100)
    """Of the detected mutants, the share (%) a failing check caught rather than an
    exception, a crash or a timeout: how much of the score is evidence of an oracle."""
    max_surviving: int | None = Field(default=None, ge=0)
    max_pseudo_tested: int | None = Field(default=None, ge=0)
    max_accepted_percent: float | None = Field(default=None, ge=0, le=100)
    """Accepted survivors (`# audit: accept[...]`, `.audit/accepted.toml`), in percent of
    the mutants that count plus the accepted."""
    generators: dict[str, GeneratorGate] = Field(default_factory=dict)
    """Thresholds per generator (`[tool.audit.gate.generators.fast]`)."""
    max_unhandled_crashes: int | None = Field(default=None, ge=0)
    """Unhandled crashes the probes may find (inputs on which code raises by accident)."""
    exclude_likely_equivalent: bool = False
    """Leave survivors the probes found no witness for out of the scores the gate checks
    (they are always shown)."""
    baseline_report: str | None = None
    """The ratchet: a previous JSON report (`--baseline`); regressions fail the gate even
    when every absolute threshold holds."""
    ratchet_tolerance: float = Field(default=0.5, ge=0)
    """Score points a figure may drop before the ratchet fails."""
    ratchet_smells: list[Severity] = Field(default_factory=lambda: ["high"])
    """Severities of which no new smell may appear."""


class OutputsConfig(_Strict):
    """Extra report files, each rendered from the JSON report; paths are relative to the
    project root (config) or the current folder (flags)."""

    html: str | None = None
    markdown: str | None = None
    sarif: str | None = None
    stryker: str | None = None
    junit: str | None = None
    feedback: str | None = None
    pr_comment: str | None = None
    badge: str | None = None
    sonarqube: str | None = None


class EscalationConfig(_Strict):
    """Hardening weak modules with the deep model (`--escalate`). The API key is read from
    the environment variable named by `api_key_env`, never from a file."""

    enabled: bool = False
    base_url: str | None = None
    """An OpenAI-compatible endpoint (`http://127.0.0.1:8000/v1` for vLLM or Ollama);
    None means the client's default (api.openai.com, or `OPENAI_BASE_URL`)."""
    api_key_env: str = "OPENAI_API_KEY"
    api: Literal["chat", "responses"] = "chat"
    """`chat` (/v1/chat/completions, what every compatible server has) or `responses`."""
    deep_model: str = "gpt-5.1-codex"
    fast_model: str = "gpt-5.1-codex-mini"
    request_timeout: Duration = Field(default=120.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    weak_below: float = Field(default=70.0, ge=0, le=100)
    """A module whose score on covered code is below this is weak."""
    max_modules: int = Field(default=5, ge=0)
    max_requests: int = Field(default=20, ge=0)
    max_tokens: int = Field(default=200_000, ge=0)
    """Prompt + completion tokens over the whole run; no request starts beyond it."""
    max_cost: float | None = Field(default=None, ge=0)
    prices: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Model -> (input, output) price per million tokens, for the cost and `max_cost`."""
    repair_rounds: int = Field(default=1, ge=0)
    """Rounds that send the model its candidates' failures and take corrected tests."""
    candidate_runs: int = Field(default=3, ge=1)
    """Runs of the suite with the candidates, each in another order, that they must pass."""
    candidate_timeout: Duration = Field(default=5.0, gt=0)
    """Seconds a candidate test may run on the original code."""
    hardened_dir: str = ".audit/hardened"
    apply: bool = False
    """Also copy the hardened tests into the suite's folder (never overwriting a file)."""
    require: bool = False
    """Fail the run (exit 1) when escalation was asked for and accepted no test."""


class AuditConfig(_Strict):
    """Everything a run needs to know besides the paths on the command line."""

    src: list[str] = Field(default_factory=list)
    tests: list[str] = Field(default_factory=list)
    do_not_mutate: list[str] = Field(default_factory=list)
    """Globs of files of the code under test (relative to the project root) that get no
    mutants; they still count for coverage and are still probed."""
    report_json: str = ".audit/report.json"
    test_timeout: Duration = Field(default=10.0, gt=0)
    memory_limit_mb: int = Field(default=4096, ge=64)
    allow_write: list[str] = Field(default_factory=list)
    sandbox: Literal["auto", "os", "guard", "none"] = "auto"
    """Containment of untrusted code: `os` (namespaces: read-only files, no network, plus
    the guard), `guard` (the audit hook only), `none`; `auto` is `os` where available."""
    flaky_reruns: int = Field(default=1, ge=0)
    """Reruns of the suite in other orders (the first reversed, then seeded shuffles); a
    test that passed and then did not is flaky or order-dependent and never counts as
    killing a mutant."""
    generators: dict[str, list[str]] = Field(default_factory=dict)
    """Generator name -> globs of the test files it wrote (`fast = ["tests/gen/**"]`);
    before a file's `# generated-by:` header and its git trailers."""
    assertion_helpers: list[str] = Field(default_factory=list)
    disable_smells: list[str] = Field(default_factory=list)
    mutation: bool = True
    type_check: Literal["auto", "off", "mypy", "pyright", "ty"] = "auto"
    """Type-check function-body mutants before they run and drop those the checker
    rejects; `auto` uses the checker the project configures, when it is installed."""
    mutation_from: Literal["run", "mutmut"] = "run"
    """`mutmut`: take the verdicts of a finished mutmut 3 run (its `mutants/` folder)
    instead of running mutants (`audit import mutmut`)."""
    probes: bool = True
    """Run the property-based probes (needs the baseline; witnesses need mutation)."""
    probe_examples: int = Field(default=100, ge=1)
    """Inputs per probe search; a witness search replays three times as many per function."""
    probe_time_budget: Duration = Field(default=10.0, gt=0)
    """Seconds for all probes of one function, or one survivor's witness search."""
    probe_allow: list[str] = Field(default_factory=list)
    """Functions (`qualname`, `file::qualname`, or a file) to probe even though they look
    like they touch files, the network, processes or clocks."""
    jobs: int = Field(default=0, ge=0)
    """Mutation workers; 0 means one per core."""
    mutators: list[str] | None = None
    """Mutator families to use; None means all."""
    disable_mutators: list[str] = Field(default_factory=list)
    module_level: bool = True
    """Also mutate code that runs at import time (module constants, class bodies,
    default arguments): slower, through module re-execution."""
    mutate_data: Literal["sample", "all"] = "sample"
    """Module-level data tables (`engine/data_tables.py`): mutate a sample of their
    entries, or every entry."""
    copy_path: bool = True
    """Run mutants that Python subprocesses of tests reach on a copy of the project (and
    give such survivors a second chance there). Off: they are reported as measured in
    process, which is faster and can miss kills by CLI-style tests."""
    mutant_timeout_factor: float = Field(default=3.0, gt=0)
    mutant_timeout_constant: Duration = Field(default=2.0, ge=0)
    executor: Literal["local", "dask"] = "local"
    """Where mutants run: runner processes here, or a Dask distributed cluster."""
    scheduler: str | None = None
    """The Dask scheduler's address (`tcp://host:8786`) for `executor = "dask"`."""
    diff: str | None = None
    """Only mutate lines changed since this git ref (uncommitted changes included)."""
    shard: str | None = None
    """`K/N`: run only the K-th of N deterministic slices of the mutants."""
    sample: int | None = Field(default=None, ge=1)
    """Run a stratified random sample of this many mutants and estimate the scores."""
    sample_seed: int = 0
    time_budget: Duration | None = Field(default=None, gt=0)
    """Seconds the mutation stage may take; mutants run in a stratified random order."""
    verify_sample: int = Field(default=0, ge=0)
    """Re-check this many random mutants with a fresh run on a materialized copy."""
    all_killers: bool = False
    """Run every covering test of a killed mutant, not only up to the first that fails:
    every test's kills are then known (unique kills, the tests that carry the suite)."""
    escalation: EscalationConfig = Field(default_factory=EscalationConfig)
    gate: GateConfig = Field(default_factory=GateConfig)
    outputs: OutputsConfig = Field(default_factory=OutputsConfig)

    @property
    def workers(self) -> int:
        """Processes a stage may run at once: `jobs`, or one per core when it is 0."""
        return self.jobs or os.cpu_count() or 1


def _describe(error: ValidationError, origin: str) -> str:
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"])
    if first["type"] == "extra_forbidden":
        return f"{origin}: unknown key '{key}'"
    return f"{origin}: bad value for '{key}': {first['msg'].removeprefix('Value error, ')}"


def read_pyproject_section(pyproject: Path) -> dict[str, Any]:
    """The `[tool.audit]` table of a pyproject.toml, or {} when it has none."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {pyproject}: {exc}") from None
    section = data.get("tool", {}).get("audit", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{pyproject}: [tool.audit] must be a table")
    return section


def load_config(pyproject: Path | None, overrides: dict[str, Any]) -> AuditConfig:
    """Build the config from the file's table, then apply flags given on the command line.

    `overrides` holds only the flags the user set; gate thresholds go under "gate".
    """
    file_values = read_pyproject_section(pyproject) if pyproject else {}
    origin = f"{pyproject} [tool.audit]" if pyproject else "[tool.audit]"
    try:
        config = AuditConfig.model_validate(file_values)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, origin)) from None
    merged = config.model_dump()
    overrides = dict(overrides)
    gate_overrides = overrides.pop("gate", {})
    escalation_overrides = overrides.pop("escalation", {})
    merged.update(overrides)
    merged["gate"].update(gate_overrides)
    merged["escalation"].update(escalation_overrides)
    try:
        config = AuditConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, "command line")) from None
    if config.escalation.enabled and not config.mutation:
        raise ConfigError("escalation needs mutation testing (drop --no-mutation)")
    return config
