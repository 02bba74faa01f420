"""diarylab: experiments."""
