"""diarylab: model access — the two doors to models: the local runtime and the served client."""
