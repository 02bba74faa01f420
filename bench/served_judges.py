"""Served judge readings, before and after (issue 22): requests per score, scores per second and
CPU per request, for max_error 0 vs 0.05 and 1 vs 16 prompts per request, on a one-digit-per-
token judge and a 0..999-single-token judge (tests/confident_judge.py) behind the vLLM-faithful
stand-in (tests/fake_judge_server.py). The stand-in runs in this process and keeps every row it
computed, so after a warm-up its model costs nothing and what is measured is the client (plus
the stand-in's own JSON work, which the CPU figure includes: an upper bound on the client's).
`--base-url URL --tokenizer T` reads a real vLLM server instead.

    .venv/bin/python bench/served_judges.py [--scores 5] [--base-url URL --tokenizer T]"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model_access.served import ServedClient  # noqa: E402
from model_access.settings import EndpointSettings  # noqa: E402
from rubric.prompts import JudgePrompt  # noqa: E402
from rubric.served_exact import ExactSettings  # noqa: E402
from rubric.served_judge import ServedJudge  # noqa: E402

PROMPT = JudgePrompt.chat(
    [{"role": "user", "content": "Rate the entry, 0 to 100."}], prefill="Score: "
)
MODES = [(0.0, 1), (0.0, 16), (0.05, 1), (0.05, 16)]


def measure(url: str, tokenizer: object, scores: int, max_error: float, per: int) -> str:
    settings = EndpointSettings(base_url=url, concurrency=8, prompts_per_request=per)
    judge = ServedJudge(
        ServedClient("hosted_vllm/fake-judge", settings),
        tokenizer=tokenizer,
        exact=ExactSettings(max_error=max_error),
    )
    judge.read_number(PROMPT, floor=0.0)  # warm-up: the stand-in computes its rows once
    wall, cpu = time.perf_counter(), time.process_time()
    records = judge.records("number", [PROMPT] * scores)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    prompts = sum(r["requests"] for r in records)
    http = sum(r["http_requests"] for r in records)
    return (
        f"max_error {max_error:<4} prompts/request {per:>2}: {prompts / scores:7.1f} prompts and "
        f"{http / scores:6.1f} requests per score, {scores / wall:7.2f} scores/s, "
        f"{prompts / wall:7.0f} prompts/s, {1000 * cpu / max(http, 1):6.2f} ms CPU per request, "
        f"{1e6 * cpu / max(prompts, 1):6.0f} µs CPU per prompt"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scores", type=int, default=5)
    parser.add_argument("--base-url")
    parser.add_argument("--tokenizer")
    args = parser.parse_args()
    if args.base_url:
        from model_access.loading import load_tokenizer

        tokenizer = load_tokenizer(args.tokenizer)
        print(f"real server {args.base_url}")
        for max_error, per in MODES:
            print("  " + measure(args.base_url, tokenizer, args.scores, max_error, per))
        return
    from tests.confident_judge import confident_judge
    from tests.fake_judge_server import judge_handler
    from tests.fake_openai import serve
    from tests.judge_tokenizers import mistral_style_tokenizer, thousand_numbers_tokenizer

    for name, make, renderer in (
        ("one digit per token", mistral_style_tokenizer, "mistral"),
        ("0..999 single tokens", thousand_numbers_tokenizer, "trim"),
    ):
        tokenizer = make()
        model = confident_judge(tokenizer)
        with serve(judge_handler(model, renderer=renderer)) as server:
            print(f"{name} (confident judge, stand-in)")
            for max_error, per in MODES:
                print("  " + measure(server.base_url, tokenizer, args.scores, max_error, per))


if __name__ == "__main__":
    main()
