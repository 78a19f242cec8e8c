"""Probe and witness results kept between runs come back only for the same work: the
same code, mutant, and functions probed with the same inputs."""

from __future__ import annotations

import dataclasses

from auditor.mutation.cache import ResultCache
from auditor.mutation.protocol import Job
from auditor.probes.cache import ProbeCache
from auditor.probes.protocol import FunctionResult, SurvivorSpec, WitnessResult
from auditor.report import FunctionProbe, Witness
from tests.conftest import target_spec

KEY = "shop.py::price"


def _cache(root, observed: list) -> ProbeCache:
    (root / "shop.py").write_text("def price(n):\n    return n * 2\n", encoding="utf-8")
    target = dataclasses.replace(target_spec(KEY, str(root / "shop.py"), "shop"), observed=observed)
    return ProbeCache(ResultCache(root), root, [root / "shop.py"], {}, {KEY: target})


def _survivor(root) -> SurvivorSpec:
    job = Job(
        id="m", path="swap", file=str(root / "shop.py"), module_name="shop", tests=[], timeout=1
    )
    return SurvivorSpec(job=job, description="2 -> 3", targets=[KEY])


def _kept(root) -> WitnessResult:
    witness = WitnessResult(witness=Witness(mutant_id="m", status="found", input="price(1)"))
    cache = _cache(root, observed=[{"n": ("1", "int")}])
    cache.keep_witness(_survivor(root), witness)
    cache.close()
    return witness


def test_a_witness_comes_back_for_the_same_mutant_searched_the_same_way(tmp_path):
    witness = _kept(tmp_path)
    assert _cache(tmp_path, observed=[{"n": ("1", "int")}]).witness(_survivor(tmp_path)) == witness


def test_a_witness_is_searched_again_when_its_function_is_probed_with_other_inputs(tmp_path):
    _kept(tmp_path)
    # The tests now call it with other values: the search would draw other inputs.
    cache = _cache(tmp_path, observed=[{"n": ("7", "int")}])
    assert cache.witness(_survivor(tmp_path)) is None


def test_code_outside_the_project_root_can_be_kept(tmp_path):
    """`--src ../calc.py` from inside the tests: the code lies beside the root."""
    root, code = tmp_path / "tests", tmp_path / "shop.py"
    root.mkdir()
    code.write_text("def price(n):\n    return n * 2\n", encoding="utf-8")
    target = target_spec(KEY, str(code), "shop")
    cache = ProbeCache(ResultCache(root), root, [code], {}, {KEY: target})
    witness = WitnessResult(witness=Witness(mutant_id="m", status="found", input="price(1)"))
    cache.keep_witness(_survivor(tmp_path), witness)
    assert cache.witness(_survivor(tmp_path)) == witness


def _failed(reason: str) -> FunctionProbe:
    return FunctionProbe(file="shop.py", function="price", line=1, status="failed", reason=reason)


def test_a_probe_whose_process_ended_is_not_kept(tmp_path):
    cache = _cache(tmp_path, observed=[])
    ended = FunctionResult(probe=_failed("time budget of 10s exceeded"), ended=True)
    cache.keep_probes(cache._targets[KEY], ended)
    assert _cache(tmp_path, observed=[]).probes(cache._targets[KEY]) is None


def test_a_function_that_cannot_be_made_callable_is_kept_as_failed(tmp_path):
    """It fails the same way every run: probing it again would only cost the time."""
    cache = _cache(tmp_path, observed=[])
    unbuildable = FunctionResult(probe=_failed("TypeError: method expected 2 arguments, got 0"))
    cache.keep_probes(cache._targets[KEY], unbuildable)
    assert _cache(tmp_path, observed=[]).probes(cache._targets[KEY]) == unbuildable


SHOP = """\
RATE = 120


def price(n):
    return tax(n) + 1


def tax(n):
    return n * RATE


def label(n):
    return f"{n} items"
"""


def _shop_cache(root, text: str) -> ProbeCache:
    (root / "shop.py").write_text(text, encoding="utf-8")
    target = target_spec(KEY, str(root / "shop.py"), "shop")
    return ProbeCache(ResultCache(root), root, [root / "shop.py"], {}, {KEY: target})


def _probed_price(root, ran_lines: list[int] | None) -> FunctionResult:
    """`price` probed on SHOP; its probe ran the functions holding `ran_lines`."""
    cache = _shop_cache(root, SHOP)
    probed = FunctionProbe(file="shop.py", function="price", line=4, status="probed", examples=9)
    path = str((root / "shop.py").resolve())
    ran = None if ran_lines is None else [(path, line) for line in ran_lines]
    cache.keep_probes(cache._targets[KEY], FunctionResult(probe=probed, ran=ran))
    cache.close()
    return FunctionResult(probe=probed)


def _kept_after(root, text: str) -> FunctionResult | None:
    cache = _shop_cache(root, text)
    return cache.probes(cache._targets[KEY])


def test_a_probe_is_kept_when_a_function_it_did_not_run_changes(tmp_path):
    kept = _probed_price(tmp_path, ran_lines=[5, 9])
    edited = SHOP.replace('f"{n} items"', 'f"{n} item(s)"')
    assert _kept_after(tmp_path, edited) == kept


def test_a_probe_runs_again_when_a_function_it_ran_changes(tmp_path):
    _probed_price(tmp_path, ran_lines=[5, 9])
    assert _kept_after(tmp_path, SHOP.replace("n * RATE", "RATE * n")) is None


def test_a_probe_that_recorded_nothing_runs_again_when_any_function_changes(tmp_path):
    """Before Python 3.12 a probe records nothing: it may have run any function."""
    _probed_price(tmp_path, ran_lines=None)
    assert _kept_after(tmp_path, SHOP.replace('f"{n} items"', 'f"{n} item(s)"')) is None


def test_a_probe_runs_again_when_a_constant_of_any_function_changes(tmp_path):
    """Hypothesis draws the code's constants as inputs: another constant, other inputs."""
    _probed_price(tmp_path, ran_lines=[5, 9])
    assert _kept_after(tmp_path, SHOP.replace('f"{n} items"', 'f"{n} items" * 1000')) is None


def test_a_probe_runs_again_when_code_outside_the_functions_changes(tmp_path):
    _probed_price(tmp_path, ran_lines=[5, 9])
    assert _kept_after(tmp_path, SHOP + "\n\ndef discount(n):\n    return n\n") is None


def test_a_witness_is_kept_until_a_function_its_search_ran_changes(tmp_path):
    cache = _shop_cache(tmp_path, SHOP)
    path = str((tmp_path / "shop.py").resolve())
    found = Witness(mutant_id="m", status="found", input="price(1)")
    cache.keep_witness(_survivor(tmp_path), WitnessResult(witness=found, ran=[(path, 5)]))
    cache.close()
    unrelated = SHOP.replace('f"{n} items"', 'f"{n} item(s)"')
    assert _shop_cache(tmp_path, unrelated).witness(_survivor(tmp_path)) == WitnessResult(found)
    edited = SHOP.replace("tax(n) + 1", "1 + tax(n)")
    assert _shop_cache(tmp_path, edited).witness(_survivor(tmp_path)) is None
