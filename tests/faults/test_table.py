"""docs/reliability.md holds the rows of the fault suite's last run, every test's."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.faults.table import ELSEWHERE, PAGE, ROOT, short_name, table


def _fault_tests() -> set[str]:
    """Every test function of tests/faults, and the fault tests that live elsewhere."""
    names = {short_name(nodeid) for nodeid in ELSEWHERE}
    for module in Path(__file__).parent.glob("test_*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        names |= {
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef)
            and node.name.startswith("test_")
            and "fault" in {arg.arg for arg in node.args.args}
        }
    return names


def test_every_fault_test_has_its_row_on_the_reliability_page():
    page = PAGE.read_text(encoding="utf-8")
    missing = sorted(name for name in _fault_tests() if f"`{name}`" not in page)
    assert missing == [], "run `python -m tests.faults.table`"


def test_the_tests_named_elsewhere_exist():
    for nodeid in ELSEWHERE:
        path, _, name = nodeid.partition("::")
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), nodeid


def test_a_fault_test_that_failed_is_a_row_not_handled():
    row = {"group": "store", "injected": "x", "did": "y", "exit_code": 0, "saw": "z"}
    row |= {"lost": "nothing", "test": "tests/faults/test_store.py::test_x"}
    written = table([row], ["tests/faults/test_store.py::test_y"]).splitlines()
    assert written[2] == "| handled | x | y | 0 | `z` | nothing | `test_x` |"
    assert written[3].startswith("| **NOT HANDLED** |")
    assert "test_y" in written[3]
