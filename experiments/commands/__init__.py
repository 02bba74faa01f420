"""Subcommands of `diarylab`, one module per area, each with register(subparsers)."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = []
