"""An import-time survivor's witness search goes through the class whose body holds it
first, and replays only the inputs that ran code of its file reading what the mutated
statement makes: on the others the mutant's values are never read, so the mutant does
what the original does."""

from __future__ import annotations

from pathlib import Path

from auditor.mutation.protocol import Job, text_digest
from auditor.mutation.readers import ReadIndex
from auditor.probes.calls import Subject
from auditor.probes.child import _run_forked
from auditor.probes.protocol import Reads, SurvivorSpec
from auditor.probes.stage import _search_through, _survivors
from auditor.probes.witness import witnesses_for_group
from auditor.report import BaselineSection, MutationSection, Witness
from tests.conftest import a_mutant, probe_spec, target_spec

SOURCE = """\
class Prices:
    RATES = {"tea": 2}
    DEFAULT = 0
    UNUSED = 5


def price(kind: str) -> int:
    return Prices.RATES.get(kind, Prices.DEFAULT)


def describe(text: str) -> str:
    return text.strip()
"""


def _survivor(module: tuple[str, Path], line: int, original: str, replacement: str):
    """The survivor of the class attribute on `line` changed, as the probe stage makes
    it (with the project's names read), and the subjects of the file's functions."""
    name, path = module
    file = path.name
    start = SOURCE.index(f"= {original}\n", SOURCE.index(SOURCE.splitlines()[line - 1])) + 2
    mutant_id = f"{file}::<module>::constants.number@{line}:{start}#0"
    job = Job(
        id=mutant_id,
        path="module",
        file=str(path),
        module_name=name,
        tests=[],
        timeout=1.0,
        source_digest=text_digest(SOURCE),
        patch_start=start,
        patch_end=start + len(original),
        replacement=replacement,
        rerun_lines=[[1, 4]],
    )
    mutant = a_mutant(mutant_id, file=file, function="", line=line, end_line=line, path="module")
    probed = {
        f"{file}::{function}": target_spec(f"{file}::{function}", str(path), name)
        for function in ("describe", "price")
    }
    [spec], _ = _survivors(
        BaselineSection.model_construct(observed=[]),
        MutationSection.model_construct(mutants=[mutant]),
        {mutant_id: job},
        probed,
        ReadIndex(path.parent, [path], [], []),
    )
    subjects = {key: Subject(target, {str(path.resolve())}) for key, target in probed.items()}
    return spec, subjects


def _search(spec: SurvivorSpec, subjects: dict[str, Subject]) -> Witness:
    batch = witnesses_for_group([spec], subjects, probe_spec(), {}, _run_forked, {})
    [witness] = batch.witnesses
    return witness


def test_a_class_attribute_is_read_where_its_file_names_it(module):
    spec, _ = _survivor(module, 3, "0", "1")
    assert spec.reads == Reads(names=["DEFAULT"], lines=[3, 8])


def test_a_survivor_read_by_one_function_is_witnessed_through_it(module):
    spec, subjects = _survivor(module, 3, "0", "1")
    witness = _search(spec, subjects)
    assert (witness.status, witness.function) == ("found", "price")


def test_a_survivor_no_function_reads_is_not_replayed_and_says_so(module):
    spec, subjects = _survivor(module, 4, "5", "6")
    witness = _search(spec, subjects)
    assert witness.status == "not_shown"
    assert witness.reason.startswith("none of ")
    assert witness.reason.endswith(" inputs ran code that reads UNUSED")


TWO_CLASSES = """\
class Apple:
    def ripe(self):
        return True


class Pear:
    SIZES = ("small", "large")

    def sizes(self):
        return self.SIZES
"""


def test_a_class_attribute_s_survivor_is_searched_through_its_own_class_first(tmp_path):
    path = tmp_path / "fruit.py"
    path.write_text(TWO_CLASSES, encoding="utf-8")
    probed = {
        "fruit.py::Apple.ripe": target_spec("fruit.py::Apple.ripe", str(path), "fruit", line=2),
        "fruit.py::Pear.sizes": target_spec("fruit.py::Pear.sizes", str(path), "fruit", line=9),
    }
    mutant = a_mutant("m", file="fruit.py", function="", line=7, end_line=7, path="module")
    index = ReadIndex(tmp_path, [path], [], [])
    assert _search_through(mutant, probed, set(), index) == [
        "fruit.py::Pear.sizes",
        "fruit.py::Apple.ripe",
    ]
