"""diarylab: the foundation every package stands on — the lab error type and data-file loading."""
