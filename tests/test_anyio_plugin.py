"""anyio's pytest plugin (installed with audit: the `openai` client needs anyio) is left
out of audit's pytest runs for a project that names none of its parts, and kept for one
that does."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import anyio.pytest_plugin
import pytest

from auditor.discovery.project import discover
from auditor.discovery.pytest_options import ANYIO_PLUGIN_NAMES, NO_ANYIO_PLUGIN
from tests.conftest import one_module_project, run_audit

ANYIO_TEST = """\
import pytest
from pkg import double


@pytest.mark.anyio
async def test_double():
    assert double(2) == 4
"""


def _left_out(root: Path) -> bool:
    args = discover(["tests"], [], cwd=root).pytest_options.args
    pairs = set(zip(args[::2], args[1::2], strict=True))
    return tuple(NO_ANYIO_PLUGIN) in pairs


def _project(root: Path, tests: dict[str, str], **files: str) -> Path:
    project = one_module_project(root, "pkg", "def double(x):\n    return x * 2\n", tests)
    for name, text in files.items():
        (project / name).write_text(text)
    return project


def test_a_project_that_names_no_part_of_it_goes_without_it(tmp_path):
    root = _project(tmp_path / "p", {"test_core.py": "def test_one():\n    assert 1\n"})
    assert _left_out(root)


def test_a_test_marked_anyio_keeps_it(tmp_path):
    root = _project(tmp_path / "p", {"test_core.py": ANYIO_TEST})
    assert not _left_out(root)


def test_a_helper_module_beside_the_tests_naming_a_port_fixture_keeps_it(tmp_path):
    helper = (
        "import pytest\n\n@pytest.fixture\ndef port(free_tcp_port):\n    return free_tcp_port\n"
    )
    root = _project(tmp_path / "p", {"test_core.py": "def test_one():\n    assert 1\n"})
    (root / "tests" / "helpers.py").write_text(helper)
    assert not _left_out(root)


def test_the_plugins_mode_in_the_pytest_config_keeps_it(tmp_path):
    config = '[tool.pytest.ini_options]\nanyio_mode = "auto"\n'
    tests = {"test_core.py": "def test_one():\n    assert 1\n"}
    root = _project(tmp_path / "p", tests, **{"pyproject.toml": config})
    assert not _left_out(root)


def test_the_plugin_asked_for_in_the_environment_keeps_it(tmp_path, monkeypatch):
    root = _project(tmp_path / "p", {"test_core.py": "def test_one():\n    assert 1\n"})
    monkeypatch.setenv("PYTEST_PLUGINS", "anyio.pytest_plugin")
    assert not _left_out(root)


def test_every_fixture_of_the_installed_plugin_is_among_the_names_looked_for():
    tree = ast.parse(inspect.getsource(anyio.pytest_plugin))
    fixtures = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)
    ]
    assert "anyio_backend" in fixtures  # the reading finds them
    assert [name for name in fixtures if not any(n in name for n in ANYIO_PLUGIN_NAMES)] == []


@pytest.mark.slow
def test_an_anyio_test_runs_and_kills_under_audit(tmp_path):
    backend = "import pytest\n\n@pytest.fixture\ndef anyio_backend():\n    return 'asyncio'\n"
    root = _project(tmp_path / "p", {"test_core.py": ANYIO_TEST, "conftest.py": backend})
    out = tmp_path / "report.json"
    result = run_audit("tests", "-q", "--no-probes", "--json", str(out), cwd=root)
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert [test["outcome"] for test in report["baseline"]["tests"]] == ["passed"]
    assert any(mutant["status"] == "Killed" for mutant in report["mutation"]["mutants"])


@pytest.mark.slow
def test_a_suite_that_never_names_it_runs_without_it(tmp_path):
    # The plugin's name spelled apart: a test file that names it keeps the plugin.
    check = (
        "def test_without_the_plugin(pytestconfig):\n"
        "    assert not pytestconfig.pluginmanager.has_plugin('any' + 'io')\n"
    )
    root = _project(tmp_path / "p", {"test_core.py": check})
    out = tmp_path / "report.json"
    flags = ("--no-mutation", "--no-probes", "--json", str(out))
    result = run_audit("tests", "-q", *flags, cwd=root)
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert [test["outcome"] for test in report["baseline"]["tests"]] == ["passed"]
