"""Smell rules, grouped by what they look at. Each rule is a function
`(test, context) -> Iterable[Finding]`; `ALL_RULES` lists them for the analyzer."""

from __future__ import annotations

from auditor.smells.rules import generated, mocking, oracle, raises, structure

TEST_RULES = (
    *oracle.RULES,
    *raises.RULES,
    *mocking.RULES,
    *structure.RULES,
    *generated.RULES,
)
MODULE_RULES = (*structure.MODULE_RULES, *generated.MODULE_RULES)
