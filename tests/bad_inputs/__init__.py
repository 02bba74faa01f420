"""The bad-input corpus, one file per kind of input (testing/bad_inputs.py says the rule)."""
