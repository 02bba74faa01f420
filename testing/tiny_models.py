"""The tiny random models the tests and benches build in code: a Llama of a given vocabulary,
seeded, and the map that splits it over two places."""

from __future__ import annotations

import torch

TINY_SPEC = "tiny-random-llama"


def build_tiny_llama(tokenizer, *, seed: int = 0, layers: int = 2, hidden: int = 64):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        # A wider init than the default 0.02 makes next-token distributions peaked enough that
        # greedy decoding has no near-ties, so batch-vs-single comparisons test logic, not noise.
        initializer_range=0.3,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval()


# The tiny model split over two places (tests/model_access/test_placement.py): layer 1's weights
# stay in the checkpoint file and accelerate's hooks bring them in for each forward, so its
# parameters sit on "meta" while it runs on the CPU: the cross-device path a map across GPUs takes.
SPLIT_MAP = {
    "model.embed_tokens": "cpu",
    "model.layers.0": "cpu",
    "model.layers.1": "disk",
    "model.norm": "cpu",
    "model.rotary_emb": "cpu",
    "lm_head": "cpu",
}
