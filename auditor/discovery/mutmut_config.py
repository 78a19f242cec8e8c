"""A project set up for mutmut runs under audit as it is: with no `[tool.audit]`, its
`[tool.mutmut]` (pyproject.toml) or `[mutmut]` (setup.cfg) says what to mutate.

mutmut 3's keys and what they become: `source_paths` (before 3.8 `paths_to_mutate`)
-> `src`; the paths among `pytest_add_cli_args_test_selection` (before 3.8 `tests_dir`)
-> `tests`; `do_not_mutate` -> `do_not_mutate` (globs of files left unmutated). Its
other keys (`also_copy`, `pytest_add_cli_args`, ...) serve mutmut's copy of the
project, which audit does not make; they are ignored.
"""

from __future__ import annotations

import configparser
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from auditor.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_KEYS = {
    "source_paths": "src",
    "paths_to_mutate": "src",
    "pytest_add_cli_args_test_selection": "tests",
    "tests_dir": "tests",
    "do_not_mutate": "do_not_mutate",
}


@dataclass(frozen=True)
class MutmutConfig:
    values: dict[str, list[str]]
    """audit's keys, from mutmut's."""
    origin: str
    """Where they were read: `pyproject.toml [tool.mutmut]` or `setup.cfg [mutmut]`."""


def read(root: Path) -> MutmutConfig | None:
    """mutmut's settings of the project at `root`, or None when it has none."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {pyproject}: {exc}") from None
        section = data.get("tool", {}).get("mutmut")
        if isinstance(section, dict):
            return MutmutConfig(_translated(section, pyproject), "pyproject.toml [tool.mutmut]")
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read_string(setup_cfg.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, configparser.Error) as exc:
            raise ConfigError(f"cannot read {setup_cfg}: {exc}") from None
        if parser.has_section("mutmut"):
            section = dict(parser.items("mutmut"))
            return MutmutConfig(_translated(section, setup_cfg), "setup.cfg [mutmut]")
    return None


def _translated(section: dict[str, Any], origin: Path) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for key, ours in _KEYS.items():
        if key in section and ours not in values:
            paths = _paths(section[key], origin, key)
            values[ours] = [path for path in paths if not path.startswith("-")]
    return values


def _paths(value: Any, origin: Path, key: str) -> list[str]:
    """A list, or text with one path per line or comma (as setup.cfg writes lists)."""
    if isinstance(value, str):
        parts = value.replace(",", "\n").splitlines()
    elif isinstance(value, list) and all(isinstance(part, str) for part in value):
        parts = value
    else:
        raise ConfigError(f"{origin}: mutmut's '{key}' must be a list of paths")
    return [part.strip() for part in parts if part.strip()]
