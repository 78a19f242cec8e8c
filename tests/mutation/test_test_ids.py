"""Test ids that a parametrization makes at collection time, and the same tests found
again under the baseline's ids."""

from dataclasses import dataclass

from auditor.mutation.test_ids import CaseNames, by_baseline_id, cases_by_function


@dataclass(frozen=True)
class Item:
    nodeid: str


@dataclass(frozen=True)
class Callspec:
    params: dict[str, object]


@dataclass(frozen=True)
class Case:
    """A parametrized case, as pytest collects it: its arguments on `callspec`."""

    nodeid: str
    callspec: Callspec


def test_a_set_of_tests_is_its_functions_and_their_numbers_of_cases():
    first = ["t.py::test_parse[07:29:44]", "t.py::test_parse[07:29:45]", "t.py::test_add"]
    again = ["t.py::test_add", "t.py::test_parse[08:01:02]", "t.py::test_parse[08:01:03]"]
    assert cases_by_function(first) == [("t.py::test_add", 1), ("t.py::test_parse", 2)]
    assert cases_by_function(again) == cases_by_function(first)


def test_a_case_with_a_new_id_is_found_under_the_baseline_s_id_in_its_place():
    items = [Item("t.py::test_add"), Item("t.py::test_parse[b1]"), Item("t.py::test_parse[b2]")]
    found = by_baseline_id(
        items, ["t.py::test_add", "t.py::test_parse[a1]", "t.py::test_parse[a2]"]
    )
    assert found == {
        "t.py::test_add": items[0],
        "t.py::test_parse[a1]": items[1],
        "t.py::test_parse[a2]": items[2],
    }


def test_cases_parametrized_from_a_set_are_found_by_id_whatever_their_order():
    # isodate's TEST_CASES is a set holding None, whose hash (before Python 3.12) is its
    # address: each process collects the cases in another order, numbered anew.
    params = {"digits": 4, "text": "", "expected": None}
    items = [
        Case("t.py::test_parse[4-1985-W15-expected3]", Callspec(params)),
        Case("t.py::test_parse[4-1985-expected2]", Callspec(params)),
        Case("t.py::test_parse[4-19-expected12]", Callspec(params)),
    ]
    baseline = [
        "t.py::test_parse[4-19-expected2]",
        "t.py::test_parse[4-1985-expected12]",
        "t.py::test_parse[4-1985-W15-expected3]",
    ]
    assert by_baseline_id(items, baseline) == {
        "t.py::test_parse[4-19-expected2]": items[2],
        "t.py::test_parse[4-1985-expected12]": items[1],
        "t.py::test_parse[4-1985-W15-expected3]": items[0],
    }


def test_cases_that_do_not_pair_up_one_to_one_stay_unmatched():
    items = [Item("t.py::test_parse[b1]"), Item("t.py::test_parse[b2]")]
    found = by_baseline_id(items, ["t.py::test_parse[a1]"])
    assert found == {"t.py::test_parse[b1]": items[0], "t.py::test_parse[b2]": items[1]}


def test_a_case_whose_id_is_unchanged_keeps_it_beside_one_that_changed():
    items = [Item("t.py::test_parse[fixed]"), Item("t.py::test_parse[b1]")]
    found = by_baseline_id(items, ["t.py::test_parse[fixed]", "t.py::test_parse[a1]"])
    assert found == {"t.py::test_parse[fixed]": items[0], "t.py::test_parse[a1]": items[1]}


def test_a_case_kept_by_its_place_is_named_as_the_next_session_names_it():
    first = CaseNames(["t.py::test_add", "t.py::test_parse[a1]", "t.py::test_parse[a2]"])
    again = CaseNames(["t.py::test_add", "t.py::test_parse[b1]", "t.py::test_parse[b2]"])
    assert again.local(first.portable("t.py::test_parse[a2]")) == "t.py::test_parse[b2]"
    assert again.local(first.portable("t.py::test_add")) == "t.py::test_add"


def test_a_place_the_next_session_does_not_have_stays_unresolved():
    first = CaseNames(["t.py::test_parse[a1]", "t.py::test_parse[a2]"])
    again = CaseNames(["t.py::test_parse[b1]"])
    kept = first.portable("t.py::test_parse[a2]")
    assert again.local(kept) == kept
    assert kept not in {"t.py::test_parse[a2]", "t.py::test_parse[b1]"}
