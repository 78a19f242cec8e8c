"""Static analysis of test files for the smells in the catalog (SMELLS.md)."""
