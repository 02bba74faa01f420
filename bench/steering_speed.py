"""Steered vs. unsteered generation speed at batch 8 on the embedded default (target: steered at
least 0.95 of unsteered). Runs alternate between the two so that load from other processes hits
both alike; the median of each is reported.

Run: .venv/bin/python bench/steering_speed.py [--model smollm2] [--tokens 64] [--reps 3]
     [--vector FILE --layer 20 --strength 0.5]   (default: a random vector, same cost)

(Not named bench/steering.py: a script's folder comes first on sys.path, so that name would
shadow the steering package for every script in bench/.)"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from model_access.local import GenerationSettings, LocalModel
from steering.apply import Steer, generate_steered
from steering.vectors import PatternVector, random_vector

PROMPT = [
    {"role": "system", "content": "You keep a private diary and write only for yourself."},
    {"role": "user", "content": "Write about how today felt, from morning to night."},
]


def timed(
    model: LocalModel, steers: list[Steer | None], settings: GenerationSettings
) -> tuple[float, int, int]:
    prompts = [model.chat_ids(PROMPT)] * len(steers)
    start = time.perf_counter()
    out = generate_steered(model, prompts, settings, seeds=list(range(len(steers))), steers=steers)
    elapsed = time.perf_counter() - start
    return elapsed, sum(g.new_tokens for g in out), max(g.new_tokens for g in out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--vector")
    parser.add_argument("--layer", type=int, default=20)
    parser.add_argument("--strength", type=float, default=0.5)
    args = parser.parse_args()
    model = LocalModel.load(args.model)
    vector = PatternVector.load(args.vector) if args.vector else random_vector(model.info())
    steer = Steer(vector, (args.layer,), args.strength)
    settings = GenerationSettings(max_new_tokens=args.tokens, temperature=1.0)
    print(
        f"model {args.model}: dtype {model.dtype}, device {model.device}, "
        f"threads {torch.get_num_threads()}, batch {args.batch}, {args.tokens} new tokens"
    )
    plain_rows: list[Steer | None] = [None] * args.batch
    steered_rows: list[Steer | None] = [steer] * args.batch
    warm = GenerationSettings(max_new_tokens=4)
    timed(model, plain_rows, warm)
    timed(model, steered_rows, warm)  # also wraps the model in nnsight once
    rates: dict[str, list[float]] = {"unsteered": [], "steered": []}
    steps: dict[str, list[float]] = {"unsteered": [], "steered": []}
    for _ in range(args.reps):
        for name, rows in (("unsteered", plain_rows), ("steered", steered_rows)):
            elapsed, tokens, longest = timed(model, rows, settings)
            rates[name].append(tokens / elapsed)
            steps[name].append(longest / elapsed)
    for name in rates:
        print(
            f"{name:>9}: {statistics.median(rates[name]):7.1f} tok/s total "
            f"({statistics.median(steps[name]):5.2f} steps/s; runs "
            + ", ".join(f"{r:.1f}" for r in rates[name])
            + ")"
        )
    ratio = statistics.median(steps["steered"]) / statistics.median(steps["unsteered"])
    print(f"steered / unsteered (decode steps per second): {ratio:.3f} (target ≥ 0.95)")


if __name__ == "__main__":
    main()
