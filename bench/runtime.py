"""Local runtime speed on the embedded default: generation tokens/s at batch 1 and 8, and scoring
101 continuations ("0".."100") with the prompt's KV cache vs. 101 full forward passes.

Run: .venv/bin/python bench/runtime.py [--model smollm2] [--tokens 64]"""

from __future__ import annotations

import argparse
import time

import torch

from diarylab.model_access.local import GenerationSettings, LocalModel

PROMPT = [{"role": "user", "content": "Write a diary entry about a long day at work."}]


def tokens_per_second(model: LocalModel, batch: int, tokens: int) -> float:
    prompt = model.chat_ids(PROMPT)
    settings = GenerationSettings(max_new_tokens=tokens, temperature=1.0)
    model.generate([prompt], GenerationSettings(max_new_tokens=4))  # warm-up
    start = time.perf_counter()
    out = model.generate([prompt] * batch, settings, seeds=list(range(batch)))
    elapsed = time.perf_counter() - start
    return sum(g.new_tokens for g in out) / elapsed


def scoring_seconds(model: LocalModel) -> tuple[float, float, float]:
    prompt = model.chat_ids(
        [
            {"role": "user", "content": "Rate this entry from 0 to 100. Answer with a number."},
            {"role": "assistant", "content": "Score:"},
        ],
    )
    conts = [model.encode(str(n)) for n in range(101)]
    start = time.perf_counter()
    cached = model.continuation_logprobs(prompt, conts)
    t_cached = time.perf_counter() - start
    start = time.perf_counter()
    full = []
    for c in conts:
        lp = model.full_pass_logprobs(prompt + c)
        full.append([float(lp[len(prompt) - 1 + i][t]) for i, t in enumerate(c)])
    t_full = time.perf_counter() - start
    diff = max(
        abs(a - b) for x, y in zip(cached, full, strict=True) for a, b in zip(x, y, strict=True)
    )
    return t_cached, t_full, diff


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(torch.get_num_threads())
    start = time.perf_counter()
    model = LocalModel.load(args.model)
    print(
        f"model {args.model}: load {time.perf_counter() - start:.1f} s, dtype {model.dtype}, "
        f"device {model.device}, threads {torch.get_num_threads()}"
    )
    b1 = tokens_per_second(model, 1, args.tokens)
    b8 = tokens_per_second(model, 8, args.tokens)
    print(f"generate batch 1: {b1:.1f} tok/s")
    print(f"generate batch 8: {b8:.1f} tok/s (total)")
    print(f"batch 8 / batch 1: {b8 / b1:.2f}x")
    t_cached, t_full, diff = scoring_seconds(model)
    print(f"101 continuations, cached prompt: {t_cached:.2f} s")
    print(f"101 continuations, full passes:   {t_full:.2f} s")
    print(f"speed-up: {t_full / t_cached:.1f}x (max |Δ log-prob| {diff:.2e})")


if __name__ == "__main__":
    main()
