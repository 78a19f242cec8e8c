"""Module-level data tables: which entries keep their mutants."""

from __future__ import annotations

from auditor.mutation.data_tables import MIN_ENTRIES, SAMPLED_ENTRIES, find_data_tables
from mutators.registry import operators
from mutators.sites import find_mutations


def _entries_kept(source: str) -> list[str]:
    (table,) = find_data_tables(source)
    return [
        source[start:end]
        for index, (start, end) in enumerate(table.entries)
        if index in table.sampled
    ]


def test_a_long_dict_of_literals_keeps_a_spread_sample_of_its_entries():
    rows = "".join(f'    "k{n}": {n},\n' for n in range(30))
    kept = _entries_kept(f"RATES = {{\n{rows}}}\n")
    assert len(kept) == SAMPLED_ENTRIES
    assert kept[0] == '"k0": 0' and kept[-1] == '"k29": 29'


def test_a_list_of_constructor_calls_with_literal_arguments_is_a_table():
    rows = "".join(f'    Currency("C{n}", {n}, symbol="€"),\n' for n in range(25))
    kept = _entries_kept(f"CURRENCIES = [\n{rows}]\n")
    assert kept[0] == 'Currency("C0", 0, symbol="€")'


def test_a_run_of_registration_calls_is_a_table():
    source = "".join(f"register('unit{n}', {n})\n" for n in range(MIN_ENTRIES))
    assert len(find_data_tables(source)[0].entries) == MIN_ENTRIES


def test_a_short_table_is_logic_like_any_other_code():
    rows = "".join(f"    {n},\n" for n in range(MIN_ENTRIES - 1))
    assert find_data_tables(f"SMALL = [\n{rows}]\n") == []


def test_a_table_with_a_computed_entry_is_not_data():
    rows = "".join(f"    {n},\n" for n in range(30))
    assert find_data_tables(f"MIXED = [\n{rows}    compute(x + 1),\n]\n") == []


def test_a_mutation_in_a_left_out_entry_is_skipped_and_one_over_the_whole_table_is_not():
    rows = "".join(f"    {n},\n" for n in range(30))
    source = f"TABLE = [\n{rows}]\n"
    (table,) = find_data_tables(source)
    second_start, second_end = table.entries[1]
    assert table.skips(second_start, second_end)
    assert not table.skips(*table.entries[0])
    assert not table.skips(source.index("["), len(source) - 1)


def test_entries_after_non_ascii_text_are_found_by_character_offset():
    rows = "".join(f'    "€{n}": "ß{n}",\n' for n in range(30))
    source = f"SYMBOLS = {{\n{rows}}}\n"
    kept = _entries_kept(source)
    assert kept[-1] == '"€29": "ß29"'


def test_a_dict_call_of_keywords_is_a_table_of_its_keywords():
    rows = "".join(f"    k{n}=[lambda x, key=None: None],\n" for n in range(25))
    kept = _entries_kept(f"INFO['builtins'] = dict(\n{rows})\n")
    assert kept[0] == "k0=[lambda x, key=None: None]"


def test_an_update_call_of_keywords_is_a_table_of_its_keywords():
    rows = "".join(f"    k{n}=({n}, 'unit'),\n" for n in range(25))
    kept = _entries_kept(f"INFO.update(\n{rows})\n")
    assert kept[-1] == "k24=(24, 'unit')"


def test_a_lambda_that_computes_is_not_data():
    rows = "".join(f"    k{n}=lambda x: x + {n},\n" for n in range(25))
    assert find_data_tables(f"OPS = dict(\n{rows})\n") == []


def test_every_mutant_of_a_left_out_entry_is_skipped_a_dropped_argument_too():
    rows = "".join(f"    k{n}=[lambda x, key={n}: None],\n" for n in range(25))
    source = f"INFO['builtins'] = dict(\n{rows})\n"
    (table,) = find_data_tables(source)
    kept = [s for s in find_mutations(source, operators()) if not table.skips(s.start, s.end)]
    dropped = [s.description for s in kept if "dropped" in s.description]
    assert len(dropped) == SAMPLED_ENTRIES
    assert {s.line for s in kept} <= {2 + index for index in table.sampled} | {1}
