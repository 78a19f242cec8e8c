"""The test modules' assertion rewrites are kept between runs, and every child that
collects the suite takes them from there."""

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import hypothesis
import pytest
from _pytest.assertion.rewrite import _rewrite_test

from auditor.containment import rewritten
from tests.conftest import one_module_project, run_audit

CODE = "def double(x):\n    return x * 2\n"
TESTS = "from calc import double\n\n\ndef test_double():\n    assert double(2) == 5 - 1\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return one_module_project(
        tmp_path / "calc", "calc", CODE, {"test_calc.py": TESTS, "conftest.py": ""}
    )


def _modules(root: Path) -> list[Path]:
    return [root / "tests" / "test_calc.py", root / "tests" / "conftest.py"]


def _entry(root: Path, module: Path) -> Path:
    name = rewritten.entry_name(pytest.__version__, module, module.read_bytes())
    return rewritten.folder(root) / name


def _plant(root: Path, module: Path, source: str) -> None:
    """The entry of `module`'s content holds the rewrite of another source."""
    stand_in = root.parent / "stand_in.py"
    stand_in.write_text(source)
    _, code = _rewrite_test(stand_in, None)
    rewritten.folder(root).mkdir(parents=True, exist_ok=True)
    _entry(root, module).write_bytes(marshal.dumps(code))


def test_each_module_is_kept_once_per_content(project):
    rewritten.prepare(project, _modules(project))
    rewritten.prepare(project, _modules(project))

    kept = sorted(entry.name for entry in rewritten.folder(project).iterdir())
    assert kept == sorted(_entry(project, module).name for module in _modules(project))


def test_an_edited_module_replaces_its_entry(project):
    rewritten.prepare(project, _modules(project))
    before = _entry(project, _modules(project)[0])
    _modules(project)[0].write_text(TESTS + "\n\ndef test_more():\n    assert double(0) == 0\n")

    rewritten.prepare(project, _modules(project))

    assert not before.exists()
    assert _entry(project, _modules(project)[0]).exists()


def test_the_kept_code_explains_a_failing_assert(project):
    """What is kept is pytest's rewrite, not the plain compilation."""
    module = _modules(project)[0]
    module.write_text("def test_sum():\n    total = 2 + 2\n    assert total == 5\n")
    rewritten.prepare(project, [module])
    namespace: dict = {}
    exec(marshal.loads(_entry(project, module).read_bytes()), namespace)

    with pytest.raises(AssertionError, match="assert 4 == 5"):
        namespace["test_sum"]()


@pytest.mark.slow
def test_the_baseline_runs_the_module_from_its_entry(project):
    stand_in = "def test_double():\n    assert False\n\n\ndef test_stand_in():\n    pass\n"
    _plant(project, _modules(project)[0], stand_in)
    out = project.parent / "report.json"

    run_audit("tests", "--no-mutation", "--no-probes", "--json", str(out), cwd=project)

    tests = json.loads(out.read_text())["baseline"]["tests"]
    assert {test["nodeid"]: test["outcome"] for test in tests} == {
        "tests/test_calc.py::test_double": "failed",
        "tests/test_calc.py::test_stand_in": "passed",
    }


@pytest.mark.slow
def test_the_mutants_run_the_module_from_its_entry(project):
    """A stand-in that calls `double` and checks nothing lets every mutant of it live:
    the runners ran the kept code, not a rewrite of the test file as it stands."""
    _plant(
        project,
        _modules(project)[0],
        "from calc import double\n\n\ndef test_double():\n    double(2)\n",
    )
    out = project.parent / "report.json"

    run_audit("tests", "--no-probes", "--json", str(out), cwd=project)

    mutants = json.loads(out.read_text())["mutation"]["mutants"]
    run = [mutant["status"] for mutant in mutants if mutant["status"] != "Ignored"]
    assert run
    assert set(run) == {"Survived"}


LOADER_CHECKS = (
    "import sys\n\nimport hypothesis.core\n\n\n"
    "def _loader(module):\n    return type(module.__spec__.loader).__name__\n\n\n"
    "def test_an_installed_package_is_imported_as_installed():\n"
    "    assert _loader(hypothesis.core) == 'SourceFileLoader'\n\n\n"
    "def test_the_test_module_is_rewritten():\n"
    "    assert _loader(sys.modules[__name__]) == 'AssertionRewritingHook'\n"
)


@pytest.mark.slow
def test_a_child_leaves_installed_plugin_packages_unrewritten(tmp_path):
    """Hypothesis ships a pytest plugin, so pytest marks all its modules for rewriting;
    the baseline's child imports them as Python does, and still rewrites the tests."""
    project = one_module_project(tmp_path / "calc", "calc", CODE, {"test_calc.py": LOADER_CHECKS})
    out = tmp_path / "report.json"

    run_audit("tests", "--no-mutation", "--no-probes", "--json", str(out), cwd=project)

    tests = json.loads(out.read_text())["baseline"]["tests"]
    assert {test["nodeid"].partition("::")[2]: test["outcome"] for test in tests} == {
        "test_an_installed_package_is_imported_as_installed": "passed",
        "test_the_test_module_is_rewritten": "passed",
    }


def test_a_project_inside_an_installed_packages_folder_is_rewritten_as_pytest_would(tmp_path):
    """A package audited where it is installed: its folder holds the project, so its
    modules marked for rewriting stay pytest's to rewrite."""
    installed = Path(hypothesis.__file__).parent.parent
    script = (
        "import sys\n"
        "from auditor.containment import rewritten\n"
        f"rewritten.serve({str(tmp_path / 'kept')!r}, {str(installed)!r})\n"
        "import pytest\n"
        "sys.exit(pytest.main(sys.argv[1:]))\n"
    )
    test = tmp_path / "test_loader.py"
    test.write_text(
        "import hypothesis.core\n\n\ndef test_rewritten():\n"
        "    assert type(hypothesis.core.__spec__.loader).__name__ == 'AssertionRewritingHook'\n"
    )

    done = subprocess.run(
        [sys.executable, "-c", script, str(test), "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )

    assert done.returncode == 0, done.stdout
