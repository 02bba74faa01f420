"""Local models on a GPU, in one run: do the lab's local paths hold on CUDA, and how fast are they?
No model weights travel to a GPU machine here, so the model is a random Llama built in code with
the embedded default's tokenizer (its judge readings are diffuse: the bounded walk's worst case).

Prints, per dtype:
- tree reads (the whole trie in one tree-attention pass on the prompt's cache) against the
  earlier batched reader and against a plain forward pass of prompt + prefix: the largest
  log-probability difference over the trie's first nodes;
- seconds per local 0–100 reading, exact and bounded (0.05), by both readers, and the largest
  difference between their means;
- the behavior rubric's yes/no prompts (block chains, `last_logprobs`): seconds for a reply's
  questions, and whether each prompt read in its group equals the same prompt read alone;
- steered generation through nnsight against the forward-hook oracle
  (testing/steering_reference.py): greedy tokens equal?, and steered ÷ unsteered tokens per
  second at batch 8.

    python bench/gpu_local.py [--size 1b] [--dtypes float32,bfloat16] [--tokenizer DIR]
        [--json FILE]"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

# Run as a script, Python puts bench/ first on the path: look in the repository root instead.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import torch  # noqa: E402

from diarylab.model_access.local import GenerationSettings, LocalModel  # noqa: E402
from diarylab.rubric.behavior import reply_prompts  # noqa: E402
from diarylab.rubric.behavior_rubric import load_behavior_rubric  # noqa: E402
from diarylab.rubric.entry_scores import EntryTemplates, entry_prompts  # noqa: E402
from diarylab.rubric.judging.local_judge import LocalJudge  # noqa: E402
from diarylab.rubric.judging.number_trie import number_trie  # noqa: E402
from diarylab.rubric.prompts import load_template  # noqa: E402
from diarylab.steering.apply import Steer, generate_steered  # noqa: E402
from diarylab.steering.vectors import random_vector  # noqa: E402

ENTRY = (
    "Thursday. Work was the usual, I ate lunch at my desk again because nobody asked and I "
    "didn't feel like asking either. Mum called but I let it ring. The flat is very quiet in "
    "the evenings now. I keep thinking I should message Priya but it's been so long."
)
REPLY = "It sounds like the quiet has been weighing on you. What made it hard to pick up?"
# hidden, layers, heads, kv heads, intermediate
SIZES = {"tiny": (64, 2, 4, 2, 128), "1b": (2048, 16, 32, 8, 8192), "3b": (3072, 28, 24, 8, 8192)}


def build(tokenizer: Any, size: str, dtype: torch.dtype, device: str) -> LocalModel:
    from transformers import LlamaConfig, LlamaForCausalLM

    hidden, layers, heads, kv, inner = SIZES[size]
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=inner,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    with torch.device(device):
        model = LlamaForCausalLM(config).to(dtype).eval()
    return LocalModel(model, tokenizer, spec=f"random-llama-{size}")


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def tree_agreement(model: LocalModel, text: str, nodes: int = 24) -> dict[str, float]:
    trie = number_trie(model.tokenizer, text)
    prefixes = [node.ids for node in trie.nodes[:nodes]]
    model.tree_reads = True
    model.forget_prompt()
    tree = model.next_token_logprobs(trie.prompt_ids, prefixes)
    model.tree_reads = False
    earlier = model.next_token_logprobs(trie.prompt_ids, prefixes)
    model.tree_reads = True
    plain = torch.stack(
        [model.full_pass_logprobs([*trie.prompt_ids, *p])[-1] for p in prefixes[:8]]
    )
    return {
        "tree_vs_earlier": float((tree - earlier).abs().max()),
        "tree_vs_plain_pass": float((tree[:8] - plain).abs().max()),
    }


def readings(model: LocalModel, prompts: list[Any], repeats: int) -> dict[str, Any]:
    per: dict[str, float] = {}
    means: dict[str, list[float | None]] = {}
    for _ in range(repeats):
        for reader in ("tree", "earlier"):
            model.tree_reads = reader == "tree"
            for max_error in (0.0, 0.05):
                judge = LocalJudge(model, max_error=max_error)
                sync()
                start = time.perf_counter()
                found = [judge.read_number(p, floor=0.0) for p in prompts]
                sync()
                seconds = (time.perf_counter() - start) / len(prompts)
                key = f"{reader} {'exact' if max_error == 0 else 'bounded 0.05'}"
                per[key] = min(per.get(key, float("inf")), seconds)
                means[key] = [r.mean for r in found]
                per[f"{key} prompts"] = sum(r.record.get("queried_nodes", 0) for r in found) / len(
                    found
                )
    model.tree_reads = True
    gap = max(
        abs((a or 0.0) - (b or 0.0))
        for kind in ("exact", "bounded 0.05")
        for a, b in zip(means[f"tree {kind}"], means[f"earlier {kind}"], strict=True)
    )
    return {"seconds_per_reading": per, "means_gap_points": gap}


def yes_no(model: LocalModel, judge: LocalJudge) -> dict[str, Any]:
    person, questions = reply_prompts(
        ENTRY,
        REPLY,
        [],
        load_behavior_rubric(),
        load_template("person_question"),
        load_template("reply_question"),
    )
    prompts = list(questions.values()) + list(person.values())
    judge.yes_no_records(prompts)  # warm-up
    sync()
    start = time.perf_counter()
    together = judge.yes_no_records(prompts)
    sync()
    seconds = time.perf_counter() - start
    alone = [judge.yes_no_records([p])[0] for p in prompts]
    same = all(
        a["yes"] == b["yes"] and a["no"] == b["no"] for a, b in zip(together, alone, strict=True)
    )
    return {"questions": len(prompts), "seconds": seconds, "group_equals_alone": same}


def steering(model: LocalModel, tokens: int) -> dict[str, Any]:
    from diarylab.testing.steering_reference import generate_steered_hooks

    vector = random_vector(model.info(), seed=1, residual_norm=4.0)
    layer = model.num_layers // 2
    steer = Steer(vector, (layer,), 1.0)
    chats = [[{"role": "user", "content": f"Write about day {k}."}] for k in range(8)]
    prompts = [model.chat_ids(c) for c in chats]
    settings = GenerationSettings(max_new_tokens=tokens)
    steers = [steer if k % 2 else None for k in range(8)]
    lab = generate_steered(model, prompts, settings, steers=steers)
    oracle = generate_steered_hooks(model, prompts, settings, steers=steers)
    equal = [a.token_ids == b.token_ids for a, b in zip(lab, oracle, strict=True)]
    changed = [
        a.token_ids != b.token_ids
        for a, b in zip(
            lab, generate_steered(model, prompts, settings, steers=[None] * 8), strict=True
        )
    ]
    timing = {}
    for label, rows in (("unsteered", [None] * 8), ("steered", [steer] * 8)):
        generate_steered(model, prompts, settings, steers=rows)  # warm-up
        sync()
        start = time.perf_counter()
        out = generate_steered(model, prompts, settings, steers=rows)
        sync()
        timing[label] = sum(len(g.token_ids) for g in out) / (time.perf_counter() - start)
    return {
        "rows_equal_to_hook_oracle": f"{sum(equal)}/{len(equal)}",
        "steered_rows_changed": f"{sum(changed[1::2])}/4",
        "unsteered_rows_unchanged": f"{sum(not c for c in changed[0::2])}/4",
        "tok_per_s": timing,
        "steered_over_unsteered": timing["steered"] / timing["unsteered"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="1b", choices=list(SIZES))
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--tokenizer", default=None, help="a folder with tokenizer files")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    from transformers import AutoTokenizer

    if args.tokenizer is None:
        from diarylab.model_access.embedded import embedded_model_folder

        args.tokenizer = str(embedded_model_folder())
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    found: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "torch": torch.__version__,
        "size": args.size,
    }
    print(f"{found['device']} · torch {torch.__version__} · random Llama {args.size}", flush=True)
    templates = EntryTemplates.load()
    for name in args.dtypes.split(","):
        dtype = getattr(torch, name)
        model = build(tokenizer, args.size, dtype, device)
        judge = LocalJudge(model)
        prompts = [
            entry_prompts(text, [], templates)[kind]
            for text in (ENTRY, ENTRY + " " + REPLY)
            for kind in ("coherence", "realism")
        ]
        text = judge.prompt_text(prompts[0])
        judge.read_number(prompts[0], floor=0.0)  # warm-up (kernels, allocator)
        result = {
            "prompt_tokens": len(model.encode(text)),
            "agreement": tree_agreement(model, text),
            "readings": readings(model, prompts, args.repeats),
            "yes_no": yes_no(model, judge),
            "steering": steering(model, args.tokens),
        }
        found[name] = result
        print(f"== {name}: prompt {result['prompt_tokens']} tokens", flush=True)
        print(json.dumps(result, indent=1), flush=True)
        del model, judge
        if device == "cuda":
            torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
