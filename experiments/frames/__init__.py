"""A run folder's results as typed pandas frames (`open_run`) and the columns of each frame, the
one reader of results outside the store."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["reader"]
