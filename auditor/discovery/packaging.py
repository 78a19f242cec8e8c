"""What a project distributes, read from its packaging metadata without running any of it.

The code under test is what the project ships: a Sphinx `conf.py` in the root or a
package of test helpers beside the real one is not, and scoring them dilutes the score.
pyproject.toml (setuptools, hatch, flit, poetry, pdm), setup.cfg and `setup.py` (read as
syntax: its `setup(...)` keywords, when they are literals or `find_packages(...)`) name
the packages; where none does, discovery falls back to looking at the folders.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_NAME_DEFAULT_BACKENDS = ("hatchling", "flit_core", "poetry", "pdm")
"""Backends that ship the package named after the project when nothing else is said."""


@dataclass(frozen=True)
class Distributed:
    """Packages (folders) and top-level modules (files) the metadata ships, and where it
    says so."""

    paths: tuple[Path, ...]
    reason: str


def distributed_code(root: Path) -> Distributed | None:
    """The code the project's packaging metadata ships, or None when no metadata names
    it (or what it names is not there)."""
    pyproject = _toml(root / "pyproject.toml")
    for found in (
        _from_pyproject(root, pyproject),
        _from_setup_cfg(root),
        _from_setup_py(root),
        _by_project_name(root, pyproject),
    ):
        if found is not None and found.paths:
            return found
    return None


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _table(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _from_pyproject(root: Path, data: dict[str, Any]) -> Distributed | None:
    setuptools = _table(data, "tool", "setuptools")
    if isinstance(setuptools, dict):
        package_dir = setuptools.get("package-dir")
        packages = setuptools.get("packages")
        modules = setuptools.get("py-modules")
        if isinstance(packages, dict) and isinstance(packages.get("find"), dict):
            find = packages["find"]
            where = [root / w for w in _strings(find.get("where", ["."]))]
            names = _find_packages(where, find.get("include"), find.get("exclude"))
            return _located(
                root,
                names,
                _strings(modules),
                where,
                "pyproject.toml [tool.setuptools.packages.find]",
            )
        if packages is not None or modules is not None:
            where = _package_dirs(root, package_dir)
            return _located(
                root,
                _strings(packages),
                _strings(modules),
                where,
                "pyproject.toml [tool.setuptools]",
            )
    hatch = _table(data, "tool", "hatch", "build", "targets", "wheel")
    if isinstance(hatch, dict):
        listed = _strings(hatch.get("packages")) or _strings(hatch.get("only-include"))
        if listed:
            paths = [root / path for path in listed]
            reason = "pyproject.toml [tool.hatch.build.targets.wheel]"
            return Distributed(_existing_code(paths), reason)
    flit = _table(data, "tool", "flit", "module", "name")
    if isinstance(flit, str):
        where = [root / "src", root]
        return _located(root, [flit], [flit], where, "pyproject.toml [tool.flit.module]")
    poetry = _table(data, "tool", "poetry", "packages")
    if isinstance(poetry, list):
        paths = [
            root / entry.get("from", ".") / entry["include"]
            for entry in poetry
            if isinstance(entry, dict) and isinstance(entry.get("include"), str)
        ]
        return Distributed(_existing_code(paths), "pyproject.toml [tool.poetry] packages")
    return None


def _by_project_name(root: Path, data: dict[str, Any]) -> Distributed | None:
    """hatch, flit, poetry and pdm ship the package named after the project by default."""
    backend = _table(data, "build-system", "build-backend")
    name = _table(data, "project", "name") or _table(data, "tool", "poetry", "name")
    if not isinstance(backend, str) or not isinstance(name, str):
        return None
    if not backend.startswith(_NAME_DEFAULT_BACKENDS):
        return None
    module = re.sub(r"[-_.]+", "_", name).lower()
    reason = f"pyproject.toml: {backend} ships the package named after the project ({name})"
    return _located(root, [module], [module], [root / "src", root], reason)


def _from_setup_cfg(root: Path) -> Distributed | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string((root / "setup.cfg").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    if not parser.has_section("options"):
        return None
    options = dict(parser.items("options"))
    packages = options.get("packages", "").strip()
    modules = _cfg_list(options.get("py_modules", ""))
    if not packages and not modules:
        return None
    where = _package_dirs(root, _cfg_mapping(options.get("package_dir", "")))
    if packages.startswith(("find:", "find_namespace:")):
        find = (
            dict(parser.items("options.packages.find"))
            if parser.has_section("options.packages.find")
            else {}
        )
        if "where" in find:
            where = [root / w for w in _cfg_list(find["where"])]
        names = _find_packages(
            where,
            _cfg_list(find.get("include", "")) or None,
            _cfg_list(find.get("exclude", "")),
            namespaces=packages.startswith("find_namespace:"),
        )
        return _located(root, names, modules, where, "setup.cfg [options] packages = find:")
    return _located(root, _cfg_list(packages), modules, where, "setup.cfg [options] packages")


def _from_setup_py(root: Path) -> Distributed | None:
    try:
        tree = ast.parse((root / "setup.py").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    call = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and _callee(node) == "setup"
        ),
        None,
    )
    if call is None:
        return None
    keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
    package_dir = _literal(keywords.get("package_dir"))
    where = _package_dirs(root, package_dir if isinstance(package_dir, dict) else None)
    modules = _literal(keywords.get("py_modules"))
    packages_node = keywords.get("packages")
    if isinstance(packages_node, ast.Call) and _callee(packages_node) in (
        "find_packages",
        "find_namespace_packages",
    ):
        arguments = {k.arg: _literal(k.value) for k in packages_node.keywords if k.arg}
        if packages_node.args:
            arguments.setdefault("where", _literal(packages_node.args[0]))
        if isinstance(arguments.get("where"), str):
            where = [root / arguments["where"]]
        names = _find_packages(
            where,
            arguments.get("include"),
            arguments.get("exclude"),
            namespaces=_callee(packages_node) == "find_namespace_packages",
        )
        return _located(
            root, names, _strings(modules), where, "setup.py packages=find_packages(...)"
        )
    packages = _literal(packages_node)
    if packages is None and modules is None:
        return None
    return _located(root, _strings(packages), _strings(modules), where, "setup.py packages=")


def _callee(call: ast.Call) -> str:
    function = call.func
    return function.id if isinstance(function, ast.Name) else getattr(function, "attr", "")


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, str)]
    return []


def _cfg_list(value: str) -> list[str]:
    return [part.strip() for part in re.split(r"[,\n]", value) if part.strip()]


def _cfg_mapping(value: str) -> dict[str, str]:
    mapping = {}
    for line in _cfg_list(value):
        key, _, folder = line.partition("=")
        mapping[key.strip()] = folder.strip()
    return mapping


def _package_dirs(root: Path, package_dir: Any) -> list[Path]:
    """Where top-level packages live: `package_dir = {"": "src"}` moves them."""
    if isinstance(package_dir, dict) and isinstance(package_dir.get(""), str):
        return [root / package_dir[""]]
    return [root]


def _find_packages(
    where: list[Path], include: Any, exclude: Any, namespaces: bool = False
) -> list[str]:
    """setuptools' `find_packages`: folders holding `__init__.py` (any folder, for
    namespace packages), by dotted name, filtered by the include and exclude patterns."""
    included = _strings(include) or ["*"]
    excluded = _strings(exclude)
    names = []
    for base in where:
        if not base.is_dir():
            continue
        for folder in sorted(path for path in base.rglob("*") if path.is_dir()):
            parts = folder.relative_to(base).parts
            if any(not part.isidentifier() for part in parts):
                continue
            if not namespaces and not all(
                (base.joinpath(*parts[: n + 1]) / "__init__.py").is_file()
                for n in range(len(parts))
            ):
                continue
            name = ".".join(parts)
            if _matches(name, included) and not _matches(name, excluded):
                names.append(name)
    return names


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _located(
    root: Path, packages: list[str], modules: list[str], where: list[Path], reason: str
) -> Distributed:
    """The folders of the outermost packages named, and the files of the modules."""
    chosen = set(packages)
    paths = []
    for name in sorted(chosen):
        if "." in name and name.rsplit(".", 1)[0] in chosen:
            continue  # inside a package already in scope
        relative = Path(*name.split("."))
        paths += [base / relative for base in where if (base / relative).is_dir()][:1]
    for name in modules:
        paths += [base / f"{name}.py" for base in where if (base / f"{name}.py").is_file()][:1]
    return Distributed(_existing_code(paths), reason)


def _existing_code(paths: Iterable[Path]) -> tuple[Path, ...]:
    return tuple(
        sorted(
            {
                path.resolve()
                for path in paths
                if (path.is_dir() and any(path.rglob("*.py")))
                or (path.is_file() and path.suffix == ".py")
            }
        )
    )
