"""Mutation operators: one module per family, each a set of small libcst rewrites.

`mutators.sites.find_mutations` walks a source file and asks every enabled operator for
replacements; `mutators.registry` names the families. Nothing here runs code.
"""
