"""Tiny models of the seed judges' serving shapes, built offline with random weights and the real
vocabularies the lab installs, for the vLLM tier.

Mistral-format: what `vllm serve mistralai/Mistral-Small-3.1-24B-Instruct-2503 --tokenizer-mode
mistral --config-format mistral --load-format mistral` reads — `params.json`,
`consolidated.safetensors` and `tekken.json` (the v7-marked Tekken vocabulary the lab's stand-in
is built from, model_access/seed_tokenizers.py) — and the same weights in Hugging Face form
(`config.json`, `model.safetensors` and the stand-in tokenizer) for the lab's local reader.

The Mistral checkpoint keeps each attention head's query and key rows in the order its rotary
embedding pairs them (interleaved); Hugging Face's form keeps them in halves. vLLM turns the
first into the second when it loads (vllm/model_executor/models/mistral.py,
maybe_remap_mistral's `permute`), so the consolidated file here holds the inverse of that
permutation of the Hugging Face weights: both servers and the local reader compute the same
model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent.parent / "docs" / "gpu-study.md"

# How strongly the digits and yes/no lead the output (see build_mistral_judge).
LEAN = 7.0
ROPE_THETA = 1_000_000_000.0  # Mistral Small 3.1's
# head_dim 64: vLLM's CPU attention refuses 16.
HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FFN = 64, 2, 2, 1, 64, 128
# What both seed shapes share: their config's sizes.
# rope_theta is read by the config, though no longer in its typed signature
ROPE: dict[str, Any] = {"rope_theta": ROPE_THETA}
SIZE: dict[str, Any] = {
    "hidden_size": HIDDEN,
    "intermediate_size": FFN,
    "num_hidden_layers": LAYERS,
    "num_attention_heads": HEADS,
    "num_key_value_heads": KV_HEADS,
    "head_dim": HEAD_DIM,
}
NAMES = {
    "model.embed_tokens.weight": "tok_embeddings.weight",
    "model.norm.weight": "norm.weight",
    "lm_head.weight": "output.weight",
}
LAYER_NAMES = {
    "self_attn.q_proj": "attention.wq",
    "self_attn.k_proj": "attention.wk",
    "self_attn.v_proj": "attention.wv",
    "self_attn.o_proj": "attention.wo",
    "mlp.gate_proj": "feed_forward.w1",
    "mlp.down_proj": "feed_forward.w2",
    "mlp.up_proj": "feed_forward.w3",
    "input_layernorm": "attention_norm",
    "post_attention_layernorm": "ffn_norm",
}


def to_interleaved(weight, heads: int):  # noqa: ANN001, ANN201 (torch is imported lazily)
    """Hugging Face's halves → Mistral's interleaved rotary order, the inverse of vLLM's
    `permute` (a head's rows [x0..x(d/2−1), y0..y(d/2−1)] become [x0, y0, x1, y1, ...])."""
    rows, cols = weight.shape
    return weight.view(heads, 2, rows // heads // 2, cols).transpose(1, 2).reshape(rows, cols)


def build_mistral_judge(out: Path, seed: int = 0) -> tuple[Path, Path]:
    """(Hugging Face folder, Mistral-format folder) of one tiny random Mistral judge."""
    import torch
    from safetensors.torch import save_file
    from transformers import MistralConfig, MistralForCausalLM

    from diarylab.model_access.seed_tokenizers import converted, tekken_v7

    tokenizer = converted("tekken-v7")
    config = MistralConfig(
        vocab_size=len(tokenizer),
        **SIZE,
        max_position_embeddings=4096,
        **ROPE,
        rms_norm_eps=1e-5,
        sliding_window=None,
        tie_word_embeddings=False,
        bos_token_id=1,
        eos_token_id=2,
    )
    torch.manual_seed(seed)
    model = MistralForCausalLM(config).float()
    digits = [tokenizer.convert_tokens_to_ids(t) for t in "0123456789"]
    answers = [tokenizer.convert_tokens_to_ids(t) for t in ("yes", "no", "Yes", "No")]
    with torch.no_grad():
        for p in model.parameters():  # spread enough that readings are not all uniform
            p.normal_(0.0, 0.1 if p.dim() > 1 else 0.05).add_(1.0 if p.dim() == 1 else 0.0)
        # A judge that answers: every embedding carries a shared first coordinate, and the
        # output rows of the digits and of yes/no read it, so numbers and answers get most of
        # the mass while attention and the MLP still move every reading (a wrong rotary order
        # or layer on either side would show).
        model.model.embed_tokens.weight[:, 0] = 3.0
        head = model.lm_head.weight
        head[:, 0] = 0.0
        head[digits, 0] = LEAN
        head[answers, 0] = LEAN - 1.5  # under the digits: a number prompt starts a number
    hf, native = out / "hf", out / "mistral"
    model.save_pretrained(hf)
    tokenizer.save_pretrained(hf)

    state = model.state_dict()
    weights = {}
    for name, tensor in state.items():
        if name in NAMES:
            weights[NAMES[name]] = tensor.contiguous()
            continue
        _, _, index, *rest = name.split(".")
        module = ".".join(rest[:-1])
        mapped = f"layers.{index}.{LAYER_NAMES[module]}.{rest[-1]}"
        if module == "self_attn.q_proj":
            tensor = to_interleaved(tensor, HEADS)
        elif module == "self_attn.k_proj":
            tensor = to_interleaved(tensor, KV_HEADS)
        weights[mapped] = tensor.contiguous()
    native.mkdir(parents=True, exist_ok=True)
    save_file(weights, native / "consolidated.safetensors")
    params = {
        "dim": HIDDEN,
        "n_layers": LAYERS,
        "head_dim": HEAD_DIM,
        "hidden_dim": FFN,
        "n_heads": HEADS,
        "n_kv_heads": KV_HEADS,
        "rope_theta": ROPE_THETA,
        "norm_eps": 1e-5,
        "vocab_size": config.vocab_size,
        "max_position_embeddings": 4096,
    }
    (native / "params.json").write_text(json.dumps(params, indent=1))
    tekken_v7()  # writes the v7-marked vocabulary the stand-in is built from
    from diarylab.model_access.seed_tokenizers import cache_dir

    (native / "tekken.json").write_bytes((cache_dir() / "tekken-v7" / "tekken.json").read_bytes())
    return hf, native


def build_gpt_oss_judge(out: Path, seed: int = 0) -> Path:
    """A tiny random GptOssForCausalLM (the o200k-harmony stand-in tokenizer, unquantized
    weights) in Hugging Face form, as vLLM and the lab's local reader both load it."""
    import torch
    from transformers import GptOssConfig, GptOssForCausalLM

    from diarylab.model_access.seed_tokenizers import converted

    tokenizer = converted("o200k-harmony")
    config = GptOssConfig(
        vocab_size=len(tokenizer),
        **SIZE,
        num_local_experts=4,
        num_experts_per_tok=2,
        sliding_window=128,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = GptOssForCausalLM(config).float()
    digits = [tokenizer.convert_tokens_to_ids(str(n)) for n in range(101)]
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.normal_(0.0, 0.1 if p.dim() > 1 else 0.05).add_(1.0 if "norm" in name else 0.0)
        model.model.embed_tokens.weight[:, 0] = 3.0
        head = model.lm_head.weight
        head[:, 0] = 0.0
        head[digits, 0] = LEAN
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def docs_flags(model: str) -> tuple[str, ...]:
    """The flags docs/gpu-study.md serves `model` with that set its formats (tokenizer, config,
    load), in the page's order: the vLLM tier serves each shape with exactly these."""
    page = DOCS.read_text(encoding="utf-8")
    line = page[page.index(f"serve {model}") :].split("\n\n")[0]
    words = line.replace("\\\n", " ").split()
    flags: list[str] = []
    for i, word in enumerate(words):
        if word in ("--tokenizer-mode", "--config-format", "--load-format"):
            flags += [word, words[i + 1]]
    return tuple(flags)
