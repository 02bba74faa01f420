"""Steered vs. unsteered generation speed at batch 8 on the embedded default, in one run:
transformers + nnsight; then the vLLM diarist engine (model_access/vllm_engine.py; skipped, and
said so, without scripts/setup-vllm.sh's venv) three ways, one worker at a time — vLLM's own
model class in its default (compiled) mode, unsteered: vLLM as a researcher runs it; the lab's
steered model class in the default mode, unsteered and steered: what the engine runs; and the
same class eager, the way the engine ran before. Runs alternate within each; medians reported.
Target: vLLM steered / vLLM unsteered in its default mode ≥ 0.9 (≥ 0.95 the aim).

Run: .venv/bin/python bench/steering_speed.py [--model smollm2] [--tokens 64] [--reps 3]
     [--vector FILE --layer 20 --strength 0.5] [--no-vllm]   (default: a random vector)

(Not named bench/steering.py: a script's folder comes first on sys.path, so that name would
shadow the steering package for every script in bench/.)"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from diarylab.model_access.local import GenerationSettings, LocalModel
from diarylab.model_access.settings import VllmSettings
from diarylab.model_access.vllm_engine import vllm_python
from diarylab.model_access.vllm_twin import attach_vllm
from diarylab.steering.apply import Steer, generate_steered
from diarylab.steering.vectors import PatternVector, random_vector

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
    rates: dict[str, list[float]] = {}
    steps: dict[str, list[float]] = {}

    def measure(label: str, on: LocalModel, which: dict[str, list[Steer | None]]) -> None:
        warm = GenerationSettings(max_new_tokens=4)
        started = time.perf_counter()
        for rows in which.values():
            timed(on, rows, warm)  # wraps the model in nnsight once / starts the worker
        print(f"{label}: warm-up {time.perf_counter() - started:.1f} s")
        for _ in range(args.reps):  # alternating, so that other load hits all alike
            for name, rows in which.items():
                elapsed, tokens, longest = timed(on, rows, settings)
                rates.setdefault(f"{label} {name}", []).append(tokens / elapsed)
                steps.setdefault(f"{label} {name}", []).append(longest / elapsed)

    both = {"unsteered": plain_rows, "steered": steered_rows}
    measure("transformers", model, both)
    if args.no_vllm:
        print("vLLM: skipped (--no-vllm)")
    elif not vllm_python().exists():
        print(f"vLLM: skipped ({vllm_python()} missing: run scripts/setup-vllm.sh)")
    else:
        # One worker at a time: vLLM's own class in its default (compiled) mode, unsteered;
        # the lab's steered class in the default mode (what runs); the same class eager.
        variants = (
            ("vllm default mode, vLLM's own model", "plain", {"unsteered": plain_rows}),
            ("vllm default mode, steered model", "", both),
            ("vllm eager, steered model", "eager", both),
        )
        for label, variant, which in variants:
            os.environ["DIARYLAB_VLLM_VARIANT"] = variant
            settings_v = VllmSettings(max_num_seqs=args.batch, block_size=32, max_model_len=2048)
            twin = attach_vllm(model, settings_v)
            try:
                measure(label, twin, which)
                assert twin.engine is not None
                described = twin.engine.described
                print(
                    f"  {label}: enforce_eager {described.get('enforce_eager')}, compilation "
                    f"mode {described.get('compilation_mode')}, steered model "
                    f"{described.get('steered_model')}"
                )
            finally:
                assert twin.engine is not None
                twin.engine.close()
        os.environ.pop("DIARYLAB_VLLM_VARIANT", None)
    print(f"{'run':>48}  tok/s total  steps/s  runs (tok/s)")
    for name in rates:
        print(
            f"{name:>48}  {statistics.median(rates[name]):11.1f}  "
            f"{statistics.median(steps[name]):7.2f}  " + ", ".join(f"{r:.1f}" for r in rates[name])
        )

    def ratio(a: str, b: str) -> str:
        if a not in steps or b not in steps:
            return "n/a"
        return f"{statistics.median(steps[a]) / statistics.median(steps[b]):.3f}"

    print("ratios of decode steps per second:")
    print(
        "  transformers steered / unsteered: "
        + ratio("transformers steered", "transformers unsteered")
    )
    own = "vllm default mode, vLLM's own model unsteered"
    print(
        f"  vLLM steered (default mode) / vLLM unsteered (default mode, its own model): "
        f"{ratio('vllm default mode, steered model steered', own)}"
    )
    print(
        f"  vLLM unsteered through the steered model / its own model: "
        f"{ratio('vllm default mode, steered model unsteered', own)}"
    )
    print(
        f"  vLLM steered eager / vLLM unsteered (default mode): "
        f"{ratio('vllm eager, steered model steered', own)}"
    )
    print(
        f"  vLLM steered (default mode) / transformers steered: "
        f"{ratio('vllm default mode, steered model steered', 'transformers steered')}"
    )


if __name__ == "__main__":
    main()
