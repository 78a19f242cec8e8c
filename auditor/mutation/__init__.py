"""The mutation engine: plan mutants, run them in forked children, score the results."""
