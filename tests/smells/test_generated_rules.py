"""AT023-AT026: shapes found in machine-written tests."""

from auditor.smells.analyzer import analyze
from tests.conftest import FIXTURES

# AT023 print as oracle


def test_a_printed_result_with_no_check_is_a_print_oracle(codes):
    assert "AT023" in codes("def test_a():\n    print(total([1]))\n")


def test_a_print_beside_a_check_is_only_a_trace(codes):
    assert "AT023" not in codes(
        "def test_a():\n    print(total([1]))\n    assert total([1]) == 1\n"
    )


# AT024 mirror oracle


def test_an_expected_value_computed_by_the_code_under_test_is_a_mirror(codes):
    body = "def test_a():\n    expected = total([1, 2])\n    assert total([2, 1]) == expected\n"
    assert "AT024" in codes(body)


def test_an_expected_value_written_out_is_no_mirror(codes):
    assert "AT024" not in codes("def test_a():\n    assert total([1, 2]) == 3\n")


def test_the_very_same_expression_on_both_sides_is_a_self_comparison_only(codes):
    found = codes("def test_a():\n    assert total([1]) == total([1])\n")
    assert "AT004" in found and "AT024" not in found


def test_the_same_expression_on_both_sides_in_an_equality_test_is_neither(codes):
    found = codes("def test_ordered_equality():\n    assert total([1]) == total([1])\n")
    assert "AT004" not in found and "AT024" not in found


def test_a_mirror_beside_a_self_comparison_is_reported_too(codes):
    body = (
        "def test_a():\n    assert total([1]) == total([1])\n"
        "    assert total([2, 1]) == total([1, 2])\n"
    )
    found = codes(body)
    assert "AT004" in found and "AT024" in found


# AT025 suboptimal assert


def test_assert_true_of_a_comparison_is_suboptimal(codes):
    body = """
    class TestCart(unittest.TestCase):
        def test_a(self):
            self.assertTrue(total([1]) == 1)
    """
    assert "AT025" in codes(body)


def test_assert_equal_is_not_suboptimal(codes):
    body = """
    class TestCart(unittest.TestCase):
        def test_a(self):
            self.assertEqual(total([1]), 1)
    """
    assert "AT025" not in codes(body)


# AT026 checks in an autouse fixture


def test_an_autouse_fixture_that_asserts_hides_a_check(codes):
    body = """
    @pytest.fixture(autouse=True)
    def sane():
        assert total([]) == 0

    def test_a():
        assert total([1]) == 1
    """
    assert "AT026" in codes(body)


def test_a_requested_fixture_that_asserts_is_not_hidden(codes):
    body = """
    @pytest.fixture
    def sane():
        assert total([]) == 0

    def test_a(sane):
        assert total([1]) == 1
    """
    assert "AT026" not in codes(body)


def test_the_fixture_suite_shows_each_shape_on_its_test():
    root = FIXTURES / "shop"
    found = analyze([root / "tests_llm" / "test_generated_shapes.py"], root, {"shop"})
    by_code = {smell.code: smell.test for smell in found.findings}
    assert by_code["AT023"] == "test_print_as_oracle_line_total"
    assert by_code["AT001"] == "test_print_as_oracle_line_total"  # still counted assertion-free
    assert by_code["AT024"] == "test_mirror_oracle_tax"
    assert by_code["AT025"] == "TestCartSuboptimal.test_suboptimal_assert_item_count"
    assert by_code["AT026"] == ""
    checked = "test_plain_line_total_is_checked_against_a_worked_out_value"
    assert checked not in {smell.test for smell in found.findings}
