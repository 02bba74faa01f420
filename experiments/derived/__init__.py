"""Derived runs: a design that reuses a finished run's texts and judges, scores or analyses them
anew — what it reuses, and every check that the reuse is sound."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["checks"]
