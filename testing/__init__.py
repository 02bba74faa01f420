"""What the tests and the benches build the lab's world from, in one place: tiny random models and
tokenizers of every shape the lab reads, loopback stand-ins for API providers and servers (each
built from the real server's code, cited in its module), a real vLLM server's launcher, designs,
stores, synthetic studies and the helpers that kill and resume a run. The benches import it
too, so it lives in the lab (`diarylab.testing`), not in tests/; nothing else in the lab imports
it."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = [
    "bad_inputs",
    "benchmark_runs",
    "confident_judge",
    "fake_judge_engine",
    "fake_judge_llamacpp",
    "fake_judge_render",
    "fake_judge_server",
    "fake_judge_vllm",
    "fake_openai",
    "friends_fixtures",
    "friends_synthetic",
    "html_pages",
    "judge_helpers",
    "judge_tokenizers",
    "kill_resume",
    "lab_fixtures",
    "rating_fixtures",
    "seed_shapes",
    "served_tokens",
    "steering_reference",
    "stores",
    "synthetic_diary",
    "thinking_model",
    "tiny_models",
    "toy_kind",
    "vllm_server",
]
