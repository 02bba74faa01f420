"""diarylab: the foundation every package stands on — the lab error type and data-file loading."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["atomic", "datafiles", "error_words", "errors", "toml_writing"]
