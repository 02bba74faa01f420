"""diarylab: model access — the two doors to models: the local runtime and the served client."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = [
    "completions",
    "embedded",
    "hub",
    "loaders",
    "loading",
    "local",
    "placement",
    "prompt_batches",
    "served",
    "settings",
    "shared_models",
    "token_prompts",
    "tokenizer_identity",
    "vllm_engine",
]
