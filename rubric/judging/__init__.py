"""Reading a judge by probability: the expected-number algorithm, number tries and bounds, the
local and served readers, yes/no readings, and the judge specs that build them."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = [
    "building",
    "expected",
    "judge_base",
    "judge_render",
    "judges",
    "named_judge",
    "number_reading",
    "number_trie",
    "served_exact",
    "served_judge",
    "vocab",
    "yes_no",
]
