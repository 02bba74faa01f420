"""The bad-input corpus, one file per kind of input (tests/bad_inputs/lab.py says the rule)."""
