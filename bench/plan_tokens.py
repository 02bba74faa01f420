"""The plan's tokens against real vLLM servers' own counters, in one run: the tiny Qwen3-shaped
chatbot (its thinking kept apart) and the Mistral-format seed judge (read exactly) on the vLLM
CPU build of scripts/setup-vllm.sh, a short diary run planned first
(testing/served_tokens.py). Prints, per served model and counter, the plan's figure, the
server's (its Prometheus counters for the run) and their ratio; keeps them in
bench/results/plan_tokens.json and writes the table into docs/gpu-study.md. Target: every
ratio within 0.85–1.15 (tests/experiments/planning/test_vllm_plan_tokens.py holds it).

Run: .venv/bin/python bench/plan_tokens.py"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tables import keep_results, write_docs_block  # noqa: E402


def main() -> None:
    from transformers import AutoTokenizer

    from diarylab.model_access.embedded import embedded_model_folder
    from diarylab.testing.seed_shapes import build_mistral_judge, docs_flags
    from diarylab.testing.served_tokens import COUNTERS, plan_and_run
    from diarylab.testing.thinking_model import build_thinking_model
    from diarylab.testing.tiny_models import build_tiny_llama
    from diarylab.testing.vllm_server import launch, start_together, stop

    with tempfile.TemporaryDirectory() as tmp:
        made = Path(tmp)
        smollm2 = embedded_model_folder()
        tokenizer = AutoTokenizer.from_pretrained(smollm2)
        diarist = made / "tiny-llama"
        build_tiny_llama(tokenizer).save_pretrained(diarist)
        tokenizer.save_pretrained(diarist)
        hf, native = build_mistral_judge(made / "mistral")
        thinking = build_thinking_model(smollm2, made / "thinking")
        small = {"max_model_len": 2048, "kv_cache_gib": 1}
        chatbot, judge = start_together(
            launch(thinking, made / "chatbot.log", **small),
            launch(native, made / "judge.log", extra_args=docs_flags(
                "mistralai/Mistral-Small-3.1-24B-Instruct-2503"), **small),
        )  # fmt: skip
        try:
            counted = plan_and_run(made / "run", diarist, chatbot, judge, hf)
        finally:
            stop(chatbot, grace_s=3.0)
            stop(judge, grace_s=3.0)
    rows = []
    for model, c in counted.items():
        for counter in COUNTERS:
            rows.append(
                {
                    "model": model,
                    "counter": counter,
                    "planned": c.planned[counter],
                    "server": c.server[counter],
                    "planned / server": c.ratio(counter),
                }
            )
        planned, server = c.computed()
        rows.append(
            {
                "model": model,
                "counter": "computed (prompt − cached)",
                "planned": planned,
                "server": server,
                "planned / server": planned / server if server else float("nan"),
            }
        )
    for row in rows:
        print(
            f"{row['model']:<10} {row['counter']:<27} planned {row['planned']:>10,.0f}  "
            f"server {row['server']:>10,.0f}  ratio {row['planned / server']:.3f}"
        )
    settings = {"servers": "vLLM CPU build, tiny random shapes", "run": "1 diarist × 3 entries"}
    kept = keep_results("plan_tokens", settings, {"plan_against_the_servers_counters": rows})
    write_docs_block("gpu-study.md", "plan_tokens", kept)


if __name__ == "__main__":
    main()
