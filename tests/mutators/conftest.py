import textwrap

import pytest

from mutators.registry import operators
from mutators.sites import find_mutations


@pytest.fixture
def mutate():
    """The (original, replacement) texts a family makes in a snippet of code."""

    def run(source: str, family: str) -> list[tuple[str, str]]:
        sites = find_mutations(textwrap.dedent(source), operators([family]))
        return [(site.original.strip(), site.replacement.strip()) for site in sites]

    return run


@pytest.fixture
def mutants_of():
    """The mutated sources a family makes of a snippet (every one must compile)."""

    def run(source: str, family: str) -> list[str]:
        text = textwrap.dedent(source)
        return [site.apply(text) for site in find_mutations(text, operators([family]))]

    return run
