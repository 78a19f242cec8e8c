"""Which mutants `--verify-sample` re-checks."""

import random

from auditor.mutation.verify import _sample
from auditor.report import Mutant
from tests.conftest import a_mutant


def mutant(name: str, path: str = "swap", covered_by: tuple[str, ...] = ("t::a",)) -> Mutant:
    return a_mutant(name, path=path, covered_by=list(covered_by))


def test_half_the_sample_comes_from_code_that_subprocesses_run():
    in_process = [mutant(f"p{n}") for n in range(20)]
    reached = [mutant("s1", "subprocess"), mutant("c1", "copy")]
    reached += [mutant(f"x{n}", covered_by=("t::spawns",)) for n in range(5)]
    sample = _sample(in_process + reached, 8, {"t::spawns"}, random.Random(0))
    assert len(sample) == 8
    assert sum(m in reached for m in sample) == 4


def test_the_sample_is_filled_from_the_other_kind_when_one_runs_short():
    in_process = [mutant(f"p{n}") for n in range(20)]
    reached = [mutant("s1", "subprocess")]
    sample = _sample(in_process + reached, 8, set(), random.Random(0))
    assert len(sample) == 8
    assert reached[0] in sample


def test_a_sample_larger_than_the_candidates_takes_them_all():
    candidates = [mutant("p1"), mutant("s1", "subprocess")]
    assert sorted(m.id for m in _sample(candidates, 40, set(), random.Random(0))) == ["p1", "s1"]
