"""Every decoding setting of a local generate, written out.

transformers fills each generation setting a call leaves unset (None) first from the model's
own generation_config, then from its global defaults (transformers/generation/utils.py,
_prepare_generation_config). The lab sets max_new_tokens, temperature and top_p itself
(GenerationSettings); every other setting that could change a token is pinned here to the value
that leaves the logits alone, so nothing a model ships (Qwen2.5's repetition_penalty 1.05, a
no_repeat_ngram_size, a min_new_tokens) acts inside the lab's generate. Settings whose neutral
value is "absent" (None) cannot be pinned in a GenerationConfig — None means "fill me in" — so
the runtime also replaces the model's generation_config with a bare one
(LocalModel._neutralise_generation_config). The whole table enters local call keys, so changing
a pin changes every key it affects."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from diarylab.model_access.settings import GenerationSettings

# Value that makes each logits processor a no-op (or not built at all): see
# transformers/generation/utils.py, _get_logits_processor. Sampling is the lab's own per-row
# processor (model_access/sampling.py), so transformers decodes greedily over its output.
PINNED: MappingProxyType[str, Any] = MappingProxyType(
    {
        "do_sample": False,
        "num_beams": 1,
        "num_return_sequences": 1,
        "min_new_tokens": 0,
        "repetition_penalty": 1.0,
        "encoder_repetition_penalty": 1.0,
        "no_repeat_ngram_size": 0,
        "encoder_no_repeat_ngram_size": 0,
        "length_penalty": 1.0,
        "guidance_scale": 1.0,
        "renormalize_logits": False,
        "remove_invalid_values": False,
    }
)

# Settings left unset (None) by every call and by the bare model generation_config, so they stay
# off (or, for min_length, fall to transformers' global default 0: pinning it beside
# min_new_tokens makes transformers warn that both are set).
ABSENT: tuple[str, ...] = (
    "bad_words_ids",
    "begin_suppress_tokens",
    "exponential_decay_length_penalty",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "max_time",
    "min_length",
    "sequence_bias",
    "stop_strings",
    "suppress_tokens",
    "watermarking_config",
)


def local_generation_key(settings: GenerationSettings, sampler: str) -> dict[str, Any]:
    """What a local generation's cache key holds about decoding: the lab's settings, how
    sampling is done (model_access.sampling.sampler_name), and every pinned and absent
    setting."""
    return {
        **settings.key(),
        "sampler": sampler,
        "pinned": dict(PINNED),
        "absent": list(ABSENT),
    }


def config_fields(settings: GenerationSettings) -> dict[str, Any]:
    """GenerationConfig fields for one call (special-token ids are added by the runtime)."""
    return {**PINNED, "max_new_tokens": settings.max_new_tokens}
