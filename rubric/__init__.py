"""diarylab: rubric."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["behavior", "behavior_rubric", "entry_scores", "judging", "probe_prompt", "prompts"]
