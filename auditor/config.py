"""`[tool.audit]` from pyproject.toml, overridden by command-line flags.

The model forbids unknown keys, so a typo is an error naming the key rather than a
setting silently ignored.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from auditor.errors import ConfigError
from auditor.report import Severity

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


def _comma_separated(value: object) -> object:
    """`--mutators a,b`, `--mutators a --mutators b` and `["a", "b"]` mean the same."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)):
        return [part.strip() for item in value for part in str(item).split(",") if part.strip()]
    return value


def _severity_limits(value: object) -> object:
    """`high=0` pairs (the flag, repeatable) or a table (pyproject.toml)."""
    if not isinstance(value, (list, tuple)):
        return value
    limits = {}
    for pair in value:
        severity, _, number = str(pair).partition("=")
        if severity not in ("high", "medium", "low") or not number.strip().isdigit():
            raise ValueError(f"expects SEVERITY=N with high, medium or low; got '{pair}'")
        limits[severity] = int(number)
    return limits


def shard_parts(text: str) -> tuple[int, int]:
    """`K/N` as (K, N); raises ValueError unless 1 <= K <= N."""
    match = re.fullmatch(r"\s*(\d+)/(\d+)\s*", text)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ValueError(f"expects K/N with 1 <= K <= N, e.g. 2/8; got '{text}'")
    return int(match[1]), int(match[2])


def _shard(value: object) -> object:
    if isinstance(value, str):
        index, total = shard_parts(value)
        return f"{index}/{total}"
    return value


@dataclass(frozen=True)
class Flag:
    """How a key is set from `audit run`'s command line. The key's type, default and
    validation stay in the model, so a flag and its pyproject.toml key parse alike."""

    name: str
    help: str
    metavar: str | None = None
    short: str | None = None
    path: bool = False
    """A path the user typed: relative to the current folder, not the project root."""
    default_text: str | None = None
    """The default as help shows it, when the value itself says little (`jobs = 0`)."""
    hidden: bool = False


@dataclass(frozen=True)
class FlaggedKey:
    key: str
    """Dotted: `test_timeout`, `gate.min_line_coverage`."""
    field: FieldInfo
    flag: Flag

    @property
    def parameter(self) -> str:
        """The key as a Python name, for the command line parser."""
        return self.key.replace(".", "__")


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, use_attribute_docstrings=True
    )


class GeneratorGate(_Strict):
    """Thresholds on one generator's tests (its scorecard)."""

    min_assertion_kill_share: float | None = Field(default=None, ge=0, le=100)
    max_smells_per_test: float | None = Field(default=None, ge=0)
    min_score_alone: float | None = Field(default=None, ge=0, le=100)
    """Needs `--all-killers`."""


class GateConfig(_Strict):
    """Thresholds; an unset threshold is not checked."""

    min_line_coverage: Annotated[
        float | None,
        Flag("--min-line-coverage", "Gate: minimum line coverage (%).", metavar="PERCENT"),
    ] = Field(default=None, ge=0, le=100)
    min_branch_coverage: Annotated[
        float | None,
        Flag("--min-branch-coverage", "Gate: minimum branch coverage (%).", metavar="PERCENT"),
    ] = Field(default=None, ge=0, le=100)
    max_failing_tests: Annotated[
        int | None, Flag("--max-failing-tests", "Gate: most tests allowed to be red.")
    ] = Field(default=None, ge=0)
    max_collection_errors: int = Field(default=0, ge=0)
    """Test files pytest cannot collect (a syntax error, a failing import): the rest of
    the suite is audited, and the gate fails unless this allows them."""
    max_smells: Annotated[
        dict[Severity, int],
        BeforeValidator(_severity_limits),
        Flag("--max-smells", "Gate: most smells of a severity, e.g. high=0.", metavar="SEVERITY=N"),
    ] = Field(default_factory=dict)
    gate_on: Annotated[
        Literal["targeted", "all"],
        Flag("--gate-on", "Gate mutation thresholds on the modules the tests import or all code."),
    ] = "targeted"
    """Which mutants the mutation thresholds count: those of the modules the test files
    import (`targeted`), or all of the code under test."""
    min_mutation_score: Annotated[
        float | None,
        Flag("--min-mutation-score", "Gate: minimum mutation score (%).", metavar="PERCENT"),
    ] = Field(default=None, ge=0, le=100)
    min_covered_score: Annotated[
        float | None,
        Flag("--min-covered-score", "Gate: minimum score on covered code (%).", metavar="PERCENT"),
    ] = Field(default=None, ge=0, le=100)
    min_assertion_kill_share: Annotated[
        float | None,
        Flag(
            "--min-assertion-kill-share",
            "Gate: minimum share (%) of detected mutants a failing check caught.",
            metavar="PERCENT",
        ),
    ] = Field(default=None, ge=0, le=100)
    """Of the detected mutants, the share (%) a failing check caught rather than an
    exception, a crash or a timeout: how much of the score is evidence of an oracle."""
    max_surviving: Annotated[
        int | None, Flag("--max-surviving", "Gate: most surviving mutants allowed.")
    ] = Field(default=None, ge=0)
    max_pseudo_tested: Annotated[
        int | None, Flag("--max-pseudo-tested", "Gate: most pseudo-tested functions.")
    ] = Field(default=None, ge=0)
    max_accepted_percent: Annotated[
        float | None,
        Flag(
            "--max-accepted-percent",
            "Gate: most accepted survivors (% of mutants).",
            metavar="PERCENT",
        ),
    ] = Field(default=None, ge=0, le=100)
    """Accepted survivors (`# audit: accept[...]`, `.audit/accepted.toml`), in percent of
    the mutants that count plus the accepted."""
    generators: dict[str, GeneratorGate] = Field(default_factory=dict)
    """Thresholds per generator (`[tool.audit.gate.generators.fast]`)."""
    max_unhandled_crashes: Annotated[
        int | None,
        Flag("--max-unhandled-crashes", "Gate: most unhandled crashes the probes may find."),
    ] = Field(default=None, ge=0)
    """Unhandled crashes the probes may find (inputs on which code raises by accident)."""
    exclude_likely_equivalent: bool = False
    """Leave survivors the probes found no witness for out of the scores the gate checks
    (they are always shown)."""
    baseline_report: Annotated[
        str | None,
        Flag(
            "--baseline",
            "Ratchet: fail on regressions against this previous JSON report.",
            metavar="REPORT",
            path=True,
        ),
    ] = Field(default=None, min_length=1)
    """The ratchet: a previous JSON report (`--baseline`); regressions fail the gate even
    when every absolute threshold holds."""
    ratchet_tolerance: float = Field(default=0.5, ge=0)
    """Score points a figure may drop before the ratchet fails."""
    ratchet_smells: list[Severity] = Field(default_factory=lambda: ["high"])
    """Severities of which no new smell may appear."""


class OutputsConfig(_Strict):
    """Extra report files, each rendered from the JSON report; paths are relative to the
    project root (config) or the current folder (flags)."""

    html: str | None = Field(default=None, min_length=1)
    """Write the HTML report for QA leads."""
    markdown: str | None = Field(default=None, min_length=1)
    """Write a Markdown summary (PR comment, $GITHUB_STEP_SUMMARY)."""
    sarif: str | None = Field(default=None, min_length=1)
    """Write SARIF 2.1.0 for code scanning."""
    stryker: str | None = Field(default=None, min_length=1)
    """Write Stryker mutation-testing-report-schema v2 JSON."""
    junit: str | None = Field(default=None, min_length=1)
    """Write JUnit XML, one testcase per gate condition."""
    feedback: str | None = Field(default=None, min_length=1)
    """Write prompt-ready feedback for the model that wrote the tests."""
    pr_comment: str | None = Field(default=None, min_length=1)
    """Write the body of a sticky pull-request comment (Markdown, hidden marker)."""
    badge: str | None = Field(default=None, min_length=1)
    """Write a shields.io endpoint badge (JSON)."""
    sonarqube: str | None = Field(default=None, min_length=1)
    """Write SonarQube generic issue import JSON."""


class EscalationConfig(_Strict):
    """Hardening weak modules with the deep model (`--escalate`). The API key is read from
    the environment variable named by `api_key_env`, never from a file."""

    enabled: Annotated[
        bool,
        Flag(
            "--escalate",
            "Harden weak modules: the deep model (API key set) or witness tests (offline).",
        ),
    ] = False
    base_url: Annotated[
        str | None,
        Flag("--base-url", "OpenAI-compatible endpoint, e.g. vLLM's /v1.", metavar="URL"),
    ] = Field(default=None, min_length=1)
    """An OpenAI-compatible endpoint (`http://127.0.0.1:8000/v1` for vLLM or Ollama);
    None means the client's default (api.openai.com, or `OPENAI_BASE_URL`)."""
    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1)
    """The environment variable that holds the API key."""
    api: Literal["chat", "responses"] = "chat"
    """`chat` (/v1/chat/completions, what every compatible server has) or `responses`."""
    deep_model: Annotated[
        str, Flag("--deep-model", "Model that writes the hardening tests.", metavar="NAME")
    ] = Field(default="gpt-5.1-codex", min_length=1)
    fast_model: str = Field(default="gpt-5.1-codex-mini", min_length=1)
    """The model `audit generate` asks for a first suite."""
    request_timeout: Duration = Field(default=120.0, gt=0)
    """How long one request to the model may take."""
    max_retries: int = Field(default=2, ge=0)
    """Retries of a failed request (the openai client's back-off)."""
    weak_below: float = Field(default=70.0, ge=0, le=100)
    """A module whose score on covered code is below this is weak."""
    max_modules: int = Field(default=5, ge=0)
    """Weak modules escalated per run, weakest first."""
    max_requests: int = Field(default=20, ge=0)
    """Requests to the model over the whole run."""
    max_tokens: int = Field(default=200_000, ge=0)
    """Prompt + completion tokens over the whole run; no request starts beyond it."""
    max_cost: float | None = Field(default=None, ge=0)
    """Most money (in the `prices` unit) the run may spend; needs `prices`."""
    prices: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Model -> (input, output) price per million tokens, for the cost and `max_cost`."""
    repair_rounds: int = Field(default=1, ge=0)
    """Rounds that send the model its candidates' failures and take corrected tests."""
    candidate_runs: int = Field(default=3, ge=1)
    """Runs of the suite with the candidates, each in another order, that they must pass."""
    candidate_timeout: Duration = Field(default=5.0, gt=0)
    """Seconds a candidate test may run on the original code."""
    hardened_dir: Annotated[
        str, Flag("--hardened-dir", "Where accepted tests go.", metavar="DIR", path=True)
    ] = Field(default=".audit/hardened", min_length=1)
    apply: Annotated[
        bool, Flag("--apply", "Copy accepted tests into the suite (implies --escalate).")
    ] = False
    """Also copy the hardened tests into the suite's folder (never overwriting a file)."""
    require: Annotated[
        bool,
        Flag(
            "--require-escalation",
            "Gate: fail unless escalation accepted at least one test (implies --escalate).",
        ),
    ] = False
    """Fail the run (exit 1) when escalation was asked for and accepted no test."""


class AuditConfig(_Strict):
    """Everything a run needs to know besides the paths on the command line."""

    src: Annotated[
        list[str], Flag("--src", "Package name or path of the code under test.", metavar="PATH")
    ] = Field(default_factory=list)
    tests: list[str] = Field(default_factory=list)
    """Test folders or files to audit when the command line names none (default: `tests/`)."""
    do_not_mutate: list[str] = Field(default_factory=list)
    """Globs of files of the code under test (relative to the project root) that get no
    mutants; they still count for coverage and are still probed."""
    report_json: str = Field(default=".audit/report.json", min_length=1)
    """Where the JSON report goes, relative to the project root (`--json` sets it per run)."""
    test_timeout: Annotated[
        Duration, Flag("--timeout", "Per-test timeout.", metavar="DURATION")
    ] = Field(default=10.0, gt=0)
    memory_limit_mb: int = Field(default=4096, ge=64)
    """Address-space limit of each child that runs the code under test."""
    allow_write: Annotated[
        list[str],
        Flag("--allow-write", "Extra folder tests may write to.", metavar="DIR", path=True),
    ] = Field(default_factory=list)
    sandbox: Annotated[
        Literal["auto", "os", "guard", "none"],
        Flag(
            "--sandbox",
            "Containment: OS namespaces + guard (os), guard only, none; auto: os if available.",
        ),
    ] = "auto"
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
    """Names of the suite's own checking helpers (`assert_valid_cart`): a call to one
    counts as an assertion for the smell rules."""
    disable_smells: Annotated[
        list[str], Flag("--disable-smell", "Skip a smell rule.", metavar="CODE")
    ] = Field(default_factory=list)
    mutation: Annotated[bool, Flag("--mutation", "Run mutation testing.")] = True
    type_check: Annotated[
        Literal["auto", "off", "mypy", "pyright", "ty"],
        Flag(
            "--type-check", "Drop mutants the project's type checker rejects (auto: if configured)."
        ),
    ] = "auto"
    """Type-check function-body mutants before they run and drop those the checker
    rejects; `auto` uses the fastest checker the project configures that is installed
    (ty, then mypy, then pyright)."""
    mutation_from: Annotated[
        Literal["run", "mutmut"],
        Flag("--mutation-from", "Take the verdicts of a finished mutmut run.", hidden=True),
    ] = "run"
    """`mutmut`: take the verdicts of a finished mutmut 3 run (its `mutants/` folder)
    instead of running mutants (`audit import mutmut`)."""
    probes: Annotated[bool, Flag("--probes", "Run the property-based probes.")] = True
    """Run the property-based probes (needs the baseline; witnesses need mutation)."""
    probe_examples: Annotated[int, Flag("--probe-examples", "Inputs per probe.", metavar="N")] = (
        Field(default=100, ge=1)
    )
    """Inputs per probe search; a witness search replays three times as many per function."""
    probe_time_budget: Duration = Field(default=10.0, gt=0)
    """Seconds for all probes of one function, or one survivor's witness search."""
    probe_allow: list[str] = Field(default_factory=list)
    """Functions (`qualname`, `file::qualname`, or a file) to probe even though they look
    like they touch files, the network, processes or clocks."""
    jobs: Annotated[
        int,
        Flag("--jobs", "Mutation workers.", metavar="N", short="-j", default_text="one per core"),
    ] = Field(default=0, ge=0)
    """Mutation workers; 0 means one per core."""
    mutators: Annotated[
        list[str] | None,
        BeforeValidator(_comma_separated),
        Flag(
            "--mutators",
            "Only these mutator families, comma-separated.",
            metavar="A,B",
            default_text="all",
        ),
    ] = Field(default=None, min_length=1)
    """Mutator families to use; None means all."""
    disable_mutators: Annotated[
        list[str],
        BeforeValidator(_comma_separated),
        Flag("--disable-mutator", "Skip a mutator family.", metavar="FAMILY"),
    ] = Field(default_factory=list)
    module_level: Annotated[
        bool,
        Flag("--module-level", "Mutate import-time code too: constants, class bodies, defaults."),
    ] = True
    """Also mutate code that runs at import time (module constants, class bodies,
    default arguments): slower, through module re-execution."""
    mutate_data: Annotated[
        Literal["sample", "all"],
        Flag("--mutate-data", "Module-level data tables: mutate a sample of their entries or all."),
    ] = "sample"
    """Module-level data tables (`engine/data_tables.py`): mutate a sample of their
    entries, or every entry."""
    copy_path: Annotated[
        bool,
        Flag("--copy-path", "Run on a project copy the mutants the subprocess hook cannot reach."),
    ] = True
    """Run mutants that Python subprocesses of tests reach on a copy of the project (and
    give such survivors a second chance there). Off: they are reported as measured in
    process, which is faster and can miss kills by CLI-style tests."""
    mutant_timeout_factor: float = Field(default=3.0, gt=0)
    """A mutant's test times out once it has used this many times its time on the
    original code in CPU seconds, plus `mutant_timeout_constant` (wall time is only the
    backstop for a test that waits)."""
    mutant_timeout_constant: Duration = Field(default=0.2, ge=0)
    """CPU seconds added to each test's scaled time before a mutant counts as a timeout."""
    executor: Annotated[
        Literal["local", "dask"], Flag("--executor", "Run mutants here or on a Dask cluster.")
    ] = "local"
    """Where mutants run: runner processes here, or a Dask distributed cluster."""
    scheduler: Annotated[
        str | None, Flag("--scheduler", "Dask scheduler, e.g. tcp://host:8786.", metavar="ADDRESS")
    ] = Field(default=None, min_length=1)
    """The Dask scheduler's address (`tcp://host:8786`) for `executor = "dask"`."""
    diff: Annotated[
        str | None, Flag("--diff", "Only mutate lines changed since REF.", metavar="REF")
    ] = Field(default=None, min_length=1)
    """Only mutate lines changed since this git ref (uncommitted changes included)."""
    shard: Annotated[
        str | None,
        BeforeValidator(_shard),
        Flag("--shard", "Run the K-th of N deterministic mutant slices.", metavar="K/N"),
    ] = None
    """`K/N`: run only the K-th of N deterministic slices of the mutants."""
    sample: Annotated[
        int | None, Flag("--sample", "Run a stratified sample of N mutants.", metavar="N")
    ] = Field(default=None, ge=1)
    """Run a stratified random sample of this many mutants and estimate the scores."""
    sample_seed: Annotated[int, Flag("--sample-seed", "Seed of the sample.", metavar="N")] = 0
    time_budget: Annotated[
        Duration | None,
        Flag(
            "--time-budget",
            "Stop after e.g. 90s, 5m, 1h; the report says what was cut.",
            metavar="DURATION",
        ),
    ] = Field(default=None, gt=0)
    """How long the stages after the baseline may take together (mutation, probes,
    escalation); mutants run in a stratified random order, so a cut run still samples
    every file. The report names the stages it cut (`cut_by_budget`)."""
    verify_sample: Annotated[
        int, Flag("--verify-sample", "Re-check N mutants with fresh runs.", metavar="N")
    ] = Field(default=0, ge=0)
    """Re-check this many random mutants with a fresh run on a materialized copy."""
    all_killers: Annotated[
        bool,
        Flag(
            "--all-killers",
            "Run every covering test of a killed mutant: unique kills, minimal test subset.",
        ),
    ] = False
    """Run every covering test of a killed mutant, not only up to the first that fails:
    every test's kills are then known (unique kills, the tests that carry the suite)."""
    escalation: EscalationConfig = Field(default_factory=EscalationConfig)
    gate: GateConfig = Field(default_factory=GateConfig)
    outputs: OutputsConfig = Field(default_factory=OutputsConfig)

    @property
    def workers(self) -> int:
        """Processes a stage may run at once: `jobs`, or one per core when it is 0."""
        return self.jobs or os.cpu_count() or 1


def flagged_keys(model: type[_Strict] | None = None, prefix: str = "") -> Iterator[FlaggedKey]:
    """Every key `audit run` takes a flag for, in declaration order, nested tables too."""
    for name, field in (model or AuditConfig).model_fields.items():
        flag = next((item for item in field.metadata if isinstance(item, Flag)), None)
        if flag is not None:
            yield FlaggedKey(prefix + name, field, flag)
        elif isinstance(field.annotation, type) and issubclass(field.annotation, _Strict):
            yield from flagged_keys(field.annotation, f"{prefix}{name}.")


def overrides_from_flags(values: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """The keys set on the command line, nested as in pyproject.toml. `values` maps each
    flagged key's `parameter` to what its flag gave (None or () when not given)."""
    overrides: dict[str, Any] = {}
    for flagged in flagged_keys():
        value = values.get(flagged.parameter)
        if value is None or value == ():
            continue
        if flagged.flag.path:
            if not all(_as_tuple(value)):
                raise ConfigError(f"command line: {flagged.flag.name} names no path (it is empty)")
            paths = [str((cwd / item).resolve()) for item in _as_tuple(value)]
            value = paths if isinstance(value, tuple) else paths[0]
        elif isinstance(value, tuple):
            value = list(value)
        *tables, name = flagged.key.split(".")
        target = overrides
        for table in tables:
            target = target.setdefault(table, {})
        target[name] = value
    escalation = overrides.get("escalation", {})
    if escalation.get("apply") or escalation.get("require"):
        escalation["enabled"] = True
    return overrides


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return value if isinstance(value, tuple) else (value,)


def _describe(error: ValidationError, origin: str) -> str:
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"][:2] if isinstance(part, str))
    if first["type"] == "extra_forbidden":
        return f"{origin}: unknown key '{key}'"
    message = first["msg"].removeprefix("Value error, ")
    if origin == "command line":
        flag = next((item.flag.name for item in flagged_keys() if item.key == key), None)
        if flag:
            return f"{origin}: bad value for {flag}: {message}"
    return f"{origin}: bad value for '{key}': {message}"


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
