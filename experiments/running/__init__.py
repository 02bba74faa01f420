"""Running a design: the checks before a run, the runner that makes the profiles and drives the
engine, and the pilot that measures a design on a few cells first."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["pilot", "preflight", "runner"]
