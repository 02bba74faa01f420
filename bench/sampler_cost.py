"""What the lab's own sampler costs per decode step, against the decode step itself.

    python bench/sampler_cost.py [--size 8b|tiny] [--rows 32] [--json]

The lab samples each row with its own seeded generator (model_access/sampling.py,
RowSeededSampler: Gumbel-max over the vocabulary, after a nucleus step that sorts it), so a
row's text does not depend on its batch. Its generators are CPU generators: on a GPU the noise
for every row and step is drawn on the CPU in float64 and copied to the device. This bench times,
on the machine's device, one sampler call on a batch of logits (split into drawing the noise and
the nucleus step) and one decode step of a random Llama of the given shape (a KV cache of 256
tokens, bf16 on a GPU), each the median of repeated calls in this one run."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import torch

SHAPES = {
    # Llama-3.1-8B's shape (the seed studies' diarist)
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
               num_attention_heads=32, num_key_value_heads=8, vocab_size=128256),
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, vocab_size=49152),
}  # fmt: skip


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def median_s(work: Any, device: torch.device, repeats: int) -> float:
    work()  # warm
    times = []
    for _ in range(repeats):
        sync(device)
        start = time.perf_counter()
        work()
        sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def decode_step_s(shape: dict[str, int], rows: int, device: torch.device, repeats: int) -> float:
    from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    config = LlamaConfig(**shape, max_position_embeddings=4096)
    with torch.device(device):
        model = LlamaForCausalLM(config).to(dtype).eval()
    ids = torch.randint(0, shape["vocab_size"], (rows, 256), device=device)
    with torch.no_grad():
        cache = DynamicCache()
        model(ids, past_key_values=cache, use_cache=True)
        step = ids[:, -1:]

        def one() -> None:
            model(step, past_key_values=cache, use_cache=True)
            cache.crop(-1)  # back to 256 cached tokens: every step the same length

        return median_s(one, device, repeats)


def generation_check(tokenizer_folder: str, device: torch.device, folder: str) -> dict[str, Any]:
    """The lab's own generate on the device: a tiny random Llama saved with the given tokenizer,
    loaded by LocalModel, sampling one row alone and the same row inside a batch of three. The
    call key must name the sampler the device uses, and the row's text must not move."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from diarylab.model_access.local import LocalModel
    from diarylab.model_access.settings import GenerationSettings, LocalSettings

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         initializer_range=0.3, tie_word_embeddings=False)  # fmt: skip
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    model = LocalModel.load(folder, LocalSettings(device=device.type, dtype="fp32"))
    settings = GenerationSettings(max_new_tokens=24, temperature=0.9, top_p=0.95)
    prompt = model.encode("Dear diary,")
    other = model.encode("Today the rain")
    alone = model.generate([prompt], settings, seeds=[5])[0].token_ids
    batch = model.generate([other, prompt, other], settings, seeds=[9, 5, 13])
    return {
        "generation_device": str(model.device),
        "generation_sampler": model.generation_key(settings)["sampler"],
        "row_alone_equals_row_in_batch": list(alone) == list(batch[1].token_ids),
        "rows_differ": batch[0].token_ids != batch[2].token_ids,
    }


def main() -> None:
    from diarylab.model_access.sampling import (
        CounterSampler,
        RowSeededSampler,
        _nucleus,
        counter_uniform,
    )

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SHAPES), default="8b")
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--tokenizer", help="a tokenizer folder: also check the lab's generate")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    shape = SHAPES[args.size]
    vocab, rows = shape["vocab_size"], args.rows
    scores = torch.randn(rows, vocab, device=device) * 3
    ids = torch.zeros(rows, 1, dtype=torch.long, device=device)
    nucleus = RowSeededSampler(range(rows), temperature=0.9, top_p=0.95)
    plain = RowSeededSampler(range(rows), temperature=0.9, top_p=1.0)
    counter = CounterSampler(range(rows), temperature=0.9, top_p=1.0)
    counter_nucleus = CounterSampler(range(rows), temperature=0.9, top_p=0.95)
    # The counter noise is exact integer arithmetic: the device's numbers must be the CPU's.
    seeds = [s * 7919 + 2**40 for s in range(rows)]
    on_device = counter_uniform(seeds, 11, vocab, device).cpu()
    same = bool(torch.equal(on_device, counter_uniform(seeds, 11, vocab, torch.device("cpu"))))

    def noise() -> None:
        torch.stack(
            [torch.rand(vocab, generator=g, dtype=torch.float64) for g in plain.generators]
        ).to(device)

    figures = {
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "size": args.size,
        "rows": rows,
        "vocab": vocab,
        "sampler_top_p_0.95_s": median_s(lambda: nucleus(ids, scores), device, args.repeats),
        "sampler_top_p_1_s": median_s(lambda: plain(ids, scores), device, args.repeats),
        "noise_draw_and_copy_s": median_s(noise, device, args.repeats),
        "counter_sampler_top_p_0.95_s": median_s(
            lambda: counter_nucleus(ids, scores), device, args.repeats
        ),
        "counter_sampler_top_p_1_s": median_s(lambda: counter(ids, scores), device, args.repeats),
        "counter_noise_s": median_s(
            lambda: counter_uniform(seeds, 3, vocab, device), device, args.repeats
        ),
        "counter_noise_equals_cpu": same,
        "nucleus_step_s": median_s(lambda: _nucleus(scores / 0.9, 0.95), device, args.repeats),
        "decode_step_s": decode_step_s(shape, rows, device, max(5, args.repeats // 2)),
    }
    step = figures["decode_step_s"]
    print(f"{figures['device']}, {args.size}-shaped Llama, {rows} rows, vocabulary {vocab}:")
    for name in ("sampler_top_p_0.95_s", "sampler_top_p_1_s", "noise_draw_and_copy_s",
                 "counter_sampler_top_p_0.95_s", "counter_sampler_top_p_1_s", "counter_noise_s",
                 "nucleus_step_s", "decode_step_s"):  # fmt: skip
        value = figures[name]
        print(f"  {name:<24} {1000 * value:9.2f} ms  ({value / step:5.2f} x a decode step)")
    print(f"  counter noise on the device equals the CPU's: {same}")
    if args.tokenizer:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            figures.update(generation_check(args.tokenizer, device, folder))
        checks = [k for k in figures if k.startswith(("generation_", "row_"))]
        print("  " + ", ".join(f"{k}: {figures[k]}" for k in checks))
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
