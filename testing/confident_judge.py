"""A confident test judge: a tiny random Llama over one of testing/judge_tokenizers.py's tokenizers
whose next token is pushed by the token before it (a bigram bias on the output), so that, like a
real judge after "Score: ", it writes one number with most of its mass — 72, then 62 — and then
ends it (a newline or the end of the turn). tiny_judge's position-free bias cannot do that: it
keeps wanting more digits after a number, so its readings spread over all 101 numbers. The
random model underneath still moves every probability a little, and every token keeps some
mass, so nothing is read from a shortcut."""

from __future__ import annotations

import math
from typing import Any

import torch

from diarylab.model_access.local import LocalModel
from diarylab.testing.tiny_models import build_tiny_llama

# The share of the next-token mass each context gives its favoured tokens.
START = {"72": 0.93, "62": 0.065}  # after anything but a number piece
AFTER_FIRST = 0.995  # after a first digit, the second one (digit tokenizers)
AFTER_NUMBER = 0.995  # after a whole number, the enders
LOGIT_SCALE = 0.4


def bigram_shares(tokenizer: Any) -> tuple[dict[int, float], dict[int, dict[int, float]]]:
    """The shares of the next-token mass the judge gives its favoured tokens: after most tokens
    (the first dict), and after the few that begin or end a number (by previous token id)."""
    vocab = tokenizer.get_vocab()
    enders = [vocab[p] for p in ("Ċ", "<0x0A>") if p in vocab]
    enders += [i for i in {tokenizer.eos_token_id, vocab.get("<|end|>")} if i is not None]

    def ids(text: str) -> list[int]:
        return [vocab[text]] if text in vocab else [vocab[c] for c in text]

    after: dict[int, dict[int, float]] = {}
    end = {i: AFTER_NUMBER / len(enders) for i in enders}
    whole = {t for t in START if t in vocab}
    for text in START:
        pieces = ids(text)
        if text in whole:
            after[pieces[0]] = end
        else:  # digit by digit: after the first digit its second, after that the enders
            after[pieces[0]] = {pieces[1]: AFTER_FIRST}
            after[pieces[1]] = end
    return {ids(t)[0]: s for t, s in START.items()}, after


def share_bias(group: dict[int, float], size: int) -> dict[int, float]:
    """The logit bias giving each id of `group` about its share of the mass, the random logits
    of a `size`-token vocabulary taken as alike."""
    rest = 1.0 - sum(group.values())
    return {i: math.log(share / rest * (size - len(group))) for i, share in group.items()}


def bigram_table(tokenizer: Any, size: int) -> torch.Tensor:
    """The bias on the next token's logits by the token before it: row = previous token id."""
    first, after = bigram_shares(tokenizer)

    def row(group: dict[int, float]) -> torch.Tensor:
        out = torch.zeros(size)
        for i, bias in share_bias(group, size).items():
            out[i] = bias
        return out

    table = torch.stack([row(first)] * size)
    for previous, group in after.items():
        table[previous] = row(group)
    return table


def confident_judge(tokenizer: Any, *, seed: int = 0) -> LocalModel:
    model = LocalModel(
        build_tiny_llama(tokenizer, seed=seed), tokenizer, spec=f"confident-{len(tokenizer)}"
    )
    with torch.no_grad():
        model.model.lm_head.weight.mul_(LOGIT_SCALE)
    table = bigram_table(tokenizer, int(model.model.config.vocab_size))
    seen: dict[str, torch.Tensor] = {}

    def remember(module: Any, args: Any, kwargs: Any) -> None:
        given = kwargs.get("input_ids", args[0] if args else None)
        seen["ids"] = given

    def push(module: Any, inputs: Any, output: torch.Tensor) -> torch.Tensor:
        last = seen["ids"][:, -output.shape[1] :]
        return output + table.to(output.device)[last].to(output.dtype)

    model.model.register_forward_pre_hook(remember, with_kwargs=True)
    model.model.lm_head.register_forward_hook(push)
    return model
