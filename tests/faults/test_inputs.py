"""Bad input: every configuration key given a wrong value, test paths that are not test
folders, reports of another schema, a project that is not a git repository, options
that need a missing plugin. Each ends in one line naming the key or file, before any
test runs (exit 2), or is audited as given."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from pydantic import BaseModel

from auditor.cli import run_command
from auditor.config import AuditConfig, load_config
from auditor.errors import ConfigError
from auditor.report import SCHEMA_VERSION
from tests.conftest import run_audit
from tests.faults.project import FLAGS, line_of, make_project, verdicts

_BAD = {"a wrong type": "{ x = 1 }", "an empty value": '""', "an out-of-range value": "-7"}

_SHOWN = {"a wrong type": "jobs", "an empty value": "report_json", "an out-of-range value": "jobs"}
"""The key whose refusal the table shows for each kind of bad value."""

_MEANINGFUL = {
    ("disable_mutators", "an empty value"): "no family left out",
    ("sample_seed", "an out-of-range value"): "any integer seeds the sample",
}
"""The bad values that mean something: every other one is refused."""


def _keys(model: type[BaseModel] = AuditConfig, prefix: tuple[str, ...] = ()):
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            yield from _keys(field.annotation, (*prefix, name))
        else:
            yield (*prefix, name)


def _accepts(pyproject: Path) -> bool:
    try:
        load_config(pyproject, {})
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize("kind", list(_BAD))
def test_every_configuration_key_given_a_bad_value_is_refused_naming_it(
    tmp_path, capsys, fault, kind
):
    root = make_project(tmp_path / "calc")
    pyproject = root / "pyproject.toml"
    refused: dict[str, str] = {}
    accepted, wrong = set(), []
    keys = list(_keys())
    for key in keys:
        table = ".".join(("tool", "audit", *key[:-1]))
        pyproject.write_text(f"[{table}]\n{key[-1]} = {_BAD[kind]}\n")
        if _accepts(pyproject):
            accepted.add((".".join(key), kind))
            continue
        capsys.readouterr()
        code = run_command(["run", str(root / "tests"), "--config", str(pyproject)])
        err = capsys.readouterr().err
        if code == 2 and err.count("\n") == 1 and f"'{'.'.join(key)}" in err:
            refused[".".join(key)] = err.strip()
        else:
            wrong.append(f"{'.'.join(key)}: exit {code}: {err}")
    assert wrong == []
    assert accepted == {entry for entry in _MEANINGFUL if entry[1] == kind}
    fault(
        "inputs",
        f"each of the {len(keys)} configuration keys given {kind} ({_BAD[kind]})",
        did=f"{len(refused)} refused before any test ran"
        + "".join(f"; `{key}` taken: {_MEANINGFUL[key, kind]}" for key, _ in sorted(accepted)),
        exit_code=2,
        saw=refused[_SHOWN[kind]].replace(str(root), "<project>"),
        lost="nothing",
    )


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr.strip()


def test_a_test_path_that_is_a_symlink_loop_is_named(tmp_path, fault):
    root = make_project(tmp_path / "calc")
    (root / "loop").symlink_to(root / "loop")
    result = run_audit("loop", cwd=root)
    assert result.returncode == 2
    said = _one_line(result)
    assert said == "audit: discover: test path 'loop' does not exist (a symlink loop)"
    fault(
        "inputs",
        "a test path that is a symlink loop",
        did="refused it before any test ran",
        exit_code=result.returncode,
        saw=said,
        lost="nothing",
    )


def test_a_test_path_that_is_a_file_but_not_python_is_named(tmp_path, fault):
    root = make_project(tmp_path / "calc")
    result = run_audit("pyproject.toml", cwd=root)
    assert result.returncode == 2
    said = _one_line(result)
    assert "test path 'pyproject.toml' is a file, not a test folder" in said
    fault(
        "inputs",
        "a file (pyproject.toml) given where a test folder goes",
        did="refused it before any test ran",
        exit_code=result.returncode,
        saw=said,
        lost="nothing",
    )


@pytest.mark.slow
def test_a_project_whose_paths_have_spaces_and_non_ascii_is_audited(tmp_path, fault):
    root = make_project(tmp_path / "çalc prøject")
    (root / "tests").rename(root / "tésts of çalc")
    result = run_audit("tésts of çalc", *FLAGS, cwd=root)
    assert result.returncode == 0, result.stderr
    assert verdicts(root)
    assert set(verdicts(root).values()) >= {"Killed", "Survived"}
    fault(
        "inputs",
        "a project and a test folder whose paths have spaces and non-ASCII letters",
        did="audited them as any other",
        exit_code=result.returncode,
        saw=line_of(result.stdout, "report:").replace(str(tmp_path), "<tmp>"),
        lost="nothing",
    )


def test_diff_in_a_folder_that_is_not_a_git_repository_is_named(tmp_path, fault):
    root = make_project(tmp_path / "calc")
    result = run_audit("tests", "-q", "--diff", "HEAD", cwd=root)
    assert result.returncode == 2
    said = _one_line(result)
    assert said.startswith("audit: diff: ") and "not a git repository" in said
    fault(
        "inputs",
        "`--diff HEAD` in a project that is not a git repository",
        did="refused it before any test ran",
        exit_code=result.returncode,
        saw=said.replace(str(root), "<project>"),
        lost="nothing",
    )


def _report_of_schema(root: Path, version: int) -> Path:
    """The stored report of a real audit, its schema_version changed."""
    stored = Path(__file__).parent.parent / "reports" / "markup-report.json"
    report = json.loads(stored.read_text(encoding="utf-8"))
    report["schema_version"] = version
    path = root / f"schema-{version}.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


@pytest.mark.parametrize(("written_by", "version"), [("newer", 999), ("older", SCHEMA_VERSION - 1)])
@pytest.mark.parametrize("command", ["report", "merge", "--baseline"])
def test_a_report_of_another_schema_is_refused_naming_its_schema(
    tmp_path, fault, command, written_by, version
):
    root = make_project(tmp_path / "calc")
    report = _report_of_schema(root, version).name
    args = {
        "report": ["report", report],
        "merge": ["merge", report, "-o", "merged.json"],
        "--baseline": ["tests", "-q", "--baseline", report],
    }[command]
    result = run_audit(*args, cwd=root)
    assert result.returncode == 2
    said = _one_line(result)
    assert f"it has report schema {version}, written by a" in said
    assert f"{written_by} audit; this one reads schema {SCHEMA_VERSION}" in said
    assert not (root / ".audit" / "report.json").exists()
    given_to = "audit tests --baseline" if command == "--baseline" else f"audit {command}"
    fault(
        "inputs",
        f"a report of schema {version} ({written_by}) given to `{given_to}`",
        did="refused it before any test ran",
        exit_code=result.returncode,
        saw=said.replace(str(root), "<project>"),
        lost="nothing",
    )


@pytest.mark.slow
def test_pytest_options_that_need_a_missing_plugin_are_named(tmp_path, fault):
    root = make_project(tmp_path / "calc")
    with (root / "pyproject.toml").open("a") as pyproject:
        pyproject.write('\n[tool.pytest.ini_options]\naddopts = "--timeout=5"\n')
    result = run_audit("tests", *FLAGS, cwd=root)
    said = _one_line(result)
    assert "unrecognized arguments: --timeout=5" in said
    assert result.returncode in (2, 3)
    fault(
        "inputs",
        "pytest `addopts` that need a plugin that is not installed (`--timeout=5`)",
        did="stopped at the baseline, naming the option and the plugin",
        exit_code=result.returncode,
        saw=said,
        lost="nothing",
    )
