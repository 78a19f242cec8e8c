"""A property's getter and setter share one name: each mutant swaps the function it is
in, never the other."""

import pytest

from tests.conftest import one_module_mutants

ACCOUNT = (
    "class Account:\n"
    "    def __init__(self):\n"
    "        self._balance = 0\n"
    "\n"
    "    @property\n"
    "    def balance(self):\n"
    "        return self._balance // 2\n"
    "\n"
    "    @balance.setter\n"
    "    def balance(self, value):\n"
    "        self._balance = value * 2\n"
)


@pytest.mark.slow
def test_a_setter_s_mutants_run_in_the_setter(tmp_path):
    """The test reads and writes the property and checks nothing: every mutant of the
    setter survives (put in the getter's place, it would break every read). The getter
    has a mutant too, and comes first."""
    tests = (
        "from account import Account\n\n\n"
        "def test_writes_and_reads():\n"
        "    account = Account()\n"
        "    account.balance = 3\n"
        "    account.balance\n"
    )
    mutants = one_module_mutants(tmp_path, "account", ACCOUNT, tests, "arithmetic")
    in_setter = [m for m in mutants if m["line"] == 11]
    assert in_setter
    assert {m["status"] for m in in_setter} == {"Survived"}
