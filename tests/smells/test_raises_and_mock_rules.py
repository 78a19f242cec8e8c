"""AT006, AT007, AT009-AT011: exceptions and mocks."""

# AT006 mock-only assertions


def test_only_mock_checks_are_reported(codes):
    body = "def test_a():\n    m = Mock()\n    total(m)\n    m.assert_called_once()\n"
    assert "AT006" in codes(body)


def test_call_count_assert_reads_a_mock(codes):
    body = "def test_a():\n    m = Mock()\n    total(m)\n    assert m.call_count == 1\n"
    assert "AT006" in codes(body)


def test_mock_check_next_to_a_value_check_is_fine(codes):
    body = """
    def test_a():
        m = Mock(return_value=2)
        assert total([m]) == 2
        m.assert_called_once()
    """
    assert "AT006" not in codes(body)


# AT007 over-mocking


def test_many_mocks_and_one_check_is_over_mocking(codes):
    body = """
    @patch("os.getcwd")
    @patch("os.listdir")
    def test_a(listdir, getcwd):
        a, b = Mock(), MagicMock()
        assert total([a, b]) == 2
    """
    assert "AT007" in codes(body)


def test_patching_the_code_under_test_is_over_mocking(codes):
    body = """
    def test_a():
        with patch("shop.pricing.total", return_value=3):
            assert total([1]) == 3
    """
    assert "AT007" in codes(body)


def test_patching_a_boundary_is_fine(codes):
    body = """
    def test_a():
        with patch("time.time", return_value=3):
            assert total([1]) == 1
    """
    assert "AT007" not in codes(body)


# AT009 broad raises


def test_raises_exception_is_broad(codes):
    body = "def test_a():\n    with pytest.raises(Exception):\n        total(None)\n"
    assert "AT009" in codes(body)


def test_generic_type_without_match_is_broad(codes):
    body = "def test_a():\n    with pytest.raises(ValueError):\n        total(None)\n"
    assert "AT009" in codes(body)


def test_generic_type_with_match_is_precise(codes):
    body = "def test_a():\n    with pytest.raises(ValueError, match='neg'):\n        total(None)\n"
    assert "AT009" not in codes(body)


def test_domain_exception_without_match_is_precise(codes):
    body = "def test_a():\n    with pytest.raises(OutOfStock):\n        total(None)\n"
    assert "AT009" not in codes(body)


def test_captured_exception_checked_afterwards_is_precise(codes):
    body = """
    def test_a():
        with pytest.raises(ValueError) as info:
            total(None)
        assert info.value.args == ("neg",)
    """
    assert "AT009" not in codes(body)


def test_assert_raises_exception_is_broad(codes):
    body = """
    class TestX(unittest.TestCase):
        def test_a(self):
            with self.assertRaises(Exception):
                total(None)
    """
    assert "AT009" in codes(body)


# AT010 several statements in raises


def test_two_statements_in_raises_are_reported(codes):
    body = """
    def test_a():
        with pytest.raises(ValueError, match="x"):
            cart = Cart()
            cart.add("x", -1)
    """
    assert "AT010" in codes(body)


def test_single_statement_in_raises_is_fine(codes):
    body = """
    def test_a():
        cart = Cart()
        with pytest.raises(ValueError, match="x"):
            cart.add("x", -1)
    """
    assert "AT010" not in codes(body)


# AT011 swallowed exception


def test_except_pass_is_swallowed(codes):
    body = "def test_a():\n    try:\n        total(None)\n    except TypeError:\n        pass\n"
    assert "AT011" in codes(body)


def test_assert_only_in_handler_is_swallowed(codes):
    body = """
    def test_a():
        try:
            total(None)
        except TypeError as error:
            assert "None" in str(error)
    """
    assert "AT011" in codes(body)


def test_handler_assert_with_fail_in_try_is_fine(codes):
    body = """
    def test_a():
        try:
            total(None)
            pytest.fail("no error")
        except TypeError as error:
            assert "None" in str(error)
    """
    assert "AT011" not in codes(body)


def test_handler_assert_inside_a_raises_block_is_fine(codes):
    # schema 0.7.8: the `with` fails when nothing is raised, so the handler's check runs.
    body = """
    def test_a():
        with pytest.raises(TypeError):
            try:
                total(None)
            except TypeError as error:
                assert "None" in str(error)
                raise
    """
    assert "AT011" not in codes(body)


def test_handler_assert_inside_a_raises_block_bound_to_a_name_is_fine(codes):
    body = """
    SE = pytest.raises(TypeError)

    def test_a():
        with SE:
            try:
                total(None)
            except TypeError as error:
                assert "None" in str(error)
                raise
    """
    assert "AT011" not in codes(body)


def test_handler_assert_inside_another_with_is_swallowed(codes):
    body = """
    LOCK = threading.Lock()

    def test_a():
        with LOCK:
            try:
                total(None)
            except TypeError as error:
                assert "None" in str(error)
    """
    assert "AT011" in codes(body)


def test_try_finally_cleanup_is_fine(codes):
    body = """
    def test_a():
        cart = Cart()
        try:
            assert cart.total() == 0
        finally:
            cart.remove("x")
    """
    assert "AT011" not in codes(body)


def test_import_guard_that_skips_is_fine(codes):
    body = """
    def test_a():
        try:
            import numpy
        except ImportError:
            pytest.skip("needs numpy")
        assert total(numpy.ones(2)) == 2
    """
    assert "AT011" not in codes(body)
