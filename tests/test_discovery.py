import shutil
from pathlib import Path

import pytest

from auditor.discovery.project import discover, is_test_file
from auditor.errors import DiscoveryError
from tests.conftest import FIXTURES


def names(paths) -> list[str]:
    return [path.name for path in paths]


def test_flat_layout_finds_the_package_next_to_the_tests():
    project = discover(["tests_shallow"], [], FIXTURES / "shop")
    assert project.root == FIXTURES / "shop"
    assert names(project.source_paths) == ["shop"]
    assert project.source_roots == (FIXTURES / "shop",)


def test_src_layout_finds_packages_under_src():
    project = discover(["tests_strong"], [], FIXTURES / "textkit")
    assert names(project.source_paths) == ["textkit"]
    assert project.source_roots == (FIXTURES / "textkit" / "src",)


def test_several_packages_are_all_under_test():
    project = discover(["tests_strong"], [], FIXTURES / "ledger")
    assert names(project.source_paths) == ["ledger", "ledger_io"]


def test_src_flag_selects_one_package():
    project = discover(["tests_strong"], ["ledger_io"], FIXTURES / "ledger")
    assert names(project.source_paths) == ["ledger_io"]


def test_unknown_src_is_an_error():
    with pytest.raises(DiscoveryError, match="source 'nothere' not found"):
        discover(["tests_strong"], ["nothere"], FIXTURES / "ledger")


def test_missing_test_path_is_an_error():
    with pytest.raises(DiscoveryError, match="test path 'nope' does not exist"):
        discover(["nope"], [], FIXTURES / "shop")


def test_rootdir_and_ini_options_come_from_pyproject():
    project = discover(["tests_strong"], [], FIXTURES / "shop")
    assert project.inifile == FIXTURES / "shop" / "pyproject.toml"
    assert "testpaths" in project.ini_options


def test_test_files_and_conftests_are_listed():
    project = discover(["tests_strong"], [], FIXTURES / "ledger")
    assert names(project.test_files) == ["test_accounts.py", "test_io.py", "test_journal.py"]
    assert names(project.conftest_files) == ["conftest.py"]


def test_project_without_code_asks_for_src(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_x():\n    assert 1\n")
    (tmp_path / "pyproject.toml").write_text("")
    with pytest.raises(DiscoveryError, match="name it with --src"):
        discover(["tests"], [], tmp_path)


def test_without_config_or_markers_the_folder_audit_runs_in_is_the_root(tmp_path: Path):
    """pytest alone would take tests/ as its rootdir, and find no code beside it."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text("from calc import add\n")
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    project = discover(["tests"], [], tmp_path)
    assert project.root == tmp_path.resolve()
    assert project.source_files == (tmp_path.resolve() / "calc.py",)


def test_run_from_inside_the_tests_without_config_the_tests_are_the_root(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text("from calc import add\n")
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    project = discover(["."], ["../calc.py"], tmp_path / "tests")
    assert project.root == (tmp_path / "tests").resolve()
    assert project.source_files == (tmp_path.resolve() / "calc.py",)


def test_dot_pytest_ini_is_read_as_the_inifile(tmp_path: Path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / ".pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    project = discover(["tests"], [], tmp_path)
    assert project.inifile == tmp_path / ".pytest.ini"
    assert project.ini_options == {"testpaths": "tests"}


def test_empty_pytest_ini_still_marks_the_rootdir(tmp_path: Path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "pytest.ini").write_text("")
    project = discover(["tests"], [], tmp_path)
    assert (project.root, project.inifile) == (tmp_path, tmp_path / "pytest.ini")


def test_doctest_modules_adds_the_code_under_test_to_what_pytest_collects(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests", "pkg"]\naddopts = "--doctest-modules"\n'
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    project = discover(["tests"], [], tmp_path)
    assert project.collect_paths == (tmp_path / "tests", tmp_path / "pkg")


def test_without_doctest_modules_pytest_collects_only_the_tests():
    project = discover(["tests_shallow"], [], FIXTURES / "shop")
    assert project.collect_paths == project.test_paths


def test_a_package_holding_only_tests_is_not_code_under_test(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (tmp_path / "app.py").write_text("def f():\n    return 1\n")
    tests = tmp_path / "checks" / "unit"
    tests.mkdir(parents=True)
    for folder in (tmp_path / "checks", tests):
        (folder / "__init__.py").write_text("")
    (tests / "test_app.py").write_text("def test_f():\n    assert True\n")
    project = discover(["checks/unit"], [], tmp_path)
    assert [path.name for path in project.source_paths] == ["app.py"]


def test_the_packaging_metadata_decides_the_code_under_test():
    project = discover(["tests"], [], FIXTURES / "unitlib")
    assert names(project.source_paths) == ["unitlib"]
    assert "pyproject.toml [tool.setuptools]" in project.scope_reason


def test_without_metadata_a_docs_config_and_a_package_of_test_helpers_are_left_out(
    tmp_path: Path,
):
    shutil.copytree(FIXTURES / "unitlib", tmp_path / "unitlib")
    pyproject = tmp_path / "unitlib" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("[tool.setuptools]", "[tool.other]"))
    project = discover(["tests"], [], tmp_path / "unitlib")
    assert names(project.source_paths) == ["unitlib"]
    assert "no packaging metadata" in project.scope_reason
    assert {path.name: reason.split(":")[0] for path, reason in project.left_out} == {
        "testers": "imports a test framework",
        "conf.py": "a build, task or documentation script",
    }


def _project_with_python_files(tmp_path: Path) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\npython_files = check_*.py\n")
    (tmp_path / "shipping").mkdir()
    (tmp_path / "shipping" / "__init__.py").write_text("")
    (tmp_path / "shipping" / "rates.py").write_text("def rate(w):\n    return w\n")
    (tmp_path / "shipping" / "check_rates.py").write_text("def test_rate():\n    pass\n")
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "check_rates.py").write_text("def test_rate():\n    pass\n")
    (tmp_path / "checks" / "test_helpers.py").write_text("VALUE = 1\n")
    return tmp_path


def test_the_projects_python_files_say_which_files_are_tests(tmp_path: Path):
    project = discover(["checks"], [], _project_with_python_files(tmp_path))
    assert names(project.test_files) == ["check_rates.py"]
    assert names(project.source_files) == ["__init__.py", "rates.py"]
    assert "*/check_*.py" in project.test_code


def test_a_folder_named_like_a_test_does_not_make_its_files_tests(tmp_path: Path):
    root = tmp_path / "test_area" / "project"
    shutil.copytree(FIXTURES / "shop", root, ignore=shutil.ignore_patterns(".audit"))
    project = discover(["tests_shallow"], [], root)
    assert "cart.py" in names(project.source_files)
    assert not any(is_test_file(path, project.test_file_patterns) for path in project.source_files)
