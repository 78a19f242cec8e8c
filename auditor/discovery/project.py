"""Find the project around a test folder: rootdir, pytest ini, code under test, tests.

The rules follow pytest's own rootdir search (the first ini file up from the tests wins)
so that the baseline run sees the same configuration the user's `pytest` does.
"""

from __future__ import annotations

import configparser
import fnmatch
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from auditor.discovery.packaging import distributed_code
from auditor.discovery.pytest_options import (
    PytestOptions,
    names_anyio_plugin,
    own_pytest_options,
)
from auditor.errors import DiscoveryError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_NOT_SOURCE_DIRS = {
    "tests",
    "test",
    "testing",
    "docs",
    "doc",
    "examples",
    "example",
    "fixtures",
    "build",
    "dist",
    "bench",
    "benchmarks",
    "scripts",
    "site-packages",
    "node_modules",
}
_NOT_SOURCE_MODULES = {
    "setup.py",
    "conftest.py",
    "noxfile.py",
    "fabfile.py",
    "tasks.py",
    "conf.py",
}
_TEST_FRAMEWORK_IMPORT = re.compile(
    r"^\s*(?:import|from)\s+(?:pytest|_pytest|unittest|hypothesis|mock)\b", re.MULTILINE
)
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
PYTEST_TEST_FILES = ("test_*.py", "*_test.py")
"""pytest's default `python_files`."""


def test_file_patterns(ini_options: dict[str, str]) -> tuple[str, ...]:
    """Which files are tests: the project's pytest `python_files`, else pytest's default.
    The one rule discovery, coverage, the argument recorder and `audit smells` follow."""
    return tuple(_split_list(ini_options.get("python_files", ""))) or PYTEST_TEST_FILES


def is_test_file(path: Path, patterns: Sequence[str]) -> bool:
    """pytest matches a `python_files` pattern against the file's name."""
    return any(fnmatch.fnmatchcase(path.name, pattern) for pattern in patterns)


def relative(path: str | Path, root: Path) -> str:
    """A path as the report writes it: relative to `root` with forward slashes, or as
    given when it lies outside."""
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()


def contents(path: Path) -> bytes:
    """A file's bytes, empty when it cannot be read (removed since the run began): what
    content keys are made of."""
    try:
        return path.read_bytes()
    except OSError:
        return b""


def module_name(path: Path, source_roots: Sequence[Path]) -> str:
    """The dotted name `path` imports under from the first source root that holds it."""
    for root in source_roots:
        if root in path.parents:
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts)
    return path.stem


@dataclass(frozen=True)
class Project:
    """What the later stages need to know about the project under audit."""

    root: Path
    pyproject: Path | None
    inifile: Path | None
    ini_options: dict[str, str]
    test_paths: tuple[Path, ...]
    test_files: tuple[Path, ...]
    conftest_files: tuple[Path, ...]
    source_roots: tuple[Path, ...]
    """Folders to put on sys.path so the packages import (root, or root/src)."""
    source_paths: tuple[Path, ...]
    """Packages (folders) and top-level modules (files) under test."""
    source_files: tuple[Path, ...] = field(default=())
    scope_reason: str = ""
    """Why these are the code under test: the option, the packaging metadata, or the
    folders looked at."""
    left_out: tuple[tuple[Path, str], ...] = ()
    """Packages next to the code under test that are not, and why."""
    test_file_patterns: tuple[str, ...] = PYTEST_TEST_FILES
    """pytest's `python_files` for this project (`test_file_patterns`)."""
    names_anyio: bool = True
    """Whether its files name a part of anyio's pytest plugin (`names_anyio_plugin`)."""

    def relative(self, path: str | Path) -> str:
        """`path` relative to the project root, as the report writes it."""
        return relative(path, self.root)

    def module_name(self, path: Path) -> str:
        """The dotted name a file of the code under test imports under."""
        return module_name(path, self.source_roots)

    @property
    def pytest_options(self) -> PytestOptions:
        """What audit's own pytest runs add and set aside (pytest-cov's options)."""
        return own_pytest_options(self.ini_options, os.environ, self.names_anyio)

    @property
    def collect_paths(self) -> tuple[Path, ...]:
        """What pytest is given: the tests, plus the code under test when the project's
        config collects doctests (`--doctest-modules`) from it, as a bare `pytest` would."""
        if "--doctest-modules" not in self.ini_options.get("addopts", ""):
            return self.test_paths
        configured = self.ini_options.get("testpaths", "")
        testpaths = {(self.root / name).resolve() for name in _split_list(configured)}
        doctested = tuple(
            path
            for path in self.source_paths
            if not testpaths or any(path == t or t in path.parents for t in testpaths)
        )
        return self.test_paths + doctested

    @property
    def test_code(self) -> tuple[str, ...]:
        """coverage.py `omit` patterns for test code that lives among the sources (the
        `pkg/tests/` layout): test files are never code under test."""
        inside = [
            path
            for path in self.test_paths
            if any(source in path.parents for source in self.source_paths)
        ]
        folders = [str(path / "*") if path.is_dir() else str(path) for path in inside]
        files = [f"*/{pattern}" for pattern in (*self.test_file_patterns, "conftest.py")]
        return (*folders, *files)

    @property
    def source_package_names(self) -> tuple[str, ...]:
        return tuple(sorted(path.stem for path in self.source_paths))


def _pytest_section(candidate: Path) -> dict[str, str] | None:
    """The pytest options in an ini-style file, or None when it configures no pytest."""
    try:
        text = candidate.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if candidate.name == "pyproject.toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None
        tool = data.get("tool", {}).get("pytest", {})
        options = tool.get("ini_options", tool) if isinstance(tool, dict) else None
        if not isinstance(options, dict) or "pytest" not in data.get("tool", {}):
            return None
        return {key: str(value) for key, value in options.items() if key != "ini_options"}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    dedicated = candidate.name in ("pytest.ini", ".pytest.ini")
    section = "tool:pytest" if candidate.name == "setup.cfg" else "pytest"
    if not parser.has_section(section):
        return {} if dedicated else None  # a pytest.ini configures pytest even when empty
    return dict(parser.items(section))


def _split_list(value: str) -> list[str]:
    """An ini list as discovery reads it: a TOML list's repr or whitespace-separated names."""
    return [part.strip("[]'\",") for part in value.split() if part.strip("[]'\",")]


def find_rootdir(start: Path, cwd: Path | None = None) -> tuple[Path, Path | None, dict[str, str]]:
    """pytest's rule: the nearest ancestor with a pytest ini file, else a project marker.

    With neither, pytest takes the test folder itself; audit takes the folder it runs
    in when that holds the tests, so `calc.py` beside `tests/` is found as the code."""
    for folder in (start, *start.parents):
        for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
            candidate = folder / name
            if candidate.is_file():
                options = _pytest_section(candidate)
                if options is not None:
                    return folder, candidate, options
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in _PROJECT_MARKERS):
            return folder, None, {}
    if cwd is not None and (cwd == start or cwd in start.parents):
        return cwd, None, {}
    return start, None, {}


def _has_code_besides_tests(
    package: Path, test_paths: tuple[Path, ...], patterns: Sequence[str]
) -> bool:
    """Whether a package that holds tests (`pkg/tests/`) has modules of its own."""
    return any(
        not is_test_file(file, patterns)
        and file.name != "conftest.py"
        and not (file.name == "__init__.py" and file.stat().st_size == 0)
        and not any(test == file or test in file.parents for test in test_paths)
        for file in _python_files(package)
    )


def _source_candidates(
    base: Path, test_paths: tuple[Path, ...], patterns: Sequence[str]
) -> list[Path]:
    found = []
    for child in sorted(base.iterdir()):
        if child.name.startswith((".", "_")) or child.name in _NOT_SOURCE_DIRS:
            continue
        if (child.is_dir() and (child / "__init__.py").is_file()) or (
            child.is_file()
            and child.suffix == ".py"
            and child.name not in _NOT_SOURCE_MODULES
            and not is_test_file(child, patterns)
        ):
            found.append(child)
    return _not_tests(found, test_paths, patterns)


def _not_tests(
    paths: list[Path], test_paths: tuple[Path, ...], patterns: Sequence[str]
) -> list[Path]:
    """The paths that are not the tests, nor packages holding only tests."""
    return [
        path
        for path in paths
        if not any(path == test for test in test_paths)
        and not (
            any(path in test.parents for test in test_paths)
            and not _has_code_besides_tests(path, test_paths, patterns)
        )
    ]


def _is_test_helper(package: Path, test_paths: tuple[Path, ...], patterns: Sequence[str]) -> bool:
    """A package beside the code whose every module with code (the tests it may hold
    aside) imports a test framework: helpers the tests use (`testers/`), not code the
    project ships. One module importing pytest (a plugin a library ships) is not enough."""
    if not package.is_dir():
        return False
    texts = [
        file.read_text(encoding="utf-8", errors="replace")
        for file in _python_files(package)
        if not is_test_file(file, patterns)
        and file.name != "conftest.py"
        and not any(test == file or test in file.parents for test in test_paths)
    ]
    with_code = [text for text in texts if text.strip()]
    return bool(with_code) and all(_TEST_FRAMEWORK_IMPORT.search(text) for text in with_code)


def _code_under_test(
    root: Path, tests: tuple[Path, ...], patterns: Sequence[str]
) -> tuple[list[Path], str, list[tuple[Path, str]]]:
    """The packages and modules under test, why, and what was left out and why: what the
    packaging metadata ships, else the packages and modules in src/ or the root."""
    distributed = distributed_code(root)
    if distributed is not None:
        chosen = _not_tests(list(distributed.paths), tests, patterns)
        if chosen:
            return chosen, f"shipped by the packaging metadata: {distributed.reason}", []
    base = root / "src" if (root / "src").is_dir() else root
    place = "src/" if base != root else "the project root"
    reason = f"no packaging metadata names the packages: the packages and modules in {place}"
    candidates = _source_candidates(base, tests, patterns)
    helpers = [path for path in candidates if _is_test_helper(path, tests, patterns)]
    left_out = [(path, "imports a test framework: a helper of the tests") for path in helpers]
    left_out += [
        (base / name, "a build, task or documentation script")
        for name in sorted(_NOT_SOURCE_MODULES - {"conftest.py"})
        if (base / name).is_file()
    ]
    return [path for path in candidates if path not in helpers], reason, left_out


def _resolve_src(root: Path, names: list[str]) -> list[Path]:
    """`--src` accepts package names (looked up in root and root/src) or paths."""
    resolved = []
    for name in names:
        options = [Path(name), root / name, root / "src" / name, root / f"{name}.py"]
        options += [root / "src" / f"{name}.py"]
        match = next((option for option in options if option.exists()), None)
        if match is None:
            raise DiscoveryError(f"source '{name}' not found under {root} or {root / 'src'}")
        resolved.append(match.resolve())
    return resolved


def _import_root(path: Path) -> Path:
    """The folder to put on sys.path so `path` imports under its full package name."""
    folder = path.parent
    while (folder / "__init__.py").is_file():
        folder = folder.parent
    return folder


def _python_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(
        file
        for file in path.rglob("*.py")
        if not any(part.startswith(".") or part == "__pycache__" for part in file.parts)
    )


def _refuse_a_module_named_like_ours(root: Path, source_roots: tuple[Path, ...]) -> None:
    """audit's test processes start as `python -m auditor...` in the project root, with
    the source roots on their path (as `python -m pytest` would): a module named
    `auditor` there would be imported in place of ours."""
    ours = Path(__file__).resolve().parents[1] / "__init__.py"
    for folder in sorted({root, *source_roots}):
        for module in (folder / "auditor" / "__init__.py", folder / "auditor.py"):
            if module.is_file() and module.resolve() != ours:  # audit auditing itself is fine
                shown = module.relative_to(root) if module.is_relative_to(root) else module
                raise DiscoveryError(
                    f"{shown}: a top-level module named 'auditor' would be imported in "
                    "place of audit's own in the test processes; audit cannot run this "
                    "project"
                )


def test_path(cwd: Path, raw: str) -> Path:
    """The test folder or file `raw` names, resolved, or a DiscoveryError saying why not."""
    given = cwd / raw
    if not given.exists():  # False for a symlink loop, which `resolve()` raises on
        loop = " (a symlink loop)" if given.is_symlink() else ""
        raise DiscoveryError(f"test path '{raw}' does not exist{loop}")
    if given.is_file() and given.suffix != ".py":
        raise DiscoveryError(f"test path '{raw}' is a file, not a test folder or a .py file")
    return given.resolve()


def discover(test_paths: list[str], src: list[str], cwd: Path | None = None) -> Project:
    """Locate everything the pipeline needs, or raise DiscoveryError naming what is missing."""
    cwd = (cwd or Path.cwd()).resolve()
    if not test_paths:
        test_paths = ["tests"]
    tests = tuple(test_path(cwd, raw) for raw in test_paths)
    anchor = tests[0] if tests[0].is_dir() else tests[0].parent
    root, inifile, ini_options = find_rootdir(anchor, cwd)
    pyproject = root / "pyproject.toml"
    patterns = test_file_patterns(ini_options)

    left_out: list[tuple[Path, str]] = []
    if src:
        source_paths = _resolve_src(root, src)
        reason = "named by --src, [tool.audit] src or mutmut's paths_to_mutate"
    else:
        source_paths, reason, left_out = _code_under_test(root, tests, patterns)
    if not source_paths:
        raise DiscoveryError(
            f"no code under test found in {root} (looked for packages in src/ and the "
            "project root); name it with --src"
        )
    source_roots = tuple(sorted({_import_root(path) for path in source_paths}))
    _refuse_a_module_named_like_ours(root, source_roots)

    in_tests = {file for path in tests for file in _python_files(path)}
    test_files = sorted(file for file in in_tests if is_test_file(file, patterns))
    conftests = {file for file in in_tests if file.name == "conftest.py"}
    for folder in (anchor, *anchor.parents):
        if folder == root.parent:
            break
        if (folder / "conftest.py").is_file():
            conftests.add(folder / "conftest.py")
    source_files = sorted(
        {
            file
            for path in source_paths
            for file in _python_files(path)
            if not is_test_file(file, patterns)
            and file.name != "conftest.py"
            and not any(test == file or test in file.parents for test in tests)
        }
    )
    config = [file for file in (inifile, pyproject) if file is not None and file.is_file()]
    read = sorted({*in_tests, *conftests, *source_files, *config})
    return Project(
        root=root,
        pyproject=pyproject if pyproject.is_file() else None,
        inifile=inifile,
        ini_options=ini_options,
        test_paths=tests,
        test_files=tuple(test_files),
        conftest_files=tuple(sorted(conftests)),
        source_roots=source_roots,
        source_paths=tuple(sorted(source_paths)),
        source_files=tuple(source_files),
        scope_reason=reason,
        left_out=tuple(left_out),
        test_file_patterns=patterns,
        names_anyio=names_anyio_plugin(read, os.environ),
    )
