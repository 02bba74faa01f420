"""diarylab: steering."""
