"""The whole project's last known verdicts, kept per file between runs: what a diff run
scores the project by without planning it."""

from auditor.mutation import known
from auditor.mutation.cache import ResultCache
from auditor.mutation.scoring import Verdict

KILLED = Verdict("Killed", "assertion", True)
SURVIVED = Verdict("Survived", None, False)
UNCOVERED = Verdict("NoCoverage", None, False)


def of(file: str, *verdicts: Verdict | None) -> dict[str, Verdict | None]:
    """The verdicts as a file's mutants, numbered."""
    return {f"{file}::m{n}": verdict for n, verdict in enumerate(verdicts)}


def test_the_verdicts_recorded_for_each_file_are_read_back(tmp_path):
    cache = ResultCache(tmp_path)
    known.record(
        cache,
        "s",
        {"a.py": of("a.py", KILLED, SURVIVED), "b.py": of("b.py", UNCOVERED)},
        ["a.py", "b.py"],
    )
    assert sorted(known.read(cache, "s"), key=repr) == sorted(
        [KILLED, SURVIVED, UNCOVERED], key=repr
    )


def test_a_file_recorded_again_replaces_its_verdicts_and_leaves_the_others(tmp_path):
    cache = ResultCache(tmp_path)
    known.record(
        cache, "s", {"a.py": of("a.py", SURVIVED), "b.py": of("b.py", UNCOVERED)}, ["a.py", "b.py"]
    )
    known.record(cache, "s", {"a.py": of("a.py", KILLED, KILLED)}, ["a.py", "b.py"])
    assert sorted(known.read(cache, "s"), key=repr) == sorted([KILLED, KILLED, UNCOVERED], key=repr)


def test_a_file_gone_from_the_project_loses_its_verdicts(tmp_path):
    cache = ResultCache(tmp_path)
    known.record(
        cache, "s", {"a.py": of("a.py", SURVIVED), "b.py": of("b.py", UNCOVERED)}, ["a.py", "b.py"]
    )
    known.record(cache, "s", {"a.py": of("a.py", SURVIVED)}, ["a.py"])
    assert known.read(cache, "s") == [SURVIVED]


def test_other_settings_neither_read_nor_replace_them(tmp_path):
    cache = ResultCache(tmp_path)
    known.record(cache, "one", {"a.py": of("a.py", KILLED)}, ["a.py"])
    known.record(cache, "two", {"a.py": of("a.py", SURVIVED)}, ["a.py"])
    assert (known.read(cache, "one"), known.read(cache, "two")) == ([KILLED], [SURVIVED])


def test_a_row_in_another_shape_is_no_verdict(tmp_path):
    cache = ResultCache(tmp_path)
    known.record(cache, "s", {"a.py": of("a.py", KILLED)}, ["a.py", "b.py"])
    rows = '{"b.py::m0": ["Exploded", null, false], "b.py::m1": [1, 2]}'
    cache.put_known_verdicts("s", {"b.py": rows, "c.py": '[["Killed", null, true]]'}, {"a.py"})
    assert known.read(cache, "s") == [KILLED]


def test_the_settings_key_changes_with_any_setting():
    keys = {
        known.settings_key("salt", True, ["tests"]),
        known.settings_key("salt", False, ["tests"]),
        known.settings_key("salt", True, ["tests_other"]),
        known.settings_key("other salt", True, ["tests"]),
    }
    assert len(keys) == 4


def test_only_the_latest_settings_keep_their_verdicts(tmp_path):
    """Each audit version makes new settings: the oldest ones' rows go."""
    cache = ResultCache(tmp_path)
    for n in range(6):
        known.record(cache, f"settings-{n}", {"a.py": of("a.py", KILLED)}, ["a.py"])
    kept = [n for n in range(6) if known.read(cache, f"settings-{n}")]
    assert kept == [2, 3, 4, 5]


def test_a_file_planned_in_part_keeps_its_other_mutants_verdicts(tmp_path):
    """A diff run plans the functions its change reaches: m0 is judged again, m1 was
    not planned, m2 was planned but not judged (out of the diff's scope): both keep
    their verdicts; m3 is no longer in the file."""
    cache = ResultCache(tmp_path)
    known.record(cache, "s", {"a.py": of("a.py", SURVIVED, KILLED, SURVIVED, UNCOVERED)}, ["a.py"])
    now = {"a.py::m0": KILLED, "a.py::m2": None}
    known.record(
        cache, "s", {"a.py": now}, ["a.py"], {"a.py": {"a.py::m0", "a.py::m1", "a.py::m2"}}
    )
    assert known.read(cache, "s") == [KILLED, KILLED, SURVIVED]


def test_a_file_planned_whole_keeps_the_verdicts_of_its_mutants_only(tmp_path):
    """m1 was planned but not judged (the budget ran out): it keeps its verdict; m2 is
    no longer in the file."""
    cache = ResultCache(tmp_path)
    known.record(cache, "s", {"a.py": of("a.py", SURVIVED, KILLED, UNCOVERED)}, ["a.py"])
    known.record(cache, "s", {"a.py": {"a.py::m0": KILLED, "a.py::m1": None}}, ["a.py"])
    assert known.read(cache, "s") == [KILLED, KILLED]
