"""The project's pytest options that audit sets aside in its own test processes.

audit measures coverage itself, per test. A project's pytest-cov options (`--cov=pkg
--cov-branch --cov-report=...` in `addopts`, or in `PYTEST_ADDOPTS`) would start a
second Coverage that takes the tracer over (every line unmeasured, every mutant without
coverage) where pytest-cov is installed, and stop pytest at "unrecognized arguments"
where it is not. So they go, pytest-cov is kept out (`-p no:pytest_cov`), and the report
says what was set aside. anyio's plugin is kept out too where the project never names it
(`ANYIO_PLUGIN_NAMES`)."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

_TAKES_VALUE = {
    "--cov": "optional",
    "--cov-report": "yes",
    "--cov-config": "yes",
    "--cov-fail-under": "yes",
    "--cov-context": "yes",
    "--cov-precision": "yes",
    "--cov-branch": "no",
    "--cov-append": "no",
    "--cov-reset": "no",
    "--no-cov": "no",
    "--no-cov-on-fail": "no",
}
"""pytest-cov's options, and whether each takes a value."""

NO_COVERAGE_PLUGIN = ("-p", "no:pytest_cov")

NO_ANYIO_PLUGIN = ("-p", "no:anyio")

ANYIO_PLUGIN_NAMES = ("anyio", "free_tcp_port", "free_udp_port")
"""What a project names to use anyio's pytest plugin: its marker, mode and backend
fixtures (`anyio...`) and its port fixtures. anyio comes with audit (the `openai` client
needs it), and its plugin imports anyio, and trio where installed, in every pytest
process: about 0.3 s of each baseline child's and mutation runner's start. A project
that names none of these cannot use it, so audit's pytest runs leave it out."""


@dataclass(frozen=True)
class PytestOptions:
    """What audit's own pytest runs add to their command line and environment, and
    what they set aside."""

    args: tuple[str, ...] = NO_COVERAGE_PLUGIN
    environment: Mapping[str, str] = field(default_factory=dict)
    set_aside: tuple[str, ...] = ()
    """Each option set aside, and where it came from (`addopts: --cov=pkg`)."""


AUDIT_DEFAULTS = PytestOptions()
"""For a project whose options need nothing set aside."""


def without_coverage_options(options: str) -> tuple[str, list[str]]:
    """The options with pytest-cov's removed, and those removed (with their values)."""
    try:
        words = shlex.split(options)
    except ValueError:  # unbalanced quotes: pytest itself will say so
        return options, []
    kept, removed = [], []
    position = 0
    while position < len(words):
        word = words[position]
        name = word.split("=", 1)[0]
        position += 1
        if name not in _TAKES_VALUE:
            kept.append(word)
            continue
        taken = [word]
        takes = _TAKES_VALUE[name]
        value_follows = "=" not in word and position < len(words)
        if value_follows and (
            takes == "yes" or (takes == "optional" and not words[position].startswith("-"))
        ):
            taken.append(words[position])
            position += 1
        removed.append(" ".join(taken))
    return shlex.join(kept), removed


def own_pytest_options(
    ini_options: Mapping[str, str], environ: Mapping[str, str], names_anyio: bool = True
) -> PytestOptions:
    """The options of audit's pytest runs for a project with these ini options, started
    from this environment; `names_anyio`: whether the project names a part of anyio's
    plugin (`names_anyio_plugin`)."""
    kept, removed = without_coverage_options(ini_options.get("addopts", ""))
    args = NO_COVERAGE_PLUGIN + (() if names_anyio else NO_ANYIO_PLUGIN)
    args += ("-o", f"addopts={kept}") if removed else ()
    set_aside = [f"addopts: {option}" for option in removed]
    given = environ.get("PYTEST_ADDOPTS", "")
    kept_env, removed_env = without_coverage_options(given)
    set_aside += [f"PYTEST_ADDOPTS: {option}" for option in removed_env]
    environment = {"PYTEST_ADDOPTS": kept_env} if removed_env else {}
    return PytestOptions(args, environment, tuple(set_aside))


def names_anyio_plugin(files: Iterable[Path], environ: Mapping[str, str]) -> bool:
    """Whether any of the project's files (its code, tests, helpers, conftests and pytest
    config) or pytest's variables in the environment name a part of anyio's plugin."""
    given = " ".join(environ.get(name, "") for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS"))
    if _names_anyio(given.encode()):
        return True
    for file in files:
        try:
            if _names_anyio(file.read_bytes()):
                return True
        except OSError:
            return True  # unread: keep the plugin, as a bare pytest would
    return False


def _names_anyio(text: bytes) -> bool:
    return any(name.encode() in text for name in ANYIO_PLUGIN_NAMES)
