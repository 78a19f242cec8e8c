"""The baseline stage: run the suite once, on the original code, under coverage."""
