"""Which top-level statements a module-path mutant runs again, and what that leaves."""

from __future__ import annotations

import textwrap
import types

from auditor.mutation.reexecution import Reexecution, compile_statements
from auditor.mutation.swap import reexecute_module

MODULE = textwrap.dedent(
    """\
    from __future__ import annotations

    RATE = 2
    DOUBLE = RATE * 2
    NAMES = ['a', 'b']


    def price(count):
        return count * DOUBLE
    """
)


def test_a_statement_reruns_with_those_computed_from_it():
    assert Reexecution(MODULE).lines_to_rerun(3, 3) == ((1, 1), (3, 3), (4, 4))


def test_a_statement_nothing_reads_at_import_time_reruns_alone():
    assert Reexecution(MODULE).lines_to_rerun(5, 5) == ((1, 1), (5, 5))


def test_a_mutant_that_adds_lines_shifts_the_statements_after_it():
    assert Reexecution(MODULE).lines_to_rerun(3, 3, added_lines=1) == ((1, 1), (3, 4), (5, 5))


def test_a_statement_that_reads_what_it_rebinds_reruns_the_whole_module():
    source = "COUNT = 1\nCOUNT = COUNT + 1\n"
    assert Reexecution(source).lines_to_rerun(1, 1) == ()


def test_a_statement_that_reads_a_name_deleted_later_reruns_the_whole_module():
    source = "def _make():\n    return 1\n\nVALUE = _make()\ndel _make\n"
    assert Reexecution(source).lines_to_rerun(4, 4) == ()


def test_a_bare_call_among_the_statements_reruns_the_whole_module():
    source = "TABLE = {}\nTABLE.update(a=1)\nSIZE = len(TABLE)\n"
    assert Reexecution(source).lines_to_rerun(1, 1) == ()


def test_a_line_shared_with_another_statement_reruns_the_whole_module():
    assert Reexecution("A = 1; B = 2\n").lines_to_rerun(1, 1) == ()


def test_comprehension_variables_are_not_bindings_of_the_module():
    source = "WORDS = ['a']\nUPPER = [w.upper() for w in WORDS]\n"
    assert Reexecution(source).lines_to_rerun(1, 1) == ((1, 1), (2, 2))


def test_rerunning_the_chosen_lines_leaves_the_namespace_a_full_rerun_would():
    mutated = MODULE.replace("RATE = 2", "RATE = 3")
    partial, full = types.ModuleType("partial"), types.ModuleType("full")
    for module in (partial, full):
        exec(compile(MODULE, "<rates>", "exec"), module.__dict__)
    lines = Reexecution(MODULE).lines_to_rerun(3, 3)
    reexecute_module(partial, compile_statements(mutated, lines, "<rates>"))
    reexecute_module(full, [compile(mutated, "<rates>", "exec")])
    assert (partial.DOUBLE, partial.price(1)) == (full.DOUBLE, full.price(1)) == (6, 6)


def test_values_computed_from_a_rerun_class_are_instances_of_the_class_the_module_keeps():
    source = "class Line:\n    width = 1\n\nDEFAULT = Line()\n"
    module = types.ModuleType("lines")
    exec(compile(source, "<lines>", "exec"), module.__dict__)
    kept = module.Line
    mutated = source.replace("width = 1", "width = 2")
    lines = Reexecution(source).lines_to_rerun(2, 2)
    reexecute_module(module, compile_statements(mutated, lines, "<lines>"))
    assert module.Line is kept
    assert isinstance(module.DEFAULT, kept)
    assert module.DEFAULT.width == 2


def test_future_imports_apply_to_every_rerun_statement():
    source = "from __future__ import annotations\n\n\ndef f(x: Undefined = 1):\n    return x\n"
    module = types.ModuleType("future")
    exec(compile(source, "<future>", "exec", dont_inherit=True), module.__dict__)
    mutated = source.replace("= 1", "= 2")
    lines = Reexecution(source).lines_to_rerun(4, 4)
    reexecute_module(module, compile_statements(mutated, lines, "<future>"))
    assert module.f() == 2
