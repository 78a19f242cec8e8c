"""AT013-AT015, AT017-AT020 and inline suppression."""

from auditor.smells.analyzer import analyze
from tests.smells.conftest import findings_for

# AT013 ignored result


def test_discarded_result_in_a_test_that_checks_something_else(codes):
    body = "def test_a():\n    total([1])\n    assert Cart().lines == []\n"
    assert "AT013" in codes(body)


def test_assigned_and_never_read_result_is_reported(codes):
    body = "def test_a():\n    result = total([1])\n    assert Cart().lines == []\n"
    assert "AT013" in codes(body)


def test_side_effect_checked_later_is_fine(codes):
    body = "def test_a():\n    items = [3, 1]\n    total(items)\n    assert items == [1, 3]\n"
    assert "AT013" not in codes(body)


def test_result_read_later_is_fine(codes):
    body = "def test_a():\n    result = total([1])\n    assert result == 1\n"
    assert "AT013" not in codes(body)


# AT014 sleepy test


def test_fixed_sleep_is_reported(codes):
    assert "AT014" in codes("def test_a():\n    time.sleep(0.5)\n    assert total([]) == 0\n")


def test_sleep_in_a_timeout_test_is_fine(codes):
    body = "def test_timeout_expires():\n    time.sleep(0.5)\n    assert total([]) == 0\n"
    assert "AT014" not in codes(body)


def test_zero_sleep_is_fine(codes):
    assert "AT014" not in codes("def test_a():\n    time.sleep(0)\n    assert total([]) == 0\n")


# AT015 conditional test logic


def test_assert_in_a_loop_is_reported(codes):
    body = "def test_a():\n    for x in [1, 2]:\n        assert total([x]) == x\n"
    assert "AT015" in codes(body)


def test_assert_in_an_if_is_reported(codes):
    body = "def test_a():\n    if os.name == 'posix':\n        assert total([1]) == 1\n"
    assert "AT015" in codes(body)


def test_skip_guard_without_assert_is_fine(codes):
    body = """
    def test_a():
        if os.name == "nt":
            pytest.skip("posix only")
        assert total([1]) == 1
    """
    assert "AT015" not in codes(body)


def test_loop_that_builds_data_is_fine(codes):
    body = "def test_a():\n    items = [x for x in range(3)]\n    assert total(items) == 3\n"
    assert "AT015" not in codes(body)


# AT017 duplicate test


def test_redefined_test_name_is_reported(codes):
    body = (
        "def test_a():\n    assert total([1]) == 1\n\ndef test_a():\n    assert total([2]) == 2\n"
    )
    assert "AT017" in codes(body)


def test_duplicate_parametrize_row_is_reported(codes):
    body = """
    @pytest.mark.parametrize("x", [1, 2, 1])
    def test_a(x):
        assert total([x]) == x
    """
    assert "AT017" in codes(body)


def test_identical_bodies_are_reported(codes):
    body = (
        "def test_a():\n    assert total([1]) == 1\n\ndef test_b():\n    assert total([1]) == 1\n"
    )
    assert "AT017" in codes(body)


def test_tests_of_neighbouring_boundaries_are_fine(codes):
    body = (
        "def test_a():\n    assert total([1]) == 1\n\ndef test_b():\n    assert total([2]) == 2\n"
    )
    assert "AT017" not in codes(body)


# AT018 skip without reason


def test_skip_without_reason_is_reported(codes):
    assert "AT018" in codes("@pytest.mark.skip\ndef test_a():\n    assert total([1]) == 1\n")


def test_skip_with_reason_is_fine(codes):
    body = "@pytest.mark.skip(reason='bug 12')\ndef test_a():\n    assert total([1]) == 1\n"
    assert "AT018" not in codes(body)


# AT019 non-determinism


def test_wall_clock_in_a_test_is_reported(codes):
    assert "AT019" in codes("def test_a():\n    assert total([time.time()]) > 0\n")


def test_injected_value_is_fine(codes):
    assert "AT019" not in codes("def test_a():\n    assert total([1.5]) == 1.5\n")


# AT020 writes outside tmp


def test_opening_an_absolute_path_for_writing_is_reported(codes):
    body = "def test_a():\n    open('/etc/x', 'w').write('1')\n    assert total([]) == 0\n"
    assert "AT020" in codes(body)


def test_chmod_of_a_system_path_is_reported(codes):
    body = "def test_a():\n    os.chmod('/usr/bin/env', 0o777)\n    assert total([]) == 0\n"
    assert "AT020" in codes(body)


def test_writing_under_tmp_path_is_fine(codes):
    body = "def test_a(tmp_path):\n    open(tmp_path / 'x', 'w')\n    assert total([]) == 0\n"
    assert "AT020" not in codes(body)


def test_reading_a_system_file_is_fine(codes):
    body = "def test_a():\n    open('/etc/hostname').read()\n    assert total([]) == 0\n"
    assert "AT020" not in codes(body)


# suppression and reporting


def suppressed_run(tmp_path, line: str) -> set[str]:
    test_file = tmp_path / "test_x.py"
    test_file.write_text(f"from shop import total\n\ndef test_a():\n{line}\n")
    section = analyze([test_file], tmp_path, {"shop"})
    return {smell.code for smell in section.findings}


def test_inline_suppression_hides_the_named_rule(tmp_path):
    line = "    assert total([1]) is not None  # audit: ignore[AT005]"
    assert "AT005" not in suppressed_run(tmp_path, line)


def test_suppression_of_another_rule_keeps_the_finding(tmp_path):
    line = "    assert total([1]) is not None  # audit: ignore[AT001]"
    assert "AT005" in suppressed_run(tmp_path, line)


def test_unparsable_test_file_is_listed_not_fatal(tmp_path):
    (tmp_path / "test_bad.py").write_text("def test_a(:\n")
    (tmp_path / "test_good.py").write_text("def test_b():\n    pass\n")
    section = analyze(sorted(tmp_path.glob("*.py")), tmp_path, {"shop"})
    assert [error.file for error in section.unparsable] == ["test_bad.py"]
    assert [smell.code for smell in section.findings] == ["AT002"]


def test_a_file_not_in_utf8_without_a_coding_line_is_listed_with_the_line_of_the_byte(tmp_path):
    (tmp_path / "test_latin.py").write_bytes(b"# caf\xe9\ndef test_a():\n    assert 1\n")
    section = analyze([tmp_path / "test_latin.py"], tmp_path, {"shop"})
    [error] = section.unparsable
    assert (error.file, error.line) == ("test_latin.py", 1)
    assert "encoding" in error.message


def test_a_syntax_error_is_listed_with_its_line(tmp_path):
    (tmp_path / "test_bad.py").write_text("import os\n\ndef test_a(:\n")
    [error] = analyze([tmp_path / "test_bad.py"], tmp_path, {"shop"}).unparsable
    assert error.line == 3


def test_findings_carry_the_line_and_test_name():
    findings = findings_for("def test_a():\n    assert total([1]) is not None\n")
    weak = next(f for f in findings if f.code == "AT005")
    assert weak.test == "test_a"
    assert weak.line == 12


def test_methods_of_test_classes_are_analyzed(codes):
    body = "class TestCart:\n    def test_a(self):\n        total([1])\n"
    assert "AT001" in codes(body)


def test_fixtures_are_not_tests(codes):
    body = "@pytest.fixture\ndef test_data():\n    return total([1])\n"
    assert codes(body) == set()


def test_a_loop_of_subtests_is_not_conditional_logic(codes):
    body = """
    class TestTotal(unittest.TestCase):
        def test_cases(self):
            for values, expected in [([1], 1), ([1, 2], 3)]:
                with self.subTest(values=values):
                    self.assertEqual(total(values), expected)
    """
    assert "AT015" not in codes(body)


def test_a_loop_of_plain_asserts_is_conditional_logic(codes):
    body = "def test_cases():\n    for n in [1, 2]:\n        assert total([n]) == n\n"
    assert "AT015" in codes(body)


def test_replacing_text_in_a_string_literal_is_not_a_file_write(codes):
    body = "def test_csv():\n    assert total('''1,2'''.replace(',', ' ')) == 3\n"
    assert "AT020" not in codes(body)


def test_renaming_a_literal_path_outside_tmp_is_a_file_write(codes):
    body = (
        "def test_move():\n"
        "    Path('/etc/app.conf').replace('/etc/app.bak')\n"
        "    assert total([1])\n"
    )
    assert "AT020" in codes(body)


def test_a_cached_property_named_like_a_test_is_not_a_test():
    body = """
    class TestCart:
        @functools.cached_property
        def test_cart(self):
            return Cart()

        def test_a_new_cart_is_empty(self):
            assert self.test_cart.total() == 0
    """
    assert [(f.code, f.test) for f in findings_for(body)] == []
