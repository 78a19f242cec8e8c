"""AT001-AT005, AT008, AT012, AT016: what a test checks."""

# AT001 assertion-free


def test_call_without_assert_is_assertion_free(codes):
    assert "AT001" in codes("def test_a():\n    total([1])\n")


def test_assert_statement_is_a_check(codes):
    assert "AT001" not in codes("def test_a():\n    assert total([1]) == 1\n")


def test_pytest_raises_is_a_check(codes):
    body = "def test_a():\n    with pytest.raises(ValueError, match='x'):\n        total(None)\n"
    assert "AT001" not in codes(body)


def test_local_helper_that_asserts_is_a_check(codes):
    body = """
    def expect_one(value):
        assert value == 1

    def check_twice(value):
        expect_one(value)

    def test_a():
        check_twice(total([1]))
    """
    assert "AT001" not in codes(body)


def test_helper_that_checks_nothing_does_not_count(codes):
    body = """
    def build():
        return Cart()

    def test_a():
        build()
    """
    assert "AT001" in codes(body)


def test_yield_fixture_teardown_assert_is_a_check(codes):
    body = """
    @pytest.fixture
    def cart():
        c = Cart()
        yield c
        assert c.total() == 0

    def test_a(cart):
        cart.remove("x")
    """
    assert "AT001" not in codes(body)


def test_mock_assert_method_is_a_check(codes):
    body = "def test_a():\n    m = Mock()\n    total(m)\n    m.assert_called_once_with(1)\n"
    assert "AT001" not in codes(body)


def test_subprocess_run_with_check_is_a_check(codes):
    body = "def test_a():\n    import subprocess\n    subprocess.run(['true'], check=True)\n"
    assert "AT001" not in codes(body)


def test_configured_helper_names_count_as_checks(codes):
    body = "def test_a():\n    smoke(total)\n"
    assert "AT001" in codes(body)
    assert "AT001" not in codes(body, frozenset({"smoke"}))


def test_hypothesis_no_crash_property_is_not_assertion_free(codes):
    body = "from hypothesis import given\n@given(st.integers())\ndef test_a(x):\n    total([x])\n"
    assert "AT001" not in codes(body)


# AT002 empty test


def test_pass_only_body_is_empty(codes):
    assert codes("def test_a():\n    pass\n") == {"AT002"}


def test_docstring_and_ellipsis_body_is_empty(codes):
    assert codes('def test_a():\n    """Later."""\n    ...\n') == {"AT002"}


def test_skipped_placeholder_is_not_reported_as_empty(codes):
    body = "@pytest.mark.skip(reason='todo')\ndef test_a():\n    pass\n"
    assert "AT002" not in codes(body)


# AT003 tautological assert


def test_assert_true_is_tautological(codes):
    assert "AT003" in codes("def test_a():\n    total([1])\n    assert True\n")


def test_assert_with_tuple_is_tautological(codes):
    assert "AT003" in codes("def test_a():\n    assert (total([1]) == 2, 'msg')\n")


def test_literal_compared_with_literal_is_tautological(codes):
    assert "AT003" in codes("def test_a():\n    total([1])\n    assert 1 == 1\n")


def test_assert_false_marks_unreachable_code_and_is_not_reported(codes):
    body = "def test_a():\n    if total([1]) != 1:\n        assert False, 'unreachable'\n"
    assert "AT003" not in codes(body)


def test_comparison_with_a_computed_value_is_not_tautological(codes):
    assert "AT003" not in codes("def test_a():\n    assert total([1]) == 1\n")


# AT004 self-comparison


def test_name_compared_with_itself_is_reported(codes):
    assert "AT004" in codes("def test_a():\n    x = total([1])\n    assert x == x\n")


def test_call_compared_with_same_call_is_reported(codes):
    assert "AT004" in codes("def test_a():\n    assert total([1]) == total( [1] )\n")


def test_nan_check_with_not_equal_is_not_reported(codes):
    assert "AT004" not in codes("def test_a():\n    x = total([1])\n    assert x != x\n")


def test_determinism_check_is_not_reported(codes):
    body = "def test_total_is_deterministic():\n    assert total([1]) == total([1])\n"
    assert "AT004" not in codes(body)


def test_equality_check_of_two_built_values_is_not_reported(codes):
    body = "def test_ordered_equality():\n    assert Money(1) == Money(1)\n"
    assert "AT004" not in codes(body)


def test_identity_of_a_name_with_itself_is_reported_in_an_equality_test(codes):
    body = "def test_eq():\n    x = Money(1)\n    assert x is x\n"
    assert "AT004" in codes(body)


def test_a_word_that_only_contains_eq_does_not_make_an_equality_test(codes):
    body = "def test_request_frequency():\n    assert total([1]) == total([1])\n"
    assert "AT004" in codes(body)


# AT005 weak oracle


def test_is_not_none_only_is_a_weak_oracle(codes):
    assert "AT005" in codes("def test_a():\n    assert total([1]) is not None\n")


def test_isinstance_and_len_checks_are_weak(codes):
    body = (
        "def test_a():\n    r = total([1])\n    assert isinstance(r, int)\n    assert len(r) > 0\n"
    )
    assert "AT005" in codes(body)


def test_bare_truthiness_is_weak(codes):
    assert "AT005" in codes("def test_a():\n    assert total([1])\n")


def test_predicate_call_is_an_exact_check(codes):
    assert "AT005" not in codes("def test_a():\n    assert Cart().is_empty()\n")


def test_one_exact_assert_makes_the_oracle_strong(codes):
    body = "def test_a():\n    r = total([1])\n    assert r is not None\n    assert r == 1\n"
    assert "AT005" not in codes(body)


def test_weak_assert_next_to_raises_is_not_reported(codes):
    body = """
    def test_a():
        assert total([1]) is not None
        with pytest.raises(ValueError, match="neg"):
            total([-1])
    """
    assert "AT005" not in codes(body)


def test_is_none_is_an_exact_check(codes):
    assert "AT005" not in codes("def test_a():\n    assert total([]) is None\n")


# AT008 uncalled mock assertion


def test_mock_assertion_without_parentheses_is_reported(codes):
    body = "def test_a():\n    m = Mock()\n    assert total([m]) == 1\n    m.assert_called_once\n"
    assert "AT008" in codes(body)


def test_misspelled_mock_assertion_is_reported(codes):
    body = "def test_a():\n    m = Mock()\n    total(m)\n    m.called_once_with(1)\n"
    assert "AT008" in codes(body)


def test_called_mock_assertion_is_fine(codes):
    body = "def test_a():\n    m = Mock()\n    total(m)\n    m.assert_called_once_with(1)\n"
    assert "AT008" not in codes(body)


# AT012 returns instead of asserting


def test_returning_a_value_is_reported(codes):
    assert "AT012" in codes("def test_a():\n    return total([1])\n")


def test_bare_return_is_fine(codes):
    body = "def test_a():\n    if os.name == 'nt':\n        return\n    assert total([1]) == 1\n"
    assert "AT012" not in codes(body)


def test_return_inside_nested_function_is_fine(codes):
    body = "def test_a():\n    def key(x):\n        return x\n    assert total([1], key=key) == 1\n"
    assert "AT012" not in codes(body)


# AT016 duplicate assert


def test_same_assert_twice_in_a_row_is_reported(codes):
    body = "def test_a():\n    assert total([1]) == 1\n    assert total([1]) == 1\n"
    assert "AT016" in codes(body)


def test_same_assert_after_a_state_change_is_fine(codes):
    body = """
    def test_a():
        cart = Cart()
        assert cart.total() == 0
        cart.add("x", 1)
        assert cart.total() == 0
    """
    assert "AT016" not in codes(body)


def test_a_benchmark_without_a_check_is_a_benchmark_not_assertion_free(codes):
    found = codes("def test_speed(benchmark):\n    benchmark(total, [1, 2])\n")
    assert "AT001" not in found
    assert "AT021" in found


def test_a_benchmark_that_checks_its_result_is_no_smell(codes):
    body = "def test_speed(benchmark):\n    assert benchmark(total, [1, 2]) == 3\n"
    assert not {"AT001", "AT021"} & codes(body)


def test_a_unittest_helper_method_that_asserts_is_a_check(codes):
    body = """
    class TestTotal(unittest.TestCase):
        def _expect_sum(self, values, expected):
            self.assertEqual(total(values), expected)

        def test_two_values(self):
            self._expect_sum([1, 2], 3)
    """
    assert "AT001" not in codes(body)


def test_a_unittest_helper_method_that_checks_nothing_is_no_check(codes):
    body = """
    class TestTotal(unittest.TestCase):
        def _run(self, values):
            total(values)

        def test_two_values(self):
            self._run([1, 2])
    """
    assert "AT001" in codes(body)


def test_an_assert_in_a_callback_the_test_defines_is_a_check(codes):
    body = """
    def test_the_callback_gets_the_total():
        def received(value):
            assert value == 3

        total([1, 2], then=received)
    """
    assert "AT001" not in codes(body)


def test_a_lambda_that_asserts_through_a_method_is_a_check(codes):
    body = """
    class TestTotal(unittest.TestCase):
        def test_the_callback_gets_the_total(self):
            total([1, 2], then=lambda value: self.assertEqual(value, 3))
    """
    assert "AT001" not in codes(body)


def test_a_checking_helper_handed_over_as_a_callback_is_a_check(codes):
    body = """
    def expect_three(value):
        assert value == 3

    def test_the_callback_gets_the_total():
        total([1, 2], then=expect_three)
    """
    assert "AT001" not in codes(body)


def test_a_class_whose_name_contains_check_is_code_under_test(codes):
    body = "def test_a():\n    shop.ISBNChecker('978-0-306-40615-7').is_isbn_13()\n"
    assert "AT001" in codes(body)


def test_a_method_named_check_on_the_code_under_test_is_no_check(codes):
    body = "def test_a():\n    Cart().check()\n"
    assert "AT001" in codes(body)


def test_a_function_named_check_from_the_code_under_test_is_no_check(codes):
    body = """
    from shop import check_stock

    def test_a():
        check_stock(3)
    """
    assert "AT001" in codes(body)


def test_an_imported_test_helper_named_check_is_a_check(codes):
    body = """
    from tests.helpers import check_round_trip

    def test_a():
        check_round_trip(Cart())
    """
    assert "AT001" not in codes(body)


def test_pytest_check_calls_are_checks(codes):
    body = "def test_a():\n    check.equal(total([1]), 1)\n"
    assert "AT001" not in codes(body)


def test_a_camel_case_assertion_api_is_a_check(codes):
    body = "def test_a():\n    assertThat(total([1])).isEqualTo(1)\n"
    assert "AT001" not in codes(body)
