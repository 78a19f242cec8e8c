"""Which type checker `--type-check auto` runs, from the project's configuration."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from auditor.errors import TypeCheckError
from auditor.mutation import type_check
from auditor.mutation.type_check import chosen_checker, configured_checkers


def _project(root: Path, pyproject: str = "") -> Path:
    (root / "pyproject.toml").write_text(f'[project]\nname = "p"\nversion = "1"\n{pyproject}')
    return root


def _without(monkeypatch: pytest.MonkeyPatch, *missing: str) -> None:
    """Make the named checkers look uninstalled to the choice."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        type_check.importlib.util,
        "find_spec",
        lambda name, *args: None if name in missing else real(name, *args),
    )


def test_every_configuration_file_names_its_checker(tmp_path):
    cases = {
        "mypy.ini": ("[mypy]\n", ["mypy"]),
        "setup.cfg": ("[mypy]\nstrict = True\n", ["mypy"]),
        "pyrightconfig.json": ("{}", ["pyright"]),
        "ty.toml": ("", ["ty"]),
    }
    found = {}
    for name, (text, _) in cases.items():
        root = tmp_path / name
        root.mkdir()
        (root / name).write_text(text)
        found[name] = configured_checkers(root)
    assert found == {name: checkers for name, (_, checkers) in cases.items()}


def test_a_project_that_configures_several_checkers_gets_the_fastest_first(tmp_path):
    root = _project(tmp_path, "[tool.mypy]\n[tool.pyright]\n[tool.ty]\n")
    assert configured_checkers(root) == ["ty", "mypy", "pyright"]
    assert chosen_checker("auto", root) == "ty"


def test_auto_passes_over_a_configured_checker_that_is_not_installed(tmp_path, monkeypatch):
    root = _project(tmp_path, "[tool.mypy]\n[tool.ty]\n")
    _without(monkeypatch, "ty")
    assert chosen_checker("auto", root) == "mypy"


def test_auto_runs_no_checker_when_none_configured_is_installed(tmp_path, monkeypatch):
    root = _project(tmp_path, "[tool.pyright]\n")
    _without(monkeypatch, "pyright")
    assert chosen_checker("auto", root) is None


def test_a_checker_named_on_the_command_line_wins_over_the_configured_one(tmp_path):
    root = _project(tmp_path, "[tool.ty]\n")
    assert chosen_checker("mypy", root) == "mypy"


def test_a_named_checker_that_is_not_installed_is_an_error(tmp_path, monkeypatch):
    _without(monkeypatch, "pyright")
    with pytest.raises(TypeCheckError, match="pyright is not installed"):
        chosen_checker("pyright", _project(tmp_path))
