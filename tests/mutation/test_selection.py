"""Choosing mutants: git diffs, shards, stratified samples and their intervals."""

import subprocess
from collections import Counter
from types import SimpleNamespace

import pytest

from auditor.errors import ConfigError, DiffError
from auditor.mutation.selection import (
    Shard,
    changed_lines,
    stratified_order,
    stratified_sample,
    touched_by_diff,
    wilson_interval,
)

SOURCE = "".join(f"# line {n}\n" for n in range(1, 21))


def mutant(id_, file="a.py", family="arithmetic", line=1, end_line=None, tests=(), function=()):
    """`function`: (its `def` line, its last line); none at module level."""
    def_line, last = function or (0, 0)
    site = SimpleNamespace(
        family=family,
        line=line,
        end_line=end_line or line,
        function="f" if function else "",
        function_line=def_line,
        function_end=SOURCE.index(f"# line {last}\n") + len(f"# line {last}\n") if last else 0,
    )
    return SimpleNamespace(id=id_, file=file, site=site, tests=list(tests), source=SOURCE)


def population():
    return [
        mutant(f"{file}::f::{family}@{n}", file=file, family=family)
        for file, family, count in [
            ("a.py", "arithmetic", 60),
            ("a.py", "constants", 30),
            ("b.py", "arithmetic", 10),
        ]
        for n in range(count)
    ]


def git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "a@b.c")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("".join(f"x{n} = {n}\n" for n in range(1, 11)))
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    return tmp_path


def test_shards_partition_the_mutants():
    ids = [m.id for m in population()]
    owners = Counter(k for id_ in ids for k in range(1, 5) if Shard(k, 4).holds(id_))
    assert sum(owners.values()) == len(ids)
    assert all(count > 10 for count in owners.values())


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b"])
def test_bad_shard_is_a_config_error(text):
    with pytest.raises(ConfigError, match="--shard expects K/N"):
        Shard.parse(text)


def test_a_sample_is_proportional_to_its_strata():
    chosen = stratified_sample(population(), 20, seed=1)
    assert Counter((m.file, m.site.family) for m in chosen) == {
        ("a.py", "arithmetic"): 12,
        ("a.py", "constants"): 6,
        ("b.py", "arithmetic"): 2,
    }


def test_a_sample_depends_only_on_its_seed():
    first = [m.id for m in stratified_sample(population(), 20, seed=3)]
    assert first == [m.id for m in stratified_sample(list(reversed(population())), 20, seed=3)]
    assert first != [m.id for m in stratified_sample(population(), 20, seed=4)]


def test_every_prefix_of_the_budget_order_is_nearly_stratified():
    order = stratified_order(population(), seed=0)
    assert sorted(m.id for m in order) == sorted(m.id for m in population())
    first_ten = Counter(m.site.family for m in order[:10])
    assert 5 <= first_ten["arithmetic"] <= 8


def test_wilson_interval_matches_the_textbook_values():
    low, high = wilson_interval(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.49, 0.943)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_changed_lines_include_uncommitted_and_untracked_files(repo):
    source = repo / "pkg" / "m.py"
    lines = source.read_text().splitlines(keepends=True)
    lines[3] = "x4 = 40\n"
    del lines[7]
    source.write_text("".join(lines))
    (repo / "pkg" / "new.py").write_text("a = 1\nb = 2\n")
    changed = changed_lines(repo, "HEAD")
    assert changed["pkg/m.py"] == {4, 7, 8}
    assert changed["pkg/new.py"] == {1, 2}


def test_changed_lines_against_an_older_commit(repo):
    (repo / "pkg" / "m.py").write_text("x1 = 100\n" + (repo / "pkg" / "m.py").read_text()[7:])
    git(repo, "commit", "-qam", "two")
    assert changed_lines(repo, "HEAD~1") == {"pkg/m.py": {1}}
    assert changed_lines(repo, "HEAD") == {}


def test_an_unknown_ref_is_a_diff_error(repo):
    with pytest.raises(DiffError, match=r"unknown git ref 'no-such-ref'.*fetch-depth"):
        changed_lines(repo, "no-such-ref")


def test_a_folder_outside_git_is_a_diff_error(tmp_path):
    with pytest.raises(DiffError):
        changed_lines(tmp_path, "HEAD")


def test_diff_selects_the_mutants_on_changed_lines():
    mutants = [mutant("on", line=4), mutant("spans", line=2, end_line=5), mutant("off", line=9)]
    chosen, called = touched_by_diff(mutants, {"a.py": {4}}, {})
    assert ([m.id for m in chosen], called) == (["on", "spans"], 0)


def test_diff_selects_every_mutant_of_a_function_a_changed_test_ran_part_of():
    mutants = [
        mutant("same-function", line=12, function=(10, 14)),
        mutant("other-function", line=17, function=(16, 18)),
        mutant("other-file", file="b.py", line=12, function=(10, 14)),
    ]
    chosen, called = touched_by_diff(mutants, {}, {"a.py": {11}})
    assert ([m.id for m in chosen], called) == (["same-function"], 1)


def test_diff_leaves_out_import_time_code_a_changed_test_did_not_run_itself():
    """A test reads the module-level table its import filled (covered, in mutant.tests),
    but its own phases ran none of it."""
    mutants = [mutant("table", line=3, tests=["tests/test_x.py::test_a"])]
    chosen, called = touched_by_diff(mutants, {}, {"a.py": {11}})
    assert (chosen, called) == ([], 0)
