"""The same memory addresses in every run, for the processes audit starts.

A set's order follows its members' hashes, and before Python 3.12 `None`'s hash is its
address; an object without `__hash__` hashes by address on every version. With the
kernel's address randomization on, a suite that parametrizes from such a set, or
iterates one, orders its tests differently in each process: the baseline then gives a
memoized function's body to a different first caller in each run, and two cold audits
disagree. Asking the kernel for a fixed layout (`personality(ADDR_NO_RANDOMIZE)`, what
`setarch -R` does) before any child starts makes the runs agree. The flag is inherited
and takes effect at exec, so audit's own process keeps its layout; a kernel or container
that refuses it leaves the children as they were."""

from __future__ import annotations

import ctypes

_ADDR_NO_RANDOMIZE = 0x0040000
_QUERY = 0xFFFFFFFF


def fix_child_address_layout() -> bool:
    """Whether the programs this process starts from now on get fixed addresses."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        current = libc.personality(_QUERY)
        return current != -1 and libc.personality(current | _ADDR_NO_RANDOMIZE) != -1
    except (OSError, AttributeError):
        return False
