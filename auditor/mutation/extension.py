"""An earlier verdict of a mutant carried over when only its tests, or code they run,
changed.

A mutant's cache key covers its tests and the function bodies they ran, so a test added
anywhere its code runs (a new test file importing a module covers every import-time
mutant of it), or an edit of a function some of its tests call, made each such mutant
run all its tests again. Its code, its Python subprocesses' tests and the
settings being the same, the earlier verdict still says what the tests it had do:

- it survived them: only the tests added or changed since run; it survives those too,
  or the first that fails kills it, as in a run of them all;
- a test killed it, and that test is unchanged: only the added or changed tests that
  now run before it; if none fails, the same test kills it first, as before.

A test that runs a function body that is another text now (`ran_code`: an edited
callee can change what it sees) counts as changed. Tests that were removed change
neither. This holds as the verdict cache itself does:
a test's outcome on a mutant does not depend on which other tests ran before it.
Every test's kills are asked for (`--all-killers`), a timeout, an error, a mutant whose
Python subprocesses get it, and the copy path run everything again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from auditor.mutation import ran_code
from auditor.mutation.cache import Earlier, ResultCache
from auditor.mutation.plan import PlannedMutant, TestSet, TimeoutPolicy
from auditor.mutation.protocol import JobResult
from auditor.mutation.ran_code import RanCode
from auditor.mutation.test_ids import case_function


@dataclass(frozen=True)
class Carried:
    """An earlier verdict that holds for the tests it had, and the tests to run still
    (none: it stands as it is)."""

    earlier: JobResult
    tests: list[str]


def carried(
    cache: ResultCache, mutant: PlannedMutant, local: Callable[[str], str], code: RanCode
) -> Carried | None:
    """What an earlier verdict of the mutant under other tests or other code around it
    leaves to run; `local` names a test as this session does."""
    if not mutant.stem_key or mutant.tests_run is None or mutant.subprocess_reach:
        return None
    found = cache.get_earlier(mutant.stem_key)
    if found is None:
        return None
    earlier = found.result
    if earlier.on_copy or earlier.status not in ("Killed", "Survived"):
        return None
    affected = _affected(found, mutant.tests_run, code)
    candidates = mutant.tests
    if earlier.status == "Killed":
        killer = local(earlier.killed_by[0]) if earlier.killed_by else ""
        if killer not in mutant.tests or affected(killer):
            return None
        candidates = mutant.tests[: mutant.tests.index(killer)]
        earlier = dataclasses.replace(earlier, killed_by=[killer], kills=_renamed(earlier, local))
    tests = [test for test in candidates if affected(test)]
    if len(tests) == len(mutant.tests):
        return None  # every test changed: nothing is carried over
    return Carried(earlier, tests)


def _affected(found: Earlier, now: TestSet, code: RanCode) -> Callable[[str], bool]:
    """Whether a test of the mutant may do otherwise than when the earlier verdict was
    given: its function was added or changed since, or it runs a function body that is
    another text now."""
    before = set(found.cases)
    added = {function for function, *rest in now.cases if (function, *rest) not in before}
    touched = code.running(ran_code.edited(found.code, now.code))
    return lambda test: case_function(test) in added or test in touched


def _renamed(result: JobResult, local: Callable[[str], str]) -> list[tuple[str, str, int]]:
    return [(local(test), kind, line) for test, kind, line in result.kills]


def subset(
    mutant: PlannedMutant, tests: list[str], durations: Mapping[str, float], policy: TimeoutPolicy
) -> PlannedMutant:
    """The mutant with only these tests to run, and the time they are allowed."""
    timeout = sum(durations.get(test, 0.0) for test in tests) * policy.factor + policy.constant
    return dataclasses.replace(mutant, tests=tests, subprocess_tests=[], timeout=timeout)


def merged(earlier: JobResult, fresh: JobResult) -> JobResult:
    """The verdict over all the tests: the fresh run's when it did not survive (a test
    run before the earlier killer failed, or hung), else the earlier one, with this
    run's times."""
    if fresh.status != "Survived" or earlier.status == "Survived":
        return fresh
    return dataclasses.replace(
        earlier,
        duration=fresh.duration,
        tests_seconds=fresh.tests_seconds,
        fork_seconds=fresh.fork_seconds,
        ran=fresh.ran,
    )


def remember(cache: ResultCache, mutant: PlannedMutant, result: JobResult) -> None:
    """The verdict, for a later run of the mutant under other tests."""
    if mutant.stem_key and mutant.tests_run is not None:
        tests = mutant.tests_run
        cache.put_earlier(mutant.stem_key, tests.contents, Earlier(tests.cases, tests.code, result))
