"""The suite's own helpers: a comparison that always passed would make tests vacuous."""

from tests.conftest import differences


def test_differences_name_each_differing_value_by_its_path():
    first = {"mutation": {"mutants": [{"status": "Killed"}, {"status": "Survived"}]}, "a": 1}
    second = {"mutation": {"mutants": [{"status": "Killed"}, {"status": "Timeout"}]}, "b": 1}

    assert differences(first, second) == [
        "report.a: only in the first",
        "report.b: only in the second",
        "report.mutation.mutants[1].status: 'Survived' != 'Timeout'",
    ]


def test_differences_of_equal_documents_are_none():
    assert differences({"x": [1, {"y": None}]}, {"x": [1, {"y": None}]}) == []


def test_lists_of_different_lengths_differ_as_a_whole():
    assert differences([1], [1, 2]) == ["report: [1] != [1, 2]"]
