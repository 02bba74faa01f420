"""Profiles and their vectors: resolving the profiles a design names (files, inline rules, the
unsteered twin), making an inline profile's vector and strength inside the run folder, and the
vector-making steps `diarylab steer` shares."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["making", "refs", "vectors"]
