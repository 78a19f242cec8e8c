"""A probe records the functions of the code under test it and its forks started (Python
3.12+), so that its result is kept until one of them changes (`probes.ran`,
`probes.cache`).

Checked in a real interpreter with `sys.monitoring`: this one, or a 3.12+ installed
beside it (pyenv); the suite may run on an older one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.probes.cache import SourceCode

ROOT = Path(__file__).resolve().parents[2]

SHOP = """\
def price(n):
    \"\"\"What `n` items cost.\"\"\"
    return tax(n) + 1


def label(n):
    return str(n)


def tax(n):
    return sum([2 for _ in range(n)])


class Cart:
    def total(self, n):
        return (lambda: price(n))()
"""

RECORD = """\
import json, os, signal, sys
sys.path.insert(0, os.getcwd())
import shop
from auditor.probes.ran import RanLog

shop.label(1)  # before the probe: the parent process of its fork ran it
log = RanLog()
log.record([os.path.realpath("shop.py")])
{calls}
print(json.dumps(log.ran()))
"""

IN_A_FORK_KILLED = """\
pid = os.fork()
if pid == 0:
    shop.tax(2)
    os.kill(os.getpid(), signal.SIGKILL)
os.waitpid(pid, 0)
"""


def _python_with_monitoring() -> str:
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [sys.executable, *sorted(map(str, pyenv.glob("versions/3.1[2-9]*/bin/python3")))]
    for python in candidates:
        check = [python, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"]
        if subprocess.run(check, check=False).returncode == 0:
            return python
    pytest.fail("no Python 3.12+ (sys.monitoring) to check the recorder with: install one")


def _ran(tmp_path: Path, calls: str) -> list[str]:
    """The bodies of SHOP a probe that makes `calls` ran, as the cache names them."""
    (tmp_path / "shop.py").write_text(SHOP, encoding="utf-8")
    (tmp_path / "record.py").write_text(RECORD.format(calls=calls), encoding="utf-8")
    shown = subprocess.run(
        [_python_with_monitoring(), "record.py"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ran = [(path, line) for path, line in json.loads(shown)]
    code = SourceCode(tmp_path, [tmp_path / "shop.py"])
    return [name for name, _ in code.bodies_of(ran)]


def test_a_probe_records_the_functions_it_started_and_no_other(tmp_path):
    assert _ran(tmp_path, "shop.price(3)") == ["shop.py::price", "shop.py::tax"]


def test_code_inside_a_method_counts_as_the_method(tmp_path):
    """The lambda runs `price` too: a body's nested code is part of it."""
    ran = _ran(tmp_path, "shop.Cart().total(2)")
    assert ran == ["shop.py::Cart.total", "shop.py::price", "shop.py::tax"]


def test_a_function_the_process_ran_before_the_probe_counts_when_the_probe_runs_it(tmp_path):
    assert _ran(tmp_path, "shop.label(2)") == ["shop.py::label"]


def test_a_function_started_in_a_fork_below_counts_though_the_fork_was_killed(tmp_path):
    """A witness search runs each mutant in a fork of its own, killed on a timeout."""
    assert _ran(tmp_path, IN_A_FORK_KILLED) == ["shop.py::tax"]


def test_a_search_that_reuses_drawn_inputs_counts_what_drawing_them_ran():
    from auditor.probes.child import _with_drawing

    assert _with_drawing([("shop.py", 3)], [[("shop.py", 11)]]) == [
        ("shop.py", 3),
        ("shop.py", 11),
    ]


def test_a_search_that_reuses_inputs_drawn_unrecorded_depends_on_all_the_code():
    from auditor.probes.child import _with_drawing

    assert _with_drawing([("shop.py", 3)], [None]) is None
