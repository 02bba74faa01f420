"""A model split by local.device_map against the same model on one device, on the embedded
default: load time, steered greedy generation time, and whether the texts are the same token for
token. Without GPUs the split is accelerate's disk offload (the back half of the layers stays in
the safetensors file; a hook brings each layer's weights in for its forward), the slowest
placement there is, so its figure bounds what a map costs.

Run: .venv/bin/python bench/device_map.py [--model smollm2] [--tokens 32] [--batch 4]
     [--offload-from 15] [--layer 20 --strength 0.5]"""

from __future__ import annotations

import argparse
import time

import torch

from diarylab.model_access.local import GenerationSettings, LocalModel
from diarylab.model_access.settings import LocalSettings
from diarylab.steering.apply import Steer, generate_steered
from diarylab.steering.vectors import random_vector

PROMPT = [
    {"role": "system", "content": "You keep a private diary and write only for yourself."},
    {"role": "user", "content": "Write about how today felt, from morning to night."},
]


def split_map(layers: int, offload_from: int) -> dict[str, str]:
    """Embeddings, the first layers, the final norm and the head on the CPU; the rest on disk."""
    placed = {"model.embed_tokens": "cpu", "model.norm": "cpu", "model.rotary_emb": "cpu"}
    for layer in range(layers):
        placed[f"model.layers.{layer}"] = "disk" if layer >= offload_from else "cpu"
    return {**placed, "lm_head": "cpu"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--offload-from", type=int, default=15)
    parser.add_argument("--layer", type=int, default=20)
    parser.add_argument("--strength", type=float, default=0.5)
    args = parser.parse_args()
    settings = GenerationSettings(max_new_tokens=args.tokens)
    started = time.perf_counter()
    one = LocalModel.load(args.model, LocalSettings(device="cpu"))
    loads = {"one device": time.perf_counter() - started}
    placements = {
        "auto": LocalSettings(device_map="auto"),
        "split": LocalSettings(device_map=split_map(one.num_layers, args.offload_from)),
    }
    models = {"one device": one}
    for name, local in placements.items():
        started = time.perf_counter()
        models[name] = LocalModel.load(args.model, local)
        loads[name] = time.perf_counter() - started
    vector = random_vector(one.info(), seed=1)
    steers: list[Steer | None] = [Steer(vector, (args.layer,), args.strength)] * args.batch
    steers[-1] = None  # an unsteered twin in the batch
    prompts = [one.chat_ids(PROMPT)] * args.batch
    print(
        f"model {args.model}: {one.num_layers} layers, {one.dtype}, threads "
        f"{torch.get_num_threads()}, batch {args.batch}, {args.tokens} new tokens, split: "
        f"layers {args.offload_from}..{one.num_layers - 1} on disk"
    )
    reference = None
    for name, model in models.items():
        generate_steered(
            model, prompts[:1], GenerationSettings(max_new_tokens=2), steers=steers[:1]
        )
        started = time.perf_counter()
        out = generate_steered(model, prompts, settings, steers=steers)
        elapsed = time.perf_counter() - started
        tokens = [g.token_ids for g in out]
        reference = reference or tokens
        devices = ", ".join(model.placement()["devices"])
        print(
            f"{name:>10}: load {loads[name]:5.1f} s, steered generate {elapsed:5.1f} s, "
            f"devices [{devices}], same tokens as one device: {tokens == reference}"
        )


if __name__ == "__main__":
    main()
