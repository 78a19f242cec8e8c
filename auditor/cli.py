"""The `audit` command: parse arguments, build the config, run the pipeline, render.

`audit TESTS...` is short for `audit run TESTS...`. Every AuditError becomes one line on
stderr and its exit code; nothing prints a traceback unless AUDIT_DEBUG=1.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, NoReturn, Union, get_args, get_origin

import click
from rich.console import Console

from auditor.agent.feedback import DEFAULT_MAX_CHARS
from auditor.config import FlaggedKey, OutputsConfig, flagged_keys, overrides_from_flags
from auditor.errors import (
    AcceptanceError,
    AuditError,
    ConfigError,
    DiscoveryError,
    ExitCode,
    FeedbackError,
    McpError,
    ReportError,
)
from auditor.evidence.acceptance import read_ledger
from auditor.report import Report, json_schema, read_report


class _DefaultToRun(click.Group):
    """Treat `audit tests/` as `audit run tests/` while keeping real subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((arg for arg in args if not arg.startswith("-")), None)
        asks_help = any(arg in ("--help", "-h") for arg in args)
        is_group_option = (asks_help and first is None) or args[:1] == ["--version"]
        if args and not is_group_option and first not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToRun, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="audit-tests", prog_name="audit")
def cli() -> None:
    """Audit a pytest suite: what it runs, what it really checks, where it is shallow.

    \b
    audit tests/                         audit the suite in tests/
    audit tests/ --src mypkg --json r.json
    audit tests/ --html report.html --sarif audit.sarif
    audit report .audit/report.json --html report.html   re-render, no re-run
    audit schema                         print the JSON report's schema

    Run `audit run --help` for every option of an audit.

    Exit codes: 0 gate passed, 1 gate failed, 2 usage or config error,
    3 suite unusable, 4 interrupted or incomplete.
    """


def _a_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An empty path would name the current folder: refused before anything runs, not
    found out when the finished report cannot be written there."""
    if value == "":
        raise ConfigError(f"command line: {param.opts[0]} names no path (it is empty)")
    return value


def _remember_output(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    ctx.meta.setdefault("audit_outputs", {})[param.name] = _a_path(ctx, param, value)


def _remember_annotations(ctx: click.Context, param: click.Parameter, value: bool | None) -> None:
    ctx.meta["github_annotations"] = value


def _output_options(command: Any) -> Any:
    """Adds --html/--markdown/--sarif/... PATH, --compare OLD.json and
    --github-annotations; the values are read back by `_finish`."""
    formats = [(name, field.description) for name, field in OutputsConfig.model_fields.items()]
    for name, help_text in reversed(
        [*formats, ("compare", "OLD.json: a previous report to show changes against")]
    ):
        command = click.option(
            f"--{name.replace('_', '-')}",
            type=click.Path(),
            expose_value=False,
            callback=_remember_output,
            help=help_text,
        )(command)
    return click.option(
        "--github-annotations/--no-github-annotations",
        default=None,
        expose_value=False,
        callback=_remember_annotations,
        help="Print GitHub workflow annotations for the findings (default: on in GitHub "
        "Actions); a --diff run annotates the changed lines only.",
    )(command)


def _in_warm_session() -> bool:
    """Whether the MCP server's warm session runs this command (`run_command`, with a
    list for the written reports): its reply carries the report's headline, and what
    the command prints is thrown away."""
    return isinstance(click.get_current_context().obj, list)


def _finish(
    report: Report,
    report_path: Path,
    cwd: Path,
    configured: dict[str, str | None] | None = None,
    root: Path | None = None,
    summary: bool = True,
) -> NoReturn:
    """Write the requested outputs, print the summary, exit with the report's code."""
    from reports import terminal
    from reports.outputs import write_outputs

    given = dict(click.get_current_context().meta.get("audit_outputs", {}))
    compare_path = given.pop("compare", None)
    previous = read_report(cwd / compare_path, "previous report") if compare_path else None
    targets = _output_targets(given, configured or {}, cwd, root or cwd)
    written = write_outputs(report, targets, previous)
    stdout = Console()
    if (summary or not targets) and not _in_warm_session():
        terminal.render(report, stdout, str(report_path))
    for path in written:
        stdout.print(f"wrote {path}")
    annotate = click.get_current_context().meta.get("github_annotations")
    if annotate or (annotate is None and os.environ.get("GITHUB_ACTIONS") == "true"):
        from reports import github

        sys.stdout.write(github.render(report))
    if report.status != "complete":
        click.echo(f"audit: incomplete run; partial report written to {report_path}", err=True)
    sys.exit(_exit_code(report))


def _check_outputs(
    report_path: Path, cwd: Path, configured: dict[str, str | None], root: Path
) -> None:
    """Every path the run will write or read, checked before any test runs."""
    from reports.outputs import check_writable

    given = dict(click.get_current_context().meta.get("audit_outputs", {}))
    compare_path = given.pop("compare", None)
    if compare_path:
        read_report(cwd / compare_path, "previous report")
    for path in [report_path, *_output_targets(given, configured, cwd, root).values()]:
        check_writable(path.resolve())


def _output_targets(
    flags: dict[str, str | None], configured: dict[str, str | None], cwd: Path, root: Path
) -> dict[str, Path]:
    """Flags (relative to the current folder) win over `[tool.audit.outputs]` (relative
    to the project root)."""
    targets = {name: root / path for name, path in configured.items() if path}
    targets.update({name: cwd / path for name, path in flags.items() if path})
    return {name: path.resolve() for name, path in targets.items()}


def _config_options(command: Any) -> Any:
    """One option per flagged key of the config (`auditor.config.Flag`): its type, choices
    and default come from the model, so a flag cannot drift from its pyproject key."""
    for flagged in reversed(list(flagged_keys())):
        command = click.option(*_declarations(flagged), **_settings(flagged))(command)
    return command


def _declarations(flagged: FlaggedKey) -> list[str]:
    name = flagged.flag.name
    if _value_type(flagged.field.annotation) is bool:
        name = f"{name}/--no-{name.removeprefix('--')}"
    short = [flagged.flag.short] if flagged.flag.short else []
    return [name, *short, flagged.parameter]


def _settings(flagged: FlaggedKey) -> dict[str, Any]:
    flag, field = flagged.flag, flagged.field
    value_type = _value_type(field.annotation)
    shown = flag.default_text or _shown_default(field.get_default(call_default_factory=True))
    help_text = f"{flag.help}  [default: {shown}]" if shown else flag.help
    settings: dict[str, Any] = {"help": help_text, "hidden": flag.hidden, "default": None}
    if get_origin(value_type) is Literal:
        settings["type"] = click.Choice([str(choice) for choice in get_args(value_type)])
    elif value_type is not bool:
        settings["metavar"] = flag.metavar or {int: "N", float: "NUMBER"}.get(value_type, "TEXT")
        settings["multiple"] = get_origin(value_type) in (list, dict)
    return settings


def _value_type(annotation: Any) -> Any:
    """`int | None` -> int; `Annotated[float, ...] | None` -> float."""
    if get_origin(annotation) in (Union, UnionType):
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    return get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation


def _shown_default(default: Any) -> str:
    if isinstance(default, bool):
        return "on" if default else "off"
    if default in (None, [], {}):
        return ""
    return f"{default:g}" if isinstance(default, float) else str(default)


@cli.command()
@click.argument("tests", nargs=-1, type=click.Path())
@click.option(
    "--json",
    "json_path",
    type=click.Path(),
    callback=_a_path,
    help="Where to write the JSON report.",
)
@click.option(
    "--config", "config_file", type=click.Path(), callback=_a_path, help="pyproject.toml to read."
)
@_config_options
@_output_options
@click.option("-q", "--quiet", is_flag=True, help="No progress bars, only the summary.")
def run(
    tests: tuple[str, ...],
    json_path: str | None,
    config_file: str | None,
    quiet: bool,
    **flags: Any,
) -> None:
    """Audit the pytest suite in TESTS (default: the configured tests, or tests/)."""
    from auditor.evidence.history import with_trend
    from auditor.pipeline import resolve_config, run_audit
    from auditor.progress import PlainProgress, RichProgress, SilentProgress

    cwd = Path.cwd()
    overrides = overrides_from_flags(flags, cwd)
    config, root, settings_from = resolve_config(
        list(tests), overrides, cwd, Path(config_file).resolve() if config_file else None
    )
    output = (cwd / json_path) if json_path else (root / config.report_json)
    _check_outputs(output, cwd, config.outputs.model_dump(), root)
    read_ledger(root)  # a malformed ledger is an error before any test runs
    if settings_from:
        mutmut_keys = ("src", "tests", "do_not_mutate")
        taken = "; ".join(f"{key} = {getattr(config, key)}" for key in mutmut_keys)
        click.echo(f"audit: no [tool.audit]; read {settings_from}: {taken}", err=True)
    stderr = Console(stderr=True)
    try:
        with _stopped_on_terminate():
            if quiet:
                report = run_audit(list(tests), config, cwd, SilentProgress())
            elif not stderr.is_terminal:  # a CI log: plain lines, every 30 s at most
                report = run_audit(list(tests), config, cwd, PlainProgress(sys.stderr))
            else:
                with RichProgress(stderr) as progress:
                    report = run_audit(list(tests), config, cwd, progress)
    except BrokenPipeError as exc:
        # Click takes a broken pipe for the reader of audit's output gone and exits 1
        # without a word; this one led to a child of audit's own.
        raise RuntimeError(f"a pipe to one of audit's processes broke: {exc}") from exc
    report.trend = with_trend(report, Path(report.project.root))
    _write_report(report, output)
    if _in_warm_session():
        click.get_current_context().obj.append(report)
    _finish(report, output, cwd, config.outputs.model_dump(), root)


@contextlib.contextmanager
def _stopped_on_terminate() -> Iterator[None]:
    """SIGTERM (a CI job's timeout, `kill`, a container stopping) stops the run as Ctrl-C
    does, with the partial report and exit 4: it ended the process at once, and what the
    run had found was lost but for the cache. Signal handlers are the main thread's
    (the warm session runs its audits there too)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _write_report(report: Report, path: Path) -> None:
    try:
        report.write(path)
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None


def _exit_code(report: Report) -> ExitCode:
    if report.status != "complete":
        return ExitCode.INCOMPLETE
    return ExitCode.PASSED if report.gate.verdict == "pass" else ExitCode.GATE_FAILED


@cli.command()
@click.argument("report_path", metavar="REPORT", type=click.Path())
@_output_options
def report(report_path: str) -> None:
    """Re-render a saved JSON REPORT without running anything.

    \b
    audit report .audit/report.json --html report.html --sarif audit.sarif
    audit report new.json --markdown summary.md --compare old.json
    """
    cwd = Path.cwd()
    _finish(read_report(cwd / report_path), cwd / report_path, cwd, summary=False)


@cli.command()
@click.argument("suites", nargs=-1, required=True, type=click.Path())
@click.option("--json", "json_path", type=click.Path(), help="Write the comparison as JSON.")
@click.option("--html", "html_path", type=click.Path(), help="Write the comparison as HTML.")
@click.option("--all-killers", is_flag=True, help="Run every covering test of a killed mutant.")
def compare(
    suites: tuple[str, ...], json_path: str | None, html_path: str | None, all_killers: bool
) -> None:
    """Audit several test folders for the same code and set them side by side.

    \b
    audit compare tests_fast tests_deep --html compare.html
    """
    from auditor.compare import compare_suites
    from auditor.pipeline import resolve_config
    from auditor.progress import PlainProgress
    from reports.compare import render_html, render_terminal
    from reports.outputs import check_writable

    if len(suites) < 2:
        raise ConfigError("compare needs at least two test folders")
    cwd = Path.cwd()
    for suite in suites:  # before any suite runs, not after the first
        if not (cwd / suite).exists():
            raise DiscoveryError(f"test path '{suite}' does not exist")
    overrides: dict[str, Any] = {"all_killers": True} if all_killers else {}
    config, _, _ = resolve_config([suites[0]], overrides, cwd, None)
    for path in (json_path, html_path):
        if path is not None:
            check_writable((cwd / path).resolve())
    comparison, _ = compare_suites(list(suites), config, cwd, PlainProgress(sys.stderr))
    render_terminal(comparison, Console())
    if json_path:
        _write_text(cwd / json_path, comparison.model_dump_json(indent=2) + "\n")
    if html_path:
        _write_text(cwd / html_path, render_html(comparison))


def _write_text(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"wrote {path}")


@cli.command()
@click.argument("shards", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(), help="The merged JSON report.")
@_output_options
def merge(shards: tuple[str, ...], output: str) -> None:
    """Merge the JSON reports of `--shard K/N` runs into one report.

    \b
    audit merge shard-*.json -o report.json --html report.html
    """
    from auditor.merge import merge_reports

    cwd = Path.cwd()
    merged = merge_reports([(Path(path), read_report(cwd / path)) for path in shards])
    _write_report(merged, cwd / output)
    _finish(merged, cwd / output, cwd)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--fail-on",
    type=click.Choice(["high", "medium", "low"]),
    default="high",
    show_default=True,
    help="Exit 1 when a smell of this severity or worse is found.",
)
def smells(paths: tuple[str, ...], fail_on: str) -> None:
    """Only the static smell check on test files (no test runs): for pre-commit.

    \b
    audit smells tests/test_cart.py tests/test_pricing.py
    audit smells tests/ --fail-on medium
    """
    from auditor.smells.analyzer import analyze_paths

    cwd = Path.cwd()
    found = analyze_paths([(cwd / path).resolve() for path in paths or ("tests",)], cwd)
    for error in found.unparsable:
        click.echo(f"{error.location}: cannot parse: {error.message}")
    for smell in found.findings:
        click.echo(f"{smell.file}:{smell.line}: {smell.code} {smell.severity} {smell.message}")
    order = ["high", "medium", "low"]
    failing = [s for s in found.findings if order.index(s.severity) <= order.index(fail_on)]
    sys.exit(ExitCode.GATE_FAILED if failing or found.unparsable else ExitCode.PASSED)


@cli.command()
@click.argument("source", type=click.Path())
@click.option("--model", metavar="NAME", help="Model to ask (default: fast_model).")
@click.option("--out", type=click.Path(), help="Folder to write to (.audit/generated).")
def generate(source: str, model: str | None, out: str | None) -> None:
    """Ask the fast model for a first test suite of one module (needs an API key).

    \b
    audit generate shop/pricing.py
    audit .audit/generated           # then see how much it really checks
    """
    from auditor.escalation.generate import generate as write_suite

    cwd = Path.cwd()
    paths, kept, rejected = write_suite(
        (cwd / source).resolve(), (cwd / out).resolve() if out else None, model
    )
    for reason in rejected:
        click.echo(f"dropped {reason}", err=True)
    click.echo(f"wrote {kept} tests to {', '.join(map(str, paths))}")


@cli.command()
@click.argument("report_path", metavar="[REPORT]", default=".audit/report.json")
@click.option(
    "--max-chars",
    type=click.IntRange(min=200),
    default=DEFAULT_MAX_CHARS,
    show_default=True,
    help="Longest text to print.",
)
@click.option(
    "--file",
    "files",
    multiple=True,
    metavar="PATH",
    help="Only what concerns this file of the code under test (repeatable).",
)
def feedback(report_path: str, max_chars: int, files: tuple[str, ...]) -> None:
    """Print what a saved REPORT found as short text for the model that wrote the tests:
    the changes its tests missed (with an input that shows each), its weak tests with
    the fix, edge cases never tried, code no test runs.

    \b
    audit tests/ -q && audit feedback
    audit feedback .audit/report.json --max-chars 2000 --file shop/cart.py
    """
    from auditor.agent.feedback import build, check_files

    report = _saved_report(Path.cwd() / report_path, FeedbackError)
    check_files(report, files)
    click.echo(build(report, set(files) if files else None).render(max_chars), nl=False)


def _saved_report(path: Path, missing: type[FeedbackError | AcceptanceError]) -> Report:
    """The report a command reads, or a one-line error of that command's saying how to get
    one."""
    if not path.exists():
        raise missing(f"no report at {path}: run `audit TESTS` first, or name a saved report")
    return read_report(path)


@cli.group(name="import")
def import_results() -> None:
    """Audit with the verdicts of another mutation tool's finished run."""


@import_results.command(
    name="mutmut",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def import_mutmut(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Audit TESTS as `audit run` does, with mutmut 3's verdicts from the project's
    `mutants/` folder instead of running mutants: smells, probes, reports and the gate
    work on them. Every option of `audit run` applies.

    \b
    mutmut run && audit import mutmut tests/ --html report.html
    """
    if "--help" in args or "-h" in args:
        click.echo(ctx.get_help())
        ctx.exit(0)
    run_context = run.make_context("run", ["--mutation-from", "mutmut", *args], parent=ctx)
    with run_context:
        run.invoke(run_context)


@cli.command()
@click.argument("mutant_id")
@click.option("--reason", required=True, help="Why this survivor needs no test.")
@click.option(
    "--report",
    "report_path",
    default=".audit/report.json",
    show_default=True,
    help="The saved report the mutant is in.",
)
def accept(mutant_id: str, reason: str, report_path: str) -> None:
    """Accept a surviving mutant, with the reason, in the project's .audit/accepted.toml:
    later runs mark it Ignored (out of the scores) until its mutated lines change.

    \b
    audit accept 'shop/cart.py::Cart.add::constants.string@2:29#0' --reason "log text"
    """
    from auditor.evidence.acceptance import write_entry

    path = Path.cwd() / report_path
    report = _saved_report(path, AcceptanceError)
    mutants = report.mutation.mutants if report.mutation else []
    mutant = next((m for m in mutants if m.id == mutant_id), None)
    if mutant is None:
        raise AcceptanceError(f"no mutant {mutant_id!r} in {path}")
    if mutant.status != "Survived" and not mutant.accepted:
        raise AcceptanceError(f"{mutant_id} is {mutant.status}, not a surviving mutant")
    ledger = write_entry(Path(report.project.root), mutant, reason)
    click.echo(f"accepted {mutant_id} in {ledger}")


@cli.command()
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    default=".",
    help="The project the tools work on (default: the current folder).",
)
def mcp(root: str) -> None:
    """Serve the audit to coding agents over MCP, on stdin/stdout.

    \b
    Tools: audit, explain_mutant, next_tests, test_smells, feedback.
    Needs the mcp extra: pip install 'audit-tests[mcp]'
    """
    from auditor.agent.mcp_server import serve

    path = Path(root).resolve()
    if not path.is_dir():
        raise McpError(f"project root {path} is not a folder")
    serve(path)


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the report."""
    click.echo(json.dumps(json_schema(), indent=2, sort_keys=True))


def run_command(args: list[str] | None = None, written: list[Report] | None = None) -> int:
    """Run one `audit` command line (`sys.argv` by default) and return its exit code:
    each error becomes its one line on stderr, as on the command line. The warm agent
    session (`auditor.agent.session`) runs its audits through here too, and is given
    the report an audit wrote in `written`."""
    try:
        cli.main(args=args, standalone_mode=False, obj=written)
    except SystemExit as exc:  # `sys.exit(code)` and `sys.exit("message")` alike
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return ExitCode.USAGE_ERROR
    except click.Abort:
        click.echo("audit: interrupted", err=True)
        return ExitCode.INCOMPLETE
    except AuditError as exc:
        click.echo(f"audit: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("audit: interrupted; no report written", err=True)
        return ExitCode.INCOMPLETE
    except Exception as exc:
        if os.environ.get("AUDIT_DEBUG"):
            raise
        click.echo(
            f"audit: internal error: {type(exc).__name__}: {exc} (set AUDIT_DEBUG=1 for details)",
            err=True,
        )
        return ExitCode.INCOMPLETE
    return ExitCode.PASSED
