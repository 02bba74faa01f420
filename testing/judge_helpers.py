"""Helpers for the judge tests: brute-force scoring of 0..100 by full forward passes (the reference
the trie/KV-cache reader is checked against), a tokenizer that writes 0..100 as single tokens
(like Llama-3 and gpt-oss) with a tiny random Llama sized to it, and a logit-biased model."""

from __future__ import annotations

import torch

from diarylab.model_access.local import LocalModel
from diarylab.testing.tiny_models import build_tiny_llama


def digit_start_ids(tokenizer) -> list[int]:
    """Tokens whose vocabulary string starts with an ASCII digit, and SentencePiece's byte-fallback
    tokens for the digit bytes 0x30..0x39 ("<0x35>" writes "5"), computed independently of
    rubric/ so the brute force does not share code with the thing it checks."""
    special = set(tokenizer.all_special_ids)
    raw = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    byte_digits = {f"<0x{0x30 + d:02X}>" for d in range(10)}
    return [
        i
        for i, t in enumerate(raw)
        if i not in special and t and (t[0] in "0123456789" or t in byte_digits)
    ]


def mark_ids(tokenizer) -> tuple[list[int], list[int]]:
    """Bare decimal marks ("." ",", or their byte-fallback forms) and mark-then-digit tokens
    (".5"), from the raw vocabulary, independently of rubric/."""
    special = set(tokenizer.all_special_ids)
    raw = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    bare = {".", ",", "<0x2E>", "<0x2C>"}
    points = [i for i, t in enumerate(raw) if i not in special and t in bare]
    decimals = [
        i
        for i, t in enumerate(raw)
        if i not in special and len(t) > 1 and t[0] in ".," and t[1] in "0123456789"
    ]
    return points, decimals


def brute_force_distribution(model: LocalModel, prompt_text: str) -> list[float]:
    """P(n) for n in 0..100: each number's whole sequence (prompt + number) goes through a plain
    forward pass with no KV cache (batched, right-padded: causal attention keeps pads from touching
    real positions), then float64 products and sums. Per trie-v2 (rubric/judging/expected.py),
    a number does not end where it turns decimal: mark-then-digit tokens, and a bare mark times
    the chance that a digit follows it (read by another plain pass over prompt + number + mark) —
    or the whole mark where it is under 1e-4 likely."""
    prompt = model.encode(prompt_text)
    cont = digit_start_ids(model.tokenizer)
    points, decimals = mark_ids(model.tokenizer)
    seqs = []
    for n in range(101):
        full = model.encode(prompt_text + str(n))
        assert full[: len(prompt)] == prompt
        seqs.append(full)
    width = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), width), dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, : len(seq)] = torch.tensor(seq)
        mask[row, : len(seq)] = 1
    parts = []  # per number: P(its tokens), P(it ends) before marks, [(mark, P(mark))]
    for start in range(0, len(seqs), 32):
        with torch.no_grad():
            hidden = model.model.model(
                ids[start : start + 32], attention_mask=mask[start : start + 32], use_cache=False
            ).last_hidden_state
            for row, seq in enumerate(seqs[start : start + 32]):
                # Only the positions after the prompt matter: the output head runs on those alone.
                tail = model.model.lm_head(hidden[row, len(prompt) - 1 : len(seq)]).double()
                lp = torch.log_softmax(tail, dim=-1)
                p = 1.0
                for i, t in enumerate(seq[len(prompt) :]):
                    p *= float(lp[i, t].exp())
                p_end = 1.0 - float(lp[-1, cont].exp().sum()) - float(lp[-1, decimals].exp().sum())
                marks = [(mark, float(lp[-1, mark].exp())) for mark in points]
                parts.append((seq, p, p_end, marks))
    # The likely marks' follow-ups: each number + mark through a plain forward pass too, all in
    # one right-padded batch (a row's last real position reads what follows its mark).
    follow_ups = [seq + [mark] for seq, _, _, marks in parts for mark, pm in marks if pm >= 1e-4]
    after = dict(zip(map(tuple, follow_ups), _digits_after(model, follow_ups, cont), strict=True))
    out = []
    for seq, p, p_end, marks in parts:
        for mark, p_mark in marks:
            p_end -= p_mark * (after[tuple(seq + [mark])] if p_mark >= 1e-4 else 1.0)
        out.append(p * max(p_end, 0.0))
    return out


def _digits_after(model: LocalModel, seqs: list[list[int]], cont: list[int]) -> list[float]:
    """P(a digit comes next) after each whole sequence: plain forward passes, no cache."""
    out: list[float] = []
    for start in range(0, len(seqs), 32):
        chunk = seqs[start : start + 32]
        width = max(len(q) for q in chunk)
        ids = torch.zeros((len(chunk), width), dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for row, q in enumerate(chunk):
            ids[row, : len(q)] = torch.tensor(q)
            mask[row, : len(q)] = 1
        with torch.no_grad():
            hidden = model.model.model(ids, attention_mask=mask, use_cache=False).last_hidden_state
            for row, q in enumerate(chunk):
                logits = model.model.lm_head(hidden[row, len(q) - 1]).double()
                out.append(float(torch.log_softmax(logits, dim=-1)[cont].exp().sum()))
    return out


def single_token_number_tokenizer():
    """A word-level tokenizer whose vocabulary holds "0".."100" as single tokens (plus a few
    longer digit tokens, so 'the number goes on' is possible) and a handful of words."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = [
        "<unk>",
        "<pad>",
        "<eos>",
        "<bos>",
        "Score",
        "Answer",
        ":",
        " ",
        ".",
        "\n",
        "/",
        "Yes",
        "No",
        "yes",
        "no",
        "Rate",
        "the",
        "entry",
        "from",
        "to",
        "diary",
        "today",
        "I",
        "felt",
        "alone",
        "250",
        "999",
        "1000",
        "5th",
        "007",
    ]
    vocab = {w: i for i, w in enumerate(words)}
    for n in range(101):
        vocab.setdefault(str(n), len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(
        Regex(r"[0-9]+|[A-Za-z]+|\s|[^\sA-Za-z0-9]"), behavior="isolated"
    )
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        pad_token="<pad>",
        eos_token="<eos>",
        bos_token="<bos>",
    )


def single_token_model(seed: int = 0) -> LocalModel:
    tokenizer = single_token_number_tokenizer()
    return LocalModel(build_tiny_llama(tokenizer, seed=seed), tokenizer, spec="tiny-single-token")


def bias_logits(model: LocalModel, bias: dict[int, float]):
    """Add a fixed bias to some tokens' logits (a real forward pass, then a shift), so a random
    model puts most of its mass where a judge would: on digits and on what ends a number."""
    vector = torch.zeros(model.model.config.vocab_size)
    for i, b in bias.items():
        vector[i] = b

    def hook(module, inputs, output):
        return output + vector.to(output.dtype)

    return model.model.lm_head.register_forward_hook(hook)
