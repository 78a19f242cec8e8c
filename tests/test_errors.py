"""Every user-facing error is a class of `auditor/errors.py`'s tree, so code that embeds
audit can catch each kind by type, and the tree drawn in its docstring is complete."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from auditor import errors

ROOT = Path(__file__).parent.parent
PACKAGES = ("auditor", "mutators", "reports")


def _raised_names() -> list[tuple[str, str]]:
    raised = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                    function = node.exc.func
                    if isinstance(function, ast.Name):
                        raised.append((f"{path.relative_to(ROOT)}:{node.lineno}", function.id))
    return raised


def _error_classes() -> dict[str, type[errors.AuditError]]:
    return {
        name: value
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, errors.AuditError)
    }


def test_the_scan_finds_the_raises_of_the_package():
    names = {name for _, name in _raised_names()}
    assert {"ConfigError", "ReportError", "SuiteUnusableError"} <= names


def test_no_code_raises_the_base_class_itself():
    assert [where for where, name in _raised_names() if name == "AuditError"] == []


def test_every_error_class_is_drawn_in_the_tree():
    tree = errors.__doc__ or ""
    assert [name for name in _error_classes() if name not in tree] == []


def test_every_subclass_names_its_stage_without_being_told():
    fixed = {
        name: cls("message").stage
        for name, cls in _error_classes().items()
        if name not in {"AuditError", "IncompleteRunError"}
    }
    assert fixed["ReportError"] == "report"
    assert fixed["AcceptanceError"] == "accept"
    assert all(stage for stage in fixed.values())
