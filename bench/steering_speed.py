"""Steered vs. unsteered generation speed at batch 8 on the embedded default (target: steered at
least 0.95 of unsteered), on both engines in one run: transformers + nnsight, and the vLLM
diarist engine (model_access/vllm_engine.py; skipped, and said so, without scripts/setup-vllm.sh's
venv). Runs alternate so that load from other processes hits all alike; medians are reported.

Run: .venv/bin/python bench/steering_speed.py [--model smollm2] [--tokens 64] [--reps 3]
     [--vector FILE --layer 20 --strength 0.5] [--no-vllm]   (default: a random vector)

(Not named bench/steering.py: a script's folder comes first on sys.path, so that name would
shadow the steering package for every script in bench/.)"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from model_access.local import GenerationSettings, LocalModel
from model_access.settings import VllmSettings
from model_access.vllm_engine import attach_vllm, vllm_python
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
    parser.add_argument("--no-vllm", action="store_true", help="transformers only")
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
    engines = {"transformers": model}
    if args.no_vllm:
        print("vLLM: skipped (--no-vllm)")
    elif not vllm_python().exists():
        print(f"vLLM: skipped ({vllm_python()} missing: run scripts/setup-vllm.sh)")
    else:
        settings_v = VllmSettings(max_num_seqs=args.batch, block_size=32, max_model_len=2048)
        engines["vllm"] = attach_vllm(model, settings_v)
    warm = GenerationSettings(max_new_tokens=4)
    started = time.perf_counter()
    for on in engines.values():
        timed(on, plain_rows, warm)
        timed(on, steered_rows, warm)  # wraps the model in nnsight once / starts the worker
    print(f"warm-up (vLLM worker start included): {time.perf_counter() - started:.1f} s")
    runs = [
        (e, n, rows)
        for e in engines
        for n, rows in (("unsteered", plain_rows), ("steered", steered_rows))
    ]
    rates: dict[str, list[float]] = {f"{e} {n}": [] for e, n, _ in runs}
    steps: dict[str, list[float]] = {f"{e} {n}": [] for e, n, _ in runs}
    for _ in range(args.reps):
        for engine, name, rows in runs:
            elapsed, tokens, longest = timed(engines[engine], rows, settings)
            rates[f"{engine} {name}"].append(tokens / elapsed)
            steps[f"{engine} {name}"].append(longest / elapsed)
    print(f"{'engine':>24}  tok/s total  steps/s  runs (tok/s)")
    for name in rates:
        print(
            f"{name:>24}  {statistics.median(rates[name]):11.1f}  "
            f"{statistics.median(steps[name]):7.2f}  " + ", ".join(f"{r:.1f}" for r in rates[name])
        )
    for engine in engines:
        ratio = statistics.median(steps[f"{engine} steered"]) / statistics.median(
            steps[f"{engine} unsteered"]
        )
        print(f"{engine}: steered / unsteered (decode steps per second): {ratio:.3f}")
    if "vllm" in engines:
        speedup = statistics.median(rates["vllm steered"]) / statistics.median(
            rates["transformers steered"]
        )
        print(f"vLLM steered / transformers steered (tok/s): {speedup:.2f}")
        engine = engines["vllm"].engine
        assert engine is not None
        engine.close()


if __name__ == "__main__":
    main()
