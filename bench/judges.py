"""Judge reading speed on the embedded default: seconds per local 0–100 reading, exact and
bounded (max_error 0.05, the designs' default) side by side, by the tree-attention reader (the
whole trie in one pass on the prompt's cache) and by the earlier reader (the prompt's cache
copied and repeated per batch of continuations, the prompt run again each call) on the same
prompts in one run; one score by 101 full sequences (prompt + number, one plain forward pass
each); and the time for the whole behavior rubric (15 reply questions + 2 person questions) on
one reply.

Run: .venv/bin/python bench/judges.py [--model smollm2] [--repeats 2]"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# Run as a script, Python puts bench/ first on the path, where bench/steering.py would shadow
# the steering package: look in the repository root instead.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import torch  # noqa: E402

from diarylab.model_access.local import LocalModel  # noqa: E402
from diarylab.rubric.behavior import score_reply  # noqa: E402
from diarylab.rubric.entry_scores import EntryTemplates, entry_prompts  # noqa: E402
from diarylab.rubric.judging.local_judge import LocalJudge  # noqa: E402

ENTRY = (
    "Thursday. Work was the usual, I ate lunch at my desk again because nobody asked and I "
    "didn't feel like asking either. Mum called but I let it ring. Told myself I'd call back "
    "after dinner and then didn't. The flat is very quiet in the evenings now. I keep thinking "
    "I should message Priya but it's been so long that it would be strange."
)
REPLY = (
    "It sounds like the quiet has been weighing on you. What do you think made it hard to pick "
    "up when your mum called?"
)


def full_sequences_seconds(model: LocalModel, text: str) -> float:
    """The naive reader: every number's whole sequence through the model, no cache reused."""
    start = time.perf_counter()
    for n in range(101):
        ids = model.encode(text + str(n))
        with torch.no_grad():
            model.model(torch.tensor([ids], device=model.device), use_cache=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    model = LocalModel.load(args.model)
    judge = LocalJudge(model)
    prompt = entry_prompts(ENTRY, [], EntryTemplates.load())["coherence"]
    text = judge.prompt_text(prompt)
    print(
        f"model {args.model}: dtype {model.dtype}, device {model.device}, "
        f"threads {torch.get_num_threads()}, prompt {len(model.encode(text))} tokens"
    )
    prompts = [
        entry_prompts(text_, [], EntryTemplates.load())[kind]
        for text_ in (ENTRY, ENTRY + " " + REPLY)
        for kind in ("coherence", "realism")
    ]
    judge.read_number(prompt, floor=0.0)  # warm-up
    per: dict[tuple[str, float], float] = {}
    means: dict[tuple[str, float], list[float]] = {}
    for _ in range(args.repeats):
        for reader in ("tree", "earlier"):
            model.tree_reads = reader == "tree"
            for max_error in (0.0, 0.05):
                reading_judge = LocalJudge(model, max_error=max_error)
                start = time.perf_counter()
                found = [reading_judge.read_number(p, floor=0.0).mean for p in prompts]
                seconds = (time.perf_counter() - start) / len(prompts)
                key = (reader, max_error)
                per[key] = min(per.get(key, float("inf")), seconds)
                means[key] = found
    model.tree_reads = True
    print(f"seconds per local 0–100 reading ({len(prompts)} prompts, best of {args.repeats}):")
    for max_error, label in ((0.0, "exact"), (0.05, "bounded 0.05")):
        tree, earlier = per[("tree", max_error)], per[("earlier", max_error)]
        print(
            f"  {label:13s} tree {tree:.3f} s   earlier {earlier:.3f} s   "
            f"speed-up {earlier / tree:.1f}x"
        )
    gap = max(
        abs(a - b)
        for e in (0.0, 0.05)
        for a, b in zip(means[("tree", e)], means[("earlier", e)], strict=True)
    )
    print(
        f"  bounded / exact (tree): {per[('tree', 0.05)] / per[('tree', 0.0)]:.2f}; largest "
        f"difference between the readers' means: {gap:.2e} points"
    )
    trie = []
    for _ in range(args.repeats):
        model.forget_prompt()
        start = time.perf_counter()
        reading = judge.read_number(prompt, floor=0.0)
        trie.append(time.perf_counter() - start)
    full = [full_sequences_seconds(model, text) for _ in range(args.repeats)]
    t_trie, t_full = min(trie), min(full)
    print(f"0–100 score, trie + KV cache ({reading.record['queried_nodes']} nodes): {t_trie:.2f} s")
    print(f"0–100 score, 101 full sequences:                {t_full:.2f} s")
    print(
        f"speed-up: {t_full / t_trie:.1f}x  (mean {reading.mean:.1f}, "
        f"coverage {reading.coverage:.3f})"
    )
    start = time.perf_counter()
    scores = score_reply(judge, ENTRY, REPLY, floor=0.0)
    t_rubric = time.perf_counter() - start
    print(
        f"behavior rubric, {len(scores.questions)} questions + {len(scores.person)} about the "
        f"person, one reply: {t_rubric:.2f} s"
    )


if __name__ == "__main__":
    main()
