"""Benchmark: the coding agent's loop on a real project, default settings.

    python bench/inline_loop.py marshmallow
    python bench/inline_loop.py tabulate --workdir /tmp/audit-bench

Unpacks the project's sdist into a fresh git repository (the same download and
virtualenv as compare_mutmut.py, with the `mcp` extra), then times what an agent asks,
twice, each time on a fresh copy: first on the command line as the README gives it
(`audit TESTS --json REPORT`), then through the `audit` tool of one `audit mcp` server
(the SDK's client over stdio) kept open for the whole loop, as an agent keeps it:

1. cold: the first run, nothing in `.audit/` (on the command line in both passes);
2. warm: the same again, nothing changed;
3. one change at a time: a line of one function rewritten with the same behaviour and a
   new test file that calls the function, then `audit TESTS --diff HEAD` (the tool's
   `diff`); the change is committed before the next, so each run is about one function
   and one test.

Prints each run's wall time and stage times, the mutants in scope and how many came
from the cache, and the median of the changes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compare_mutmut import PROJECTS, bench_python, fetch, unpack


@dataclass(frozen=True)
class Change:
    """One step of the loop: `old` (a whole line of `file`) becomes `new`, and `test` is
    a new test file calling the function."""

    file: str
    old: str
    new: str
    test: str


_RAISES = "import pytest\n\nfrom marshmallow import ValidationError, validate, utils\n\n\n"

CHANGES = {
    "marshmallow": [
        Change(
            "src/marshmallow/validate.py",
            "        if self.max is not None and length > self.max:\n",
            "        if self.max is not None and self.max < length:\n",
            _RAISES + "def test_too_long():\n"
            "    with pytest.raises(ValidationError):\n"
            '        validate.Length(max=1)("ab")\n',
        ),
        Change(
            "src/marshmallow/validate.py",
            "        return self.error.format(input=value, other=self.comparable)\n",
            "        return self.error.format(other=self.comparable, input=value)\n",
            _RAISES + "def test_unequal_names_the_other():\n"
            '    with pytest.raises(ValidationError, match="3"):\n'
            "        validate.Equal(3)(4)\n",
        ),
        Change(
            "src/marshmallow/utils.py",
            "    return [d[key] for d in dictlist]\n",
            "    return [item[key] for item in dictlist]\n",
            _RAISES + "def test_pluck():\n"
            '    assert utils.pluck([{"a": 1}, {"a": 2}], "a") == [1, 2]\n',
        ),
        Change(
            "src/marshmallow/utils.py",
            "    return str(val)\n",
            "    return val if type(val) is str else str(val)\n",
            _RAISES + "def test_bytes_become_text():\n"
            '    assert utils.ensure_text_type(b"x") == "x"\n',
        ),
        Change(
            "src/marshmallow/utils.py",
            "    if not callable(obj):\n",
            "    if callable(obj) is False:\n",
            _RAISES + "def test_not_callable():\n"
            "    with pytest.raises(TypeError):\n"
            "        utils.callable_or_raise(1)\n",
        ),
        Change(
            "src/marshmallow/validate.py",
            "        if not method(**self.kwargs):\n",
            "        if bool(method(**self.kwargs)) is False:\n",
            _RAISES + "def test_predicate_false():\n"
            "    with pytest.raises(ValidationError):\n"
            '        validate.Predicate("isdigit")("ab")\n',
        ),
        Change(
            "src/marshmallow/validate.py",
            "        return self.error.format(input=value, values=self.values_text)\n",
            "        return self.error.format(values=self.values_text, input=value)\n",
            _RAISES + "def test_none_of():\n"
            '    with pytest.raises(ValidationError, match="1"):\n'
            "        validate.NoneOf([1], error='{input} in {values}')(1)\n",
        ),
        Change(
            "src/marshmallow/validate.py",
            "            if value not in self.choices:\n",
            "            if not (value in self.choices):\n",
            _RAISES + "def test_one_of():\n"
            "    with pytest.raises(ValidationError):\n"
            "        validate.OneOf([1])(2)\n",
        ),
        Change(
            "src/marshmallow/utils.py",
            "    return is_iterable_but_not_string(obj) and not isinstance(obj, Mapping)\n",
            "    return not isinstance(obj, Mapping) and is_iterable_but_not_string(obj)\n",
            _RAISES + "def test_is_collection():\n"
            '    assert utils.is_collection([1]) and not utils.is_collection({"a": 1})\n',
        ),
        Change(
            "src/marshmallow/utils.py",
            "    return timestamp(value) * 1000\n",
            "    return 1000 * timestamp(value)\n",
            _RAISES + "import datetime as dt\n\n\ndef test_timestamp_ms():\n"
            "    second = dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc)\n"
            "    assert utils.timestamp_ms(second) == 1000\n",
        ),
    ],
    "tabulate": [
        Change(
            "tabulate/__init__.py",
            '    fmt = "{0:>%ds}" % width\n',
            '    fmt = "{0:>" + str(width) + "s}"\n',
            "from tabulate import _padleft\n\n\ndef test_padleft():\n"
            '    assert _padleft(4, "ab") == "  ab"\n',
        ),
        Change(
            "tabulate/__init__.py",
            '    fmt = "{0:<%ds}" % width\n',
            '    fmt = "{0:<" + str(width) + "s}"\n',
            "from tabulate import _padright\n\n\ndef test_padright():\n"
            '    assert _padright(4, "ab") == "ab  "\n',
        ),
        Change(
            "tabulate/__init__.py",
            '    fmt = "{0:^%ds}" % width\n',
            '    fmt = "{0:^" + str(width) + "s}"\n',
            "from tabulate import _padboth\n\n\ndef test_padboth():\n"
            '    assert _padboth(4, "ab") == " ab "\n',
        ),
        Change(
            "tabulate/__init__.py",
            "    return type(string) is bool or (\n",
            "    return isinstance(string, bool) or (\n",
            "from tabulate import _isbool\n\n\ndef test_isbool():\n"
            '    assert _isbool("True") and not _isbool(1)\n',
        ),
        Change(
            "tabulate/__init__.py",
            '    return max(map(line_width_fn, re.split("[\\r\\n]", multiline_s)))\n',
            '    return max(line_width_fn(line) for line in re.split("[\\r\\n]", multiline_s))\n',
            "from tabulate import _multiline_width\n\n\ndef test_widest_line():\n"
            '    assert _multiline_width("ab\\ncde") == 3\n',
        ),
        Change(
            "tabulate/__init__.py",
            "    return type(value) is str and value.strip() == SEPARATING_LINE\n",
            "    return isinstance(value, str) and type(value) is str"
            " and value.strip() == SEPARATING_LINE\n",
            "from tabulate import _is_separating_line_value\n\n\ndef test_not_a_separator():\n"
            '    assert not _is_separating_line_value("x")\n',
        ),
        Change(
            "tabulate/__init__.py",
            "        return bool(re.search(_multiline_codes, s))\n",
            "        return re.search(_multiline_codes, s) is not None\n",
            "from tabulate import _is_multiline\n\n\ndef test_is_multiline():\n"
            '    assert _is_multiline("a\\nb") and not _is_multiline("ab")\n',
        ),
        Change(
            "tabulate/__init__.py",
            '        isinstance(string, (bytes, str)) and string in ("True", "False")\n',
            '        isinstance(string, (bytes, str)) and string in {"True", "False"}\n',
            "from tabulate import _isbool\n\n\ndef test_false_text_is_bool():\n"
            '    assert _isbool("False") and not _isbool("no")\n',
        ),
        Change(
            "tabulate/__init__.py",
            "        type(string) is inttype\n",
            "        inttype is type(string)\n",
            "from tabulate import _isint\n\n\ndef test_isint():\n"
            "    assert _isint(5) and not _isint(5.5)\n",
        ),
        Change(
            "tabulate/__init__.py",
            "    moregeneric = max(types.get(type1, 5), types.get(type2, 5))\n",
            "    moregeneric = max(types.get(type2, 5), types.get(type1, 5))\n",
            "from tabulate import _more_generic\n\n\ndef test_more_generic():\n"
            "    assert _more_generic(int, float) is float\n",
        ),
    ],
}


@dataclass(frozen=True)
class Step:
    name: str
    wall: float
    timings: dict[str, float]
    mutants: int
    cached: int
    baseline: str


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(
        root,
        "-c",
        "user.email=bench@example.com",
        "-c",
        "user.name=bench",
        "commit",
        "-qm",
        message,
    )


def audit(name: str, python: str, root: Path, tests: str, *flags: str) -> Step:
    report = root.parent / f"{root.name}-report.json"
    command = [python, "-m", "auditor", tests, "--json", str(report), "-q", *flags]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{name}: `{' '.join(command[2:])}` exited {done.returncode}: {done.stderr}")
    return _step(name, wall, report)


def _step(name: str, wall: float, report: Path) -> Step:
    full = json.loads(report.read_text())
    mutants = full["mutation"]["mutants"]
    return Step(
        name,
        wall,
        full["timings"],
        len(mutants),
        sum(1 for mutant in mutants if mutant["cached"]),
        full["baseline"]["reuse"],
    )


async def tool_audit(client: Any, name: str, root: Path, tests: str, **arguments: str) -> Step:
    """The MCP server's `audit` tool, timed from the call to its answer."""
    started = time.perf_counter()
    result = await client.call_tool("audit", {"tests": [tests], **arguments})
    wall = time.perf_counter() - started
    if result.is_error:
        sys.exit(f"{name}: the audit tool failed: {result.content[0].text}")
    return _step(name, wall, root / result.structured_content["report"])


def apply(root: Path, change: Change, number: int, tests: str) -> None:
    path = root / change.file
    text = path.read_text(encoding="utf-8")
    if text.count(change.old) != 1:
        sys.exit(f"{change.file}: the line to change is not there once: {change.old!r}")
    path.write_text(text.replace(change.old, change.new), encoding="utf-8")
    (root / tests / f"test_audit_loop_{number}.py").write_text(change.test, encoding="utf-8")


def print_table(title: str, steps: list[Step]) -> None:
    print(f"\n{title}")
    header = f"{'run':<28}{'wall':>8}{'baseline':>10}{'mutate':>8}{'probe':>8}  mutants (cached)"
    print(header)
    for step in steps:
        t = step.timings
        print(
            f"{step.name:<28}{step.wall:>7.1f}s{t.get('baseline', 0):>9.1f}s"
            f"{t.get('mutate', 0):>7.1f}s{t.get('probe', 0):>7.1f}s"
            f"  {step.mutants} ({step.cached})   baseline {step.baseline}"
        )
    changes = [step.wall for step in steps if step.name.startswith("change")]
    if changes:
        print(
            f"one function + one new test, --diff HEAD: median {statistics.median(changes):.1f} s"
        )


def command_line_loop(name: str, python: str, root: Path, tests: str) -> list[Step]:
    steps = [
        audit("cold", python, root, tests),
        audit("warm, nothing changed", python, root, tests),
    ]
    for number, change in enumerate(CHANGES[name], 1):
        apply(root, change, number, tests)
        steps.append(audit(f"change {number}", python, root, tests, "--diff", "HEAD"))
        commit(root, f"change {number}")
    return steps


def mcp_loop(name: str, python: str, root: Path, tests: str) -> list[Step]:
    """The same loop through one server: its warm session answers every call."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def session() -> list[Step]:
        # The server gets this environment, as the command line's runs do (the SDK's
        # default keeps only PATH, HOME and a few more): a PYTHONPATH given to compare two
        # checkouts reaches both passes.
        server = StdioServerParameters(
            command=python, args=["-m", "auditor", "mcp"], cwd=str(root), env=dict(os.environ)
        )
        async with Client(server) as client:
            steps = [await tool_audit(client, "warm, nothing changed", root, tests)]
            for number, change in enumerate(CHANGES[name], 1):
                apply(root, change, number, tests)
                step = await tool_audit(client, f"change {number}", root, tests, diff="HEAD")
                steps.append(step)
                commit(root, f"change {number}")
            return steps

    return [audit("cold", python, root, tests), *asyncio.run(session())]


def with_mcp(python: str) -> None:
    """The server needs the `mcp` extra in the benchmark's virtualenv."""
    if subprocess.run([python, "-c", "import mcp"], capture_output=True).returncode:
        repo = Path(__file__).resolve().parent.parent
        subprocess.run([python, "-m", "pip", "install", "-q", "-e", f"{repo}[mcp]"], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", choices=sorted(CHANGES))
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/audit-bench"))
    parser.add_argument("--venv", type=Path, help="default: WORKDIR/venv")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    name, spec = args.project, PROJECTS[args.project]
    python = bench_python(args.venv or args.workdir / "venv", [name])
    with_mcp(python)
    title = f"{name} {spec['version']}: the inline loop, default settings"
    for client, loop in (("the command line", command_line_loop), ("an MCP session", mcp_loop)):
        root = unpack(fetch(name, args.workdir), args.workdir / f"{name}-loop")
        git(root, "init", "-q")
        commit(root, "as released")
        print_table(f"{title}, {client}", loop(name, python, root, spec["tests"]))


if __name__ == "__main__":
    main()
