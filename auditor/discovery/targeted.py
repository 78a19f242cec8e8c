"""The modules of the code under test that the audited test files import, read statically.

A suite written for two modules of a package is judged on those two: its targeted score
counts the mutants of the modules its test files import (`import pkg.mod`, `from pkg.mod
import f`, and `from pkg import f` followed to the module `pkg/__init__.py` re-exports `f`
from), not those of modules it never meant to test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from auditor.discovery.project import Project
from auditor.discovery.test_source import Import, read_test_source


def targeted_files(project: Project) -> tuple[str, ...]:
    """Source files (relative to the root) that the test files import, sorted."""
    modules = _module_files(project)
    found: set[Path] = set()
    seen: set[tuple[str, str | None]] = set()  # one pass over all test files: each once
    exports: dict[Path, list[tuple[str, str | None]]] = {}
    for test_file in project.test_files:
        for name, imported in _imports(test_file, modules):
            found |= _resolve(name, imported, modules, seen, exports)
    return tuple(sorted(project.relative(path) for path in found))


def _module_files(project: Project) -> dict[str, Path]:
    """Dotted module name -> file, for every source file."""
    modules = {}
    for file in project.source_files:
        root = next((r for r in project.source_roots if r in file.parents), None)
        if root is None:
            continue
        parts = file.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            modules[".".join(parts)] = file
    return modules


def _imports(file: Path, modules: dict[str, Path]) -> Iterator[tuple[str, str | None]]:
    """(module, name imported from it or None) for each import in the file."""
    package = _package_of(file, modules)
    for imported in read_test_source(file).imports:
        module = _absolute(imported, package)
        if module is not None:
            yield module, imported.name


def _package_of(file: Path, modules: dict[str, Path]) -> str | None:
    """The dotted package a file lives in, when it is inside the code (`pkg/tests/`)."""
    for name, path in modules.items():
        if path.name == "__init__.py" and path.parent in file.parents:
            return ".".join((name, *file.parent.relative_to(path.parent).parts))
    return None


def _absolute(imported: Import, package: str | None) -> str | None:
    if not imported.level:
        return imported.module
    if package is None:
        return None
    base = package.split(".")
    if imported.level > 1:
        base = base[: -(imported.level - 1)]
    return ".".join([*base, imported.module] if imported.module else base)


def _resolve(
    module: str,
    name: str | None,
    modules: dict[str, Path],
    seen: set[tuple[str, str | None]],
    exports: dict[Path, list[tuple[str, str | None]]],
) -> set[Path]:
    """The files an import reaches (those not reached before, by `seen`): the module, a
    submodule it names, and the module a package's `__init__` re-exports the name from
    (each `__init__` read once, into `exports`)."""
    if (module, name) in seen:
        return set()
    seen.add((module, name))
    if name is not None and f"{module}.{name}" in modules:
        return {modules[f"{module}.{name}"]}
    file = modules.get(module)
    if file is None:
        return set()
    found = {file}
    if file.name == "__init__.py":
        if file not in exports:
            exports[file] = list(_imports(file, modules))
        for origin, exported in exports[file]:
            if name is None or exported == name:
                found |= _resolve(origin, exported, modules, seen, exports)
    return found
