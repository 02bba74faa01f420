"""A run folder's results as typed pandas frames (`open_run`) and the columns of each frame, the
one reader of results outside the store."""
