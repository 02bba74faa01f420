"""diarylab: steering."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["apply", "calibrate", "extract", "projection", "settings", "vectors", "write_door"]
