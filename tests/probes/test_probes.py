"""The probe stage end to end: real audits of the fixtures and of small projects."""

from __future__ import annotations

import json
import re
import sqlite3
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_audit, stable, tree_digest

pytestmark = pytest.mark.slow

SHALLOW_FIXTURES = ["ledger", "shop", "textkit"]


def _findings(report: dict, kind: str, function: str) -> list[dict]:
    return [
        f for f in report["probes"]["findings"] if f["kind"] == kind and f["function"] == function
    ]


@pytest.mark.parametrize(
    ("name", "function", "error", "shrunk_input"),
    [
        ("textkit", "average_word_length", "ZeroDivisionError", "average_word_length('')"),
        ("ledger", "share", "IndexError", "share(1, [])"),
        (
            "shop",
            "Inventory.ship",
            "KeyError",
            "Inventory(stock={}, reserved={}, low_stock_threshold=3).ship('', 0)",
        ),
    ],
)
def test_planted_edge_case_bugs_are_found_with_shrunk_inputs(
    fixture_runs, name, function, error, shrunk_input
):
    _, report, _, _ = fixture_runs[name, "tests_shallow"]
    crashes = _findings(report, "unhandled_crash", function)
    assert [c["input"] for c in crashes if error in c["message"]] == [shrunk_input]


def test_a_crash_comes_with_a_suggested_test_that_pins_it(fixture_runs):
    _, report, _, _ = fixture_runs["textkit", "tests_shallow"]
    (crash,) = _findings(report, "unhandled_crash", "average_word_length")
    assert "with pytest.raises(ZeroDivisionError" in crash["suggested_test"]
    assert "average_word_length('')" in crash["suggested_test"]


def test_an_error_path_no_test_expects_is_reported_with_an_input_reaching_it(fixture_runs):
    _, report, _, _ = fixture_runs["textkit", "tests_shallow"]
    (path,) = _findings(report, "untested_error_path", "to_roman")
    assert path["message"] == "`raise TypeError`: no test expects TypeError"
    assert path["observed"] == "raises TypeError: expected an int"


def test_a_re_raised_error_the_tests_expect_is_no_untested_error_path(tmp_path):
    # itsdangerous 2.2.0: `raise t.cast(BadSignature, last_exception)` was "`raise cast`:
    # no test expects cast", and `raise sig_error` "no test expects sig_error", though
    # the tests expect BadSignature there.
    root = _project(
        tmp_path,
        """
        import typing as t


        class BadSignature(Exception):
            pass


        def unsign(token: str, keys: list[str]) -> str:
            last_error = None
            for key in keys:
                if token.endswith("." + key):
                    return token[: -len(key) - 1]
                last_error = BadSignature(f"not signed with {key}")
            raise t.cast(BadSignature, last_error)


        def check(token: str) -> str:
            error = None
            if "." not in token:
                error = BadSignature("no separator")
            if error:
                raise error
            return token
        """,
        """
        import pytest
        from pkg.core import BadSignature, check, unsign


        def test_unsign():
            assert unsign("a.k", ["j", "k"]) == "a"
            with pytest.raises(BadSignature):
                unsign("a.x", ["k"])


        def test_check():
            assert check("a.b") == "a.b"
            with pytest.raises(BadSignature):
                check("ab")
        """,
    )
    report = _report_of(root)
    assert [f for f in report["probes"]["findings"] if f["kind"] == "untested_error_path"] == []
    probed = {f["function"]: f["status"] for f in report["probes"]["functions"]}
    assert probed == {"check": "probed", "unsign": "probed"}


@pytest.fixture(scope="module")
def refused_calls(tmp_path_factory):
    """The crash findings of a project shaped like schema 0.7.8: a constructor whose
    refusal of a bad argument a test checks, and markers that hand `*args, **kwargs`
    to their base's `__init__`."""
    root = _project(
        tmp_path_factory.mktemp("refused") / "schema",
        """
        import re


        class Schema:
            def __init__(self, schema: object, error: str | None = None) -> None:
                self.schema = schema
                self.error = error


        class Hook(Schema):
            def __init__(self, *args, **kwargs) -> None:
                self.handler = kwargs.pop("handler", None)
                super().__init__(*args, **kwargs)


        class Forbidden(Hook):
            def __init__(self, *args, **kwargs) -> None:
                kwargs["handler"] = print
                super().__init__(*args, **kwargs)


        class Regex:
            def __init__(self, pattern: str) -> None:
                self.pattern = re.compile(pattern)
        """,
        """
        import pytest
        from pkg.core import Forbidden, Hook, Regex


        def test_regex():
            assert Regex("a+").pattern.match("aa")
            with pytest.raises(TypeError):
                Regex(1)


        def test_markers():
            assert Forbidden("key").schema == "key"
            assert Hook("key").handler is None
        """,
    )
    report = _report_of(root)
    probed = {f["function"] for f in report["probes"]["functions"] if f["status"] == "probed"}
    crashes = report["probes"]["findings"]
    crashed = {f["function"] for f in crashes if f["kind"] == "unhandled_crash"}
    return probed, crashed


def test_a_crash_a_test_makes_and_expects_is_not_reported(refused_calls):
    # schema 0.7.8: `Regex(1)` raising TypeError was reported though its test makes
    # that very call in `with raises(TypeError)`.
    probed, crashed = refused_calls
    assert "Regex.__init__" in probed
    assert "Regex.__init__" not in crashed


def test_arguments_passed_on_that_the_callee_refuses_are_no_crash(refused_calls):
    # schema 0.7.8: `Optional()`, `Hook()`, `Forbidden()` were "TypeError" crashes: the
    # probe gave no argument, and their base's `__init__` needs one.
    probed, crashed = refused_calls
    assert {"Hook.__init__", "Forbidden.__init__"} <= probed
    assert not {"Hook.__init__", "Forbidden.__init__"} & crashed


@pytest.mark.parametrize("name", SHALLOW_FIXTURES)
def test_the_strong_suite_leaves_fewer_findings(fixture_runs, name):
    _, shallow, _, _ = fixture_runs[name, "tests_shallow"]
    _, strong, _, _ = fixture_runs[name, "tests_strong"]
    assert len(strong["probes"]["findings"]) < len(shallow["probes"]["findings"])


@pytest.mark.parametrize("name", SHALLOW_FIXTURES)
def test_most_survivors_of_a_shallow_suite_get_a_witness(fixture_runs, name):
    _, report, _, _ = fixture_runs[name, "tests_shallow"]
    survived = {m["id"] for m in report["mutation"]["mutants"] if m["status"] == "Survived"}
    witnesses = {w["mutant_id"]: w for w in report["probes"]["witnesses"]}
    assert set(witnesses) == survived
    found = [w for w in witnesses.values() if w["status"] == "found"]
    assert len(found) >= 0.6 * len(survived)
    assert all(w["input"] and w["original"] != w["mutant"] for w in found)


@pytest.mark.parametrize("name", SHALLOW_FIXTURES)
def test_suggested_tests_appended_to_the_suite_kill_their_mutants(fixture_runs, tmp_path, name):
    """Exactly what the issue asks: paste every suggested test into the shallow suite and
    audit again; each mutant a test was suggested for is now killed."""
    _, report, root, _ = fixture_runs[name, "tests_shallow"]
    suggested = {w["mutant_id"]: w["test"] for w in report["probes"]["witnesses"] if w["test"]}
    assert len(suggested) >= 50
    project = tmp_path / name
    import shutil

    shutil.copytree(root, project, ignore=shutil.ignore_patterns(".audit", "__pycache__"))
    (project / "tests_shallow" / "test_suggested.py").write_text(
        "\n\n".join(suggested[key] for key in sorted(suggested)), encoding="utf-8"
    )
    out = tmp_path / "after.json"
    result = run_audit("tests_shallow", "-q", "--no-probes", "--json", str(out), cwd=project)
    assert result.returncode == 0, result.stderr
    after = {m["id"]: m for m in json.loads(out.read_text())["mutation"]["mutants"]}
    not_killed = sorted(
        key for key in suggested if after[key]["status"] not in ("Killed", "Timeout")
    )
    assert not_killed == []


def _project(root: Path, source: str, tests: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "core.py").write_text(textwrap.dedent(source), encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(textwrap.dedent(tests), encoding="utf-8")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\nversion = "0"\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        encoding="utf-8",
    )
    return root


EQUIVALENT = """
def clamp(x: int) -> int:
    '''Negative numbers become zero.'''
    if x >= 0:
        return x
    return 0


def scale(x: int) -> int:
    return x * 1 + 0


def size(x: int) -> int:
    twice = x + x  # left over: never read
    return abs(x)


class Bag:
    def __init__(self, items: list[int]) -> None:
        self.items = list(items)

    def copy(self) -> "Bag":
        made: type = Bag
        if isinstance(self, Bag):
            made = self.__class__
        return made(self.items)
"""


def _report_of(root: Path) -> dict:
    out = root / "report.json"
    result = run_audit("tests", "-q", "--json", str(out), cwd=root)
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())


def _witnesses_of(root: Path):
    """Audit `root`; then the witness of its one mutant with a given function and change."""
    return _witnesses_in(_report_of(root))


def _witnesses_in(report: dict):
    witnesses = {w["mutant_id"]: w for w in report["probes"]["witnesses"]}

    def witness(function: str, description: str) -> dict:
        (mutant,) = [
            m
            for m in report["mutation"]["mutants"]
            if (m["function"], m["description"]) == (function, description)
        ]
        return witnesses[mutant["id"]]

    return witness


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Witness status by mutant description, for a shallow suite of `EQUIVALENT`."""
    root = _project(
        tmp_path_factory.mktemp("planted") / "eq",
        EQUIVALENT,
        """
        from pkg.core import Bag, clamp, scale, size

        def test_clamp_runs():
            assert clamp(5) is not None

        def test_scale_runs():
            assert scale(2) is not None

        def test_size_runs():
            assert size(-3) is not None

        def test_copy_runs():
            assert Bag([1]).copy() is not None
        """,
    )
    return _witnesses_of(root)


CLASS_METHOD = """
class Cents:
    def __init__(self, amount: int) -> None:
        self.amount = amount

    @classmethod
    def from_euros(cls, euros: int) -> "Cents":
        return cls(euros * 100)
"""


def test_a_class_method_is_probed_through_its_class_and_its_survivors_witnessed(tmp_path):
    # pathspec 1.1.1: 91 survivors of its pattern classes' `pattern_to_regex` class
    # methods were "not probeable: no probeable function in its file".
    root = _project(
        tmp_path / "cm",
        CLASS_METHOD,
        """
        from pkg.core import Cents

        def test_from_euros_runs():
            assert Cents.from_euros(2) is not None
        """,
    )
    report = _report_of(root)
    (probed,) = [f for f in report["probes"]["functions"] if f["function"] == "Cents.from_euros"]
    witness = _witnesses_in(report)("Cents.from_euros", "* -> /")
    assert (probed["status"], [param["name"] for param in probed["params"]]) == (
        "probed",
        ["euros"],
    )
    assert witness["status"] == "found"
    assert witness["input"].startswith("Cents.from_euros(")
    assert "from pkg.core import Cents" in witness["test"]
    assert "Cents.from_euros(" in witness["test"]


def test_a_change_made_on_some_input_that_never_shows_is_likely_equivalent(planted):
    # `twice` is never read: `x + x` -> `x - x` changes it on every input but 0, and
    # size() returns the same (semver 3.0.2's bump_build computes its result twice).
    assert planted("size", "+ -> -")["status"] == "likely_equivalent"
    assert planted("clamp", ">= -> <")["status"] == "found"


def test_a_change_to_code_that_decides_by_the_type_of_self_is_not_likely_equivalent(planted):
    # The probes build a `Bag` for `self`, never a subclass: skipping
    # `made = self.__class__`, or setting `made` to None first, shows only on one.
    for change in ("if condition -> False", "= Bag -> = None"):
        witness = planted("Bag.copy", change)
        assert witness["status"] == "not_shown", change
        assert "decides by the type of `self`" in witness["reason"]


def test_a_change_made_on_too_few_inputs_is_not_shown(planted):
    # `x >= 0` -> `x > 0` takes the other branch on clamp(0) only (and edge values).
    witness = planted("clamp", ">= -> >")
    assert witness["status"] == "not_shown"
    assert "too few to call it equivalent" in witness["reason"]


def test_a_change_no_input_makes_is_not_shown_rather_than_likely_equivalent(planted):
    # `x * 1 + 0` -> `x * 1 - 0` computes the same value on every input: nothing the
    # probes saw tells an equivalent mutant from one whose inputs lack the values that
    # matter (marshmallow's `unknown=unknown` -> `unknown=None`, never passed).
    witness = planted("scale", "+ -> -")
    assert witness["status"] == "not_shown"
    assert re.search(r"on 0 of the \d+ traced did it change the state there", witness["reason"])


def test_fresh_probes_give_the_same_results_twice(tmp_path):
    root = _project(
        tmp_path / "det",
        EQUIVALENT,
        "from pkg.core import clamp\n\ndef test_clamp():\n    assert clamp(5) == 5\n",
    )
    reports = []
    for run in range(2):
        out = tmp_path / f"run{run}.json"
        (root / ".audit" / "cache.sqlite").unlink(missing_ok=True)
        assert run_audit("tests", "-q", "--json", str(out), cwd=root).returncode == 0
        reports.append(stable(json.loads(out.read_text()))["probes"])
    assert reports[0] == reports[1]


class _ProbeUpdates:
    """A progress display that counts the probe stage's updates (one per result that
    a probe process writes)."""

    def __init__(self) -> None:
        self.stage = ""
        self.probe_updates = 0

    def start(self, stage: str, total: int | None = None) -> None:
        self.stage = stage

    def update(self, done: int, total: int | None = None, summary: str = "") -> None:
        self.probe_updates += self.stage == "probe"

    def finish(self, stage: str, summary: str = "", stopped: bool = False) -> None:
        pass


def _probed(root: Path):
    from auditor.config import AuditConfig
    from auditor.pipeline import run_audit as audit

    updates = _ProbeUpdates()
    report = audit(["tests"], AuditConfig(), root, updates)
    return report.probes, updates.probe_updates


def _probed_then_cached(root: Path):
    """The probes of a first run, once a rerun with nothing changed took them all from
    the cache (no probe process answered it) and gave the same."""
    first, first_updates = _probed(root)
    again, again_updates = _probed(root)
    assert first_updates > 0
    assert again_updates == 0
    assert again.model_dump(exclude={"duration"}) == first.model_dump(exclude={"duration"})
    return first


def test_a_rerun_with_nothing_changed_takes_the_probes_from_the_cache(tmp_path):
    root = _project(
        tmp_path / "cached",
        EQUIVALENT,
        "from pkg.core import clamp\n\ndef test_clamp():\n    assert clamp(5) == 5\n",
    )
    _probed_then_cached(root)


EXITS = """
import argparse


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(prog="count")
    parser.add_argument("word")
    return len(parser.parse_args(argv).word)
"""


def test_a_function_that_exits_the_process_is_probed_and_kept(tmp_path):
    """A command's entry point exits through argparse on arguments it refuses: that is
    what it does, not a probe that failed, and a rerun with nothing changed does not
    probe it again."""
    root = _project(
        tmp_path / "exits",
        EXITS,
        "from pkg.core import main\n\ndef test_main():\n    assert main(['a']) == 1\n",
    )
    first = _probed_then_cached(root)
    [probe] = [function for function in first.functions if function.function == "main"]
    assert probe.status == "probed"


UNBUILDABLE = """
import random


def pick(items: list, choice=random.choice):
    return choice(items)
"""


def test_a_function_that_cannot_be_made_callable_is_not_probed_again(tmp_path):
    """Its default is a bound method of a C type, which no strategy can make: it fails
    alike in every run, and its failure is kept as a probe's result is."""
    root = _project(
        tmp_path / "unbuildable",
        UNBUILDABLE,
        "from pkg.core import pick\n\ndef test_pick():\n    assert pick([1]) == 1\n",
    )
    first, _ = _probed(root)
    [probe] = first.functions
    assert probe.status == "failed"
    with sqlite3.connect(root / ".audit" / "cache.sqlite") as kept:
        assert kept.execute("select count(*) from probes").fetchone() == (1,)
    again, _ = _probed(root)
    assert again.model_dump(exclude={"duration"}) == first.model_dump(exclude={"duration"})


def test_a_change_to_the_code_under_test_probes_again(tmp_path):
    root = _project(
        tmp_path / "changed",
        EQUIVALENT,
        "from pkg.core import clamp\n\ndef test_clamp():\n    assert clamp(5) == 5\n",
    )
    _probed(root)
    core = root / "pkg" / "core.py"
    core.write_text(core.read_text() + "\n\ndef half(x: int) -> float:\n    return 1 / x\n")
    again, updates = _probed(root)
    assert updates > 0
    assert "half" in {function.function for function in again.functions}


def test_functions_touching_the_outside_world_are_skipped_and_nothing_changes(tmp_path):
    root = _project(
        tmp_path / "outside",
        """
        import os
        import socket


        def tidy(path: str) -> None:
            '''Delete a file, e.g. 'victim.txt'.'''
            os.remove(path)


        def ping(host: str) -> bytes:
            return socket.create_connection((host, 80)).recv(1)


        def double(x: int) -> int:
            return 2 * x
        """,
        """
        from pkg.core import double

        def test_double():
            assert double(2) == 4
        """,
    )
    (root / "victim.txt").write_text("keep me", encoding="utf-8")
    before = tree_digest(root)
    out = tmp_path / "outside.json"
    result = run_audit("tests", "-q", "--json", str(out), cwd=root)
    assert result.returncode == 0, result.stderr
    functions = {f["function"]: f for f in json.loads(out.read_text())["probes"]["functions"]}
    assert functions["tidy"]["status"] == "skipped"
    assert "os.remove" in functions["tidy"]["reason"]
    assert functions["ping"]["status"] == "skipped"
    assert functions["double"]["status"] == "probed"
    assert tree_digest(root) == before


def test_an_allowed_deleting_function_is_probed_but_cannot_delete(tmp_path):
    root = _project(
        tmp_path / "allowed",
        """
        import os


        def tidy(path: str) -> None:
            '''Delete a file, e.g. 'victim.txt'.'''
            os.remove(path)
        """,
        """
        from pkg.core import tidy

        def test_tidy(tmp_path):
            target = tmp_path / "x"
            target.write_text("")
            tidy(str(target))
        """,
    )
    (root / "victim.txt").write_text("keep me", encoding="utf-8")
    with (root / "pyproject.toml").open("a", encoding="utf-8") as config:
        config.write('[tool.audit]\nprobe_allow = ["tidy"]\n')
    before = tree_digest(root)
    out = tmp_path / "allowed.json"
    result = run_audit("tests", "-q", "--no-mutation", "--json", str(out), cwd=root)
    assert result.returncode == 0, result.stderr
    functions = {f["function"]: f for f in json.loads(out.read_text())["probes"]["functions"]}
    assert functions["tidy"]["status"] == "probed"
    assert functions["tidy"]["examples"] > 0  # it was called, 'victim.txt' among the inputs
    assert tree_digest(root) == before


def test_a_function_that_hangs_on_a_large_input_is_reported_with_that_input(tmp_path):
    root = _project(
        tmp_path / "hangs",
        """
        def spin(n: int) -> int:
            i = 0
            while i < n:
                i += 1
            return i
        """,
        "from pkg.core import spin\n\ndef test_spin():\n    assert spin(3) == 3\n",
    )
    out = tmp_path / "hangs.json"
    result = run_audit("tests", "-q", "--no-mutation", "--json", str(out), cwd=root)
    assert result.returncode == 0, result.stderr
    (finding,) = json.loads(out.read_text())["probes"]["findings"]
    assert finding["kind"] == "unhandled_crash"
    assert finding["message"] == "hangs: no return within 0.5s"
    assert finding["input"] == "spin(9223372036854775808)"


def test_a_function_that_walks_what_it_is_given_is_not_given_billions_of_items(tmp_path):
    """Hypothesis draws an `Iterable` as a network or a range of any size (`0.0.0.0/0`,
    `range(0, 577472833)`) most of the time; walking one is no hang of the code's."""
    root = _project(
        tmp_path / "walks",
        """
        from collections.abc import Iterable

        def joined(values: Iterable) -> str:
            return ", ".join(str(value) for value in values)
        """,
        "from pkg.core import joined\n\ndef test_joined():\n    assert joined([1, 2]) == '1, 2'\n",
    )
    out = tmp_path / "walks.json"
    result = run_audit("tests", "-q", "--no-mutation", "--json", str(out), cwd=root)
    assert result.returncode == 0, result.stderr
    probes = json.loads(out.read_text())["probes"]
    assert [(f["function"], f["status"]) for f in probes["functions"]] == [("joined", "probed")]
    assert probes["findings"] == []


CONSTRUCTED = """
class Field:
    def __init__(self, *, required: bool = False):
        self.required = required


class Number(Field):
    def __init__(self, *, as_string: bool = False, **kwargs):
        self.as_string = as_string
        super().__init__(**kwargs)

    def serialize(self, value: float):
        return str(value) if self.as_string else value


def _label(name):
    return name.title()


LABEL = _label("number")
"""


@pytest.fixture(scope="module")
def constructed(tmp_path_factory):
    """A suite that builds objects and checks nothing about them (marshmallow's fields,
    in small)."""
    root = _project(
        tmp_path_factory.mktemp("constructed"),
        CONSTRUCTED,
        """
        from pkg.core import Number

        def test_number_serializes():
            assert Number().serialize(1.5) is not None
        """,
    )
    return _witnesses_of(root)


def test_a_constructor_mutant_is_told_apart_by_the_object_it_builds(constructed):
    # The original's Number() has a `required` attribute; without the super() call it
    # has none. Calling __init__ again on an object built by the original cannot show it.
    witness = constructed("Number.__init__", "`super().__init__(**kwargs)` removed")
    assert witness["status"] == "found"
    assert witness["input"] == "Number()"
    assert "assert vars(Number()) == {'as_string': False, 'required': False}" in witness["test"]


def test_a_mutated_default_of_a_constructor_gets_a_witness(constructed):
    witness = constructed("Number.__init__", "False -> True")
    assert witness["status"] == "found"
    assert "as_string=True" in witness["mutant"]


def test_a_survivor_no_probe_input_runs_is_not_shown_rather_than_likely_equivalent(
    constructed,
):
    # `_label` runs once, at import: no call a probe makes runs it.
    witness = constructed("_label", "return name.title() -> return None")
    assert witness["status"] == "not_shown"
    assert re.fullmatch(r"none of \d+ inputs ran code that reads _label", witness["reason"])


CONFIGURED = """
class TooLong(Exception):
    pass


class Length:
    def __init__(self, most=None, error=None):
        self.most = most
        self.error = error or "too long"

    def __repr__(self):
        return f"<Length most={self.most!r}>"

    def __call__(self, value: str) -> str:
        if self.most is not None and len(value) > self.most:
            raise TooLong(self.error)
        return value
"""


def test_a_method_s_survivor_is_witnessed_on_an_instance_built_as_the_tests_built_one(
    tmp_path,
):
    # `builds(Length)` makes only `Length()`, on which no check of `__call__` runs, and
    # the instance's repr does not rebuild it: the tests' `Length(most=2)` does both.
    root = _project(
        tmp_path,
        CONFIGURED,
        """
        from pkg.core import Length

        def test_a_short_value_passes():
            assert Length(most=2)("a") is not None
        """,
    )
    report = _report_of(root)
    survivors = {
        m["id"]
        for m in report["mutation"]["mutants"]
        if m["function"] == "Length.__call__" and m["status"] == "Survived"
    }
    witnesses = [w for w in report["probes"]["witnesses"] if w["mutant_id"] in survivors]
    assert len(witnesses) == len(survivors) >= 3
    assert all(w["status"] == "found" for w in witnesses), witnesses
    assert all(w["input"].startswith("Length(most=2)(") for w in witnesses)
    assert all("    subject = Length(most=2)\n" in w["test"] for w in witnesses)
    assert all("subject(" in w["test"] for w in witnesses)


STUCK_IN_C = """
import collections


def tail(n: int) -> int:
    '''The last of range(n), -1 when it is empty.'''
    values = range(n)
    if getattr(values, "__reversed__", None):
        return next(reversed(values), -1)
    return collections.deque(values, maxlen=1)[-1] if n > 0 else -1


def drain(n: int) -> int:
    return collections.deque(range(n), maxlen=1)[-1] if n > 0 else -1
"""


@pytest.fixture(scope="module")
def stuck_in_c(tmp_path_factory):
    """An audit of functions whose loops run inside C, where no SIGALRM handler runs."""
    root = _project(
        tmp_path_factory.mktemp("stuck") / "stuck",
        STUCK_IN_C,
        """
        from pkg.core import drain, tail

        def test_tail():
            assert tail(3) == 2

        def test_drain():
            assert drain(3) == 2
        """,
    )
    return _report_of(root)


def test_a_call_stuck_inside_c_is_reported_as_a_hang_of_its_function(stuck_in_c):
    # deque(range(2**63)) never returns to the interpreter: only its CPU timer ends it.
    functions = {f["function"]: f for f in stuck_in_c["probes"]["functions"]}
    assert functions["drain"]["status"] == "probed"
    (crash,) = _findings(stuck_in_c, "unhandled_crash", "drain")
    assert crash["message"] == "hangs: no return within 0.5s"
    assert crash["input"].startswith("drain(")


def test_a_mutant_stuck_inside_c_on_an_input_is_witnessed_by_that_input(stuck_in_c):
    # Without `__reversed__`, tail() walks the whole range inside C.
    witness = _witnesses_in(stuck_in_c)("tail", '"__reversed__" wrapped in XX')
    assert witness["status"] == "found"
    assert witness["mutant"] == "did not return (timed out)"
    assert witness["test"]  # checked: it fails on the mutant, passes on the original


def test_an_endless_iterator_the_tests_passed_is_not_drained_to_build_its_strategy(tmp_path):
    root = _project(
        tmp_path / "endless",
        """
        def first(values):
            return next(iter(values))
        """,
        "import itertools\n\nfrom pkg.core import first\n\n"
        "def test_first():\n    assert first(itertools.count(3)) == 3\n",
    )
    out = tmp_path / "endless.json"
    result = run_audit("tests", "-q", "--no-mutation", "--json", str(out), cwd=root)
    assert result.returncode == 0, result.stderr
    (function,) = json.loads(out.read_text())["probes"]["functions"]
    assert (function["status"], function["reason"]) == ("probed", "")


GENERATORS = """
def evens(n: int):
    for i in range(n):
        if i % 2 == 0:
            yield i


def multiples(step: int):
    n = 0
    while True:
        yield n
        n += step
"""


@pytest.fixture(scope="module")
def generators(tmp_path_factory):
    root = _project(
        tmp_path_factory.mktemp("gen") / "gen",
        GENERATORS,
        """
        from pkg.core import evens, multiples

        def test_evens():
            assert len(list(evens(4))) == 2

        def test_multiples():
            assert len([n for _, n in zip(range(3), multiples(2))]) == 3
        """,
    )
    return _witnesses_of(root)


def test_a_mutant_of_a_generator_is_told_apart_by_what_it_yields(generators):
    changed = generators("evens", "== -> !=")
    assert changed["status"] == "found"
    assert changed["original"].startswith("returns <generator yielding [")
    assert changed["original"] != changed["mutant"]
    assert changed["test"].count("assert list(evens(") == 1


def test_an_equivalent_change_inside_a_generator_is_not_found(generators):
    assert generators("evens", "2 -> -2")["status"] != "found"


def test_an_endless_generator_is_pinned_by_its_first_items(generators):
    changed = generators("multiples", "+= -> -=")
    assert changed["status"] == "found"
    assert "from itertools import islice" in changed["test"]
    assert "assert list(islice(multiples(" in changed["test"]
