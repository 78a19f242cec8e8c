"""How many inputs each function generates for the witness searches: in proportion to
the survivors searched through it, between `probe_examples` and three times as many."""

from __future__ import annotations

from auditor.mutation.protocol import Job
from auditor.probes.protocol import SurvivorSpec, witness_inputs


def _survivors(count: int, targets: list[str]) -> list[SurvivorSpec]:
    return [
        SurvivorSpec(
            job=Job(
                id=f"m{n}", path="swap", file="/p/shop.py", module_name="shop", tests=[], timeout=1
            ),
            description="",
            targets=targets,
        )
        for n in range(count)
    ]


def test_a_function_few_survivors_go_through_generates_probe_examples_inputs():
    assert witness_inputs(_survivors(2, ["shop.py::price"]), 100) == {"shop.py::price": 100}


def test_each_survivor_beyond_three_earns_a_third_of_probe_examples():
    assert witness_inputs(_survivors(6, ["shop.py::price"]), 100) == {"shop.py::price": 200}


def test_no_function_generates_more_than_three_times_probe_examples():
    assert witness_inputs(_survivors(40, ["shop.py::price"]), 100) == {"shop.py::price": 300}


def test_a_survivor_searched_through_several_functions_counts_its_share_to_each():
    # Nine import-time survivors searched through three functions: three to each.
    inputs = witness_inputs(_survivors(9, ["shop.py::a", "shop.py::b", "shop.py::c"]), 100)
    assert inputs == {"shop.py::a": 100, "shop.py::b": 100, "shop.py::c": 100}


def test_shares_add_up_with_the_survivors_of_the_function_itself():
    survivors = _survivors(3, ["shop.py::a", "shop.py::b"]) + _survivors(6, ["shop.py::a"])
    assert witness_inputs(survivors, 60) == {"shop.py::a": 150, "shop.py::b": 60}


def test_functions_no_survivor_goes_through_generate_nothing():
    assert witness_inputs([], 100) == {}
