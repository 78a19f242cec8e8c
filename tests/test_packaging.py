"""The code a project ships, read from its packaging metadata without running it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.discovery.packaging import distributed_code


def project(tmp_path: Path, files: dict[str, str], packages: tuple[str, ...] = ()) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    for package in packages:
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("VALUE = 1\n")
    return tmp_path


def shipped(root: Path) -> list[str]:
    found = distributed_code(root)
    assert found is not None
    return [path.relative_to(root.resolve()).as_posix() for path in found.paths]


def test_setuptools_packages_in_pyproject_are_shipped(tmp_path):
    root = project(
        tmp_path,
        {"pyproject.toml": '[tool.setuptools]\npackages = ["lib", "lib.sub"]\n'},
        packages=("lib", "lib/sub", "helpers"),
    )
    assert shipped(root) == ["lib"]


def test_setuptools_package_dir_moves_the_packages_under_src(tmp_path):
    pyproject = '[tool.setuptools]\npackages = ["lib"]\npackage-dir = {"" = "src"}\n'
    root = project(tmp_path, {"pyproject.toml": pyproject}, packages=("src/lib",))
    assert shipped(root) == ["src/lib"]


def test_setuptools_find_applies_its_exclude_patterns(tmp_path):
    pyproject = '[tool.setuptools.packages.find]\nexclude = ["testers*"]\n'
    root = project(tmp_path, {"pyproject.toml": pyproject}, packages=("lib", "testers"))
    assert shipped(root) == ["lib"]


def test_hatch_wheel_packages_are_paths(tmp_path):
    pyproject = '[tool.hatch.build.targets.wheel]\npackages = ["src/lib"]\n'
    root = project(tmp_path, {"pyproject.toml": pyproject}, packages=("src/lib", "src/other"))
    assert shipped(root) == ["src/lib"]


def test_flit_ships_the_module_it_names(tmp_path):
    pyproject = '[tool.flit.module]\nname = "lib"\n'
    root = project(tmp_path, {"pyproject.toml": pyproject, "lib.py": "X = 1\n"})
    assert shipped(root) == ["lib.py"]


def test_poetry_packages_include_from_a_folder(tmp_path):
    pyproject = '[tool.poetry]\nname = "x"\npackages = [{include = "lib", from = "src"}]\n'
    root = project(tmp_path, {"pyproject.toml": pyproject}, packages=("src/lib",))
    assert shipped(root) == ["src/lib"]


def test_a_name_default_backend_ships_the_package_named_after_the_project(tmp_path):
    pyproject = """\
        [build-system]
        build-backend = "hatchling.build"

        [project]
        name = "Unit-Lib"
        """
    root = project(tmp_path, {"pyproject.toml": pyproject}, packages=("src/unit_lib", "docs"))
    assert shipped(root) == ["src/unit_lib"]


def test_setup_cfg_find_with_where_and_exclude(tmp_path):
    setup_cfg = """\
        [options]
        packages = find:
        package_dir =
            =src

        [options.packages.find]
        where = src
        exclude = tests*
        """
    root = project(tmp_path, {"setup.cfg": setup_cfg}, packages=("src/lib", "src/tests"))
    assert shipped(root) == ["src/lib"]


def test_setup_py_is_read_as_syntax_never_run(tmp_path):
    setup_py = """\
        import sys
        from setuptools import setup, find_packages
        sys.exit("setup.py was run")
        setup(name="x", packages=find_packages(exclude=["testers"]), py_modules=["tool"])
        """
    files = {"setup.py": setup_py, "tool.py": "X = 1\n"}
    root = project(tmp_path, files, packages=("lib", "testers"))
    assert shipped(root) == ["lib", "tool.py"]


def test_no_metadata_naming_packages_says_nothing(tmp_path):
    root = project(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n'}, packages=("lib",))
    assert distributed_code(root) is None


def test_metadata_naming_code_that_is_not_there_says_nothing(tmp_path):
    pyproject = '[tool.setuptools]\npackages = ["gone"]\n'
    root = project(tmp_path, {"pyproject.toml": pyproject}, packages=("lib",))
    assert distributed_code(root) is None
