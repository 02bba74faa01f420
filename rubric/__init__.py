"""diarylab: rubric."""
