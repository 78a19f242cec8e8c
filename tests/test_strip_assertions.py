"""bench/strip_assertions.py: the benchmark's assertion-free version of a real suite."""

import importlib.util
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "strip_assertions.py"
_spec = importlib.util.spec_from_file_location("strip_assertions", _SCRIPT)
strip_assertions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(strip_assertions)


def test_assert_statements_and_self_assert_calls_go_and_the_calls_stay():
    source = (
        "def test_a():\n"
        "    value = f(1)\n"
        "    assert value == 2\n"
        "\n"
        "class T(TestCase):\n"
        "    def test_b(self):\n"
        "        self.assertEqual(f(1), 2)\n"
        "        self.helper(f(2))\n"
    )
    stripped, removed = strip_assertions.strip_source(source)
    assert removed == 2
    assert stripped == (
        "def test_a():\n"
        "    value = f(1)\n"
        "\n"
        "class T(TestCase):\n"
        "    def test_b(self):\n"
        "        self.helper(f(2))\n"
    )


def test_a_block_left_empty_gets_pass():
    stripped, _ = strip_assertions.strip_source("def test_a():\n    assert f(1)\n")
    assert stripped == "def test_a():\n    pass\n"


def test_only_test_files_are_rewritten(tmp_path):
    (tmp_path / "test_x.py").write_text("assert 1\nx = 2\n")
    (tmp_path / "helpers.py").write_text("assert 1\n")
    assert strip_assertions.strip_tree(tmp_path) == 1
    assert (tmp_path / "test_x.py").read_text() == "x = 2\n"
    assert (tmp_path / "helpers.py").read_text() == "assert 1\n"
