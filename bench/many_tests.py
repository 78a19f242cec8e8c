"""How audit grows with the size of a generated suite: the same small package, audited
with 500, 1,000, 2,000 and 5,000 generated tests (default settings, 2 workers). Prints
wall time, peak memory of the whole process tree and the JSON report's size per size.

    python bench/many_tests.py [--sizes 500,1000,2000,5000] [--workdir /tmp/audit-many]

The tests are what a fast model writes in bulk: one call each with a distinct input and
an exact check, a hundred per file."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from compare_mutmut import run_measured

PACKAGE = """\
def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


def sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0


def digits(n):
    count = 1
    while n >= 10:
        n //= 10
        count += 1
    return count


def fizz(n):
    if n % 15 == 0:
        return "fizzbuzz"
    if n % 3 == 0:
        return "fizz"
    if n % 5 == 0:
        return "buzz"
    return str(n)
"""


def _expected(function: str, value: int) -> str:
    """The expected result, written from what each function is for."""
    if function == "clamp":
        return repr(min(max(value, -50), 50))
    if function == "sign":
        return repr((value > 0) - (value < 0))
    if function == "digits":
        return repr(len(str(abs(value))))
    words = {0: "fizzbuzz", 3: "fizz", 5: "buzz", 6: "fizz", 9: "fizz", 10: "buzz", 12: "fizz"}
    return repr(words.get(value % 15, str(value)))


def _test(number: int) -> str:
    function = ("clamp", "sign", "digits", "fizz")[number % 4]
    value = number * 7 % 211 - (105 if function in ("clamp", "sign") else 0)
    value = abs(value) if function in ("digits", "fizz") else value
    call = f"clamp({value}, -50, 50)" if function == "clamp" else f"{function}({value})"
    return f"def test_{function}_{number}():\n    assert {call} == {_expected(function, value)}\n"


def make_project(root: Path, tests: int) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "shapes"\nversion = "1"\n')
    (root / "shapes.py").write_text(PACKAGE)
    for first in range(0, tests, 100):
        body = "from shapes import clamp, digits, fizz, sign\n\n\n" + "\n\n".join(
            _test(number) for number in range(first, min(first + 100, tests))
        )
        (root / "tests" / f"test_shapes_{first // 100:03d}.py").write_text(body)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,1000,2000,5000")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/audit-many"))
    args = parser.parse_args()
    print("tests   wall s   peak RSS MB   peak PSS MB   report KB")
    for size in (int(part) for part in args.sizes.split(",")):
        root = make_project(args.workdir / f"shapes-{size}", size)
        command = [sys.executable, "-m", "auditor", "tests", "-q", "--jobs", "2"]
        wall, rss, pss = run_measured([*command, "--json", "report.json"], root)
        size_kb = (root / "report.json").stat().st_size / 1024
        print(f"{size:5d}   {wall:6.1f}   {rss:11.0f}   {pss:11.0f}   {size_kb:9.0f}")


if __name__ == "__main__":
    main()
