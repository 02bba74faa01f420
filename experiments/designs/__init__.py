"""The shipped designs (TOML) and the door that opens a design file, or a run folder's locked copy,
by its kind; the design reference is written from the kinds' schemas here."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["opening", "reference"]
