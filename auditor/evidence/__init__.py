"""Evidence read from a run: which check caught what, which generator wrote which
test, the accepted survivors and the trend."""
