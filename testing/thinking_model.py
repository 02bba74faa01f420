"""A tiny thinking chatbot for the vLLM tier: a Qwen3ForCausalLM with random weights, the
embedded default's vocabulary plus the <think> and </think> tokens, and the lab's test chat
template (testing/thinking_chat_template.jinja), which opens a <think> block unless
enable_thinking is false, as Qwen3's own template does.

A random model would almost never close its thinking, so the weights are set for it to: the
attention and MLP outputs are zero (the residual stream is the token's embedding), every
embedding carries the same large first coordinate, and </think>'s row of the output layer reads
only that coordinate. At temperature 0.7 about one token in four is </think>, so a short reply
sometimes thinks and then answers, and sometimes is cut inside its thinking."""

from __future__ import annotations

from pathlib import Path

OPEN, CLOSE = "<think>", "</think>"
TEMPLATE = Path(__file__).parent / "thinking_chat_template.jinja"
# </think>'s logit ≈ CLOSE_WEIGHT × the normalised first coordinate (≈ √hidden): about e^10
# over a ~49k vocabulary at temperature 0.7, i.e. P(</think>) ≈ 0.25 a token.
CLOSE_WEIGHT = 0.88


def build_thinking_model(tokenizer_folder: Path, out: Path) -> Path:
    """Write the model folder (config, weights, tokenizer, template) to `out`."""
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder)
    tokenizer.add_tokens([OPEN, CLOSE])
    tokenizer.chat_template = TEMPLATE.read_text(encoding="utf-8")
    hidden = 64
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,  # vLLM's CPU attention refuses head_dim 16 ("Unsupported CPU attention")
        max_position_embeddings=2048,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
    )
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(config).float()
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        embed = model.model.embed_tokens.weight
        embed.normal_(0.0, 0.02)
        embed[:, 0] = 1.0
        head = model.lm_head.weight
        head.normal_(0.0, 0.02)
        head[:, 0] = 0.0
        close = tokenizer.convert_tokens_to_ids(CLOSE)
        head[close] = 0.0
        head[close, 0] = CLOSE_WEIGHT
        # Nor does it end its turn early: the answer after </think> has a few tokens.
        head[config.eos_token_id] = 0.0
    model.config.architectures = ["Qwen3ForCausalLM"]
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
