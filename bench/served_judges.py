"""Served judge readings, before and after (issue 22), in one run: prompts per second, prompts and
requests per score, scores per second and client CPU per request and per prompt, for a
one-digit-per-token judge and a 0..999-single-token judge (testing/confident_judge.py).

By default against the vLLM-faithful stand-in (testing/fake_judge_server.py) run in its own process
with zero model cost (bench/judge_standin.py: each distinct request answered once, replayed
after a warm-up pass), so the client's CPU (this process's) is measured apart from the server's
(the stand-in's, shown per request too). "before" is the client's token prompts sent through
litellm's text_completion() as they were until issue 22 (LitellmPrompts below, the replaced
code); "after" is the lean transport (model_access/completions_http.py). Every figure is from
this run. `--base-url URL --tokenizer T` reads a real vLLM server instead.

    .venv/bin/python bench/served_judges.py [--scores 16] [--concurrency 8]
        [--base-url URL --tokenizer T]"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.phase_clock import process_cpu_seconds  # noqa: E402
from diarylab.model_access.prompt_batches import PromptBatch  # noqa: E402
from diarylab.model_access.served import ServedClient  # noqa: E402
from diarylab.model_access.settings import EndpointSettings  # noqa: E402
from diarylab.rubric.judging.served_exact import ExactSettings  # noqa: E402
from diarylab.rubric.judging.served_judge import ServedJudge  # noqa: E402
from diarylab.rubric.prompts import JudgePrompt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROMPT = JudgePrompt.chat(
    [{"role": "user", "content": "Rate the entry, 0 to 100."}], prefill="Score: "
)
# (label, litellm?, max_error, prompts per request, scores as a share of --scores)
MODES = [
    ("before: litellm", True, 0.0, 16, 0.25),
    ("after", False, 0.0, 1, 0.5),
    ("after", False, 0.0, 16, 1.0),
    ("after", False, 0.0, 64, 1.0),
    ("before: litellm", True, 0.05, 16, 0.25),
    ("after", False, 0.05, 16, 1.0),
]


class LitellmPrompts(ServedClient):
    """The token-prompt transport as it was before issue 22: litellm.text_completion() with the
    model renamed text-completion-openai/<name> (litellm 1.110.2 main.py refuses token prompts
    for hosted_vllm/), key and retries as ServedClient gave them."""

    def _post_prompts(self, batch: PromptBatch, timeout: float, url: str | None) -> Any:
        import litellm

        litellm.suppress_debug_info = True
        fields = batch.wire_fields()
        return litellm.text_completion(
            model="text-completion-openai/" + self.model.partition("/")[2],
            api_base=url,
            api_key="EMPTY",
            timeout=timeout,
            num_retries=0,
            max_retries=0,
            stream=False,
            **fields,
        )


CONCURRENCY = [8]


def measure(
    url: str, tokenizer: object, scores: int, old: bool, max_error: float, per: int, server: Any
) -> str:
    settings = EndpointSettings(base_url=url, concurrency=CONCURRENCY[0], prompts_per_request=per)
    make = LitellmPrompts if old else ServedClient
    judge = ServedJudge(
        make("hosted_vllm/fake-judge", settings),
        tokenizer=tokenizer,
        exact=ExactSettings(max_error=max_error),
    )
    judge.read_number(PROMPT, floor=0.0)  # warm-up: the stand-in answers each request once
    server_cpu = _cpu(server)
    wall, cpu = time.perf_counter(), time.process_time()
    records = judge.records("number", [PROMPT] * scores)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    server_cpu = _cpu(server) - server_cpu
    prompts = sum(r["requests"] for r in records)
    http = sum(r["http_requests"] for r in records)
    served = f", stand-in {1000 * server_cpu / max(http, 1):5.2f} ms" if server else ""
    return (
        f"max_error {max_error:<4} prompts/request {per:>2} ({scores:>2} scores): "
        f"{prompts / wall:6.0f} prompts/s, {scores / wall:6.2f} scores/s, "
        f"{prompts / scores:5.0f} prompts and {http / scores:5.1f} requests per score, "
        f"CPU per request: client {1000 * cpu / max(http, 1):6.2f} ms{served}; "
        f"client CPU per prompt {1e6 * cpu / max(prompts, 1):5.0f} µs"
    )


def _cpu(process: Any) -> float:
    return 0.0 if process is None else process_cpu_seconds([process.pid])


def standin(kind: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "judge_standin.py"), kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("PORT "):
        process.kill()
        raise SystemExit(f"the stand-in did not start: {line!r}")
    return process, f"http://127.0.0.1:{line.split()[1]}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scores", type=int, default=16)
    parser.add_argument("--base-url")
    parser.add_argument("--tokenizer")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    args = parser.parse_args()
    CONCURRENCY[0] = args.concurrency
    if args.base_url:
        from diarylab.model_access.loading import load_tokenizer

        tokenizer = load_tokenizer(args.tokenizer)
        print(f"real server {args.base_url}")
        for label, old, max_error, per, share in MODES:
            n = max(1, round(args.scores * share))
            line = measure(args.base_url, tokenizer, n, old, max_error, per, None)
            print(f"  {label:<16} {line}")
        return
    from bench.judge_standin import make_tokenizer

    print(
        f"client: {sys.executable}, concurrency {args.concurrency}, {os.cpu_count()} CPUs; "
        "stand-in in its own process (bench/judge_standin.py)"
    )
    for kind, name in (("digits", "one digit per token"), ("thousand", "0..999 single tokens")):
        tokenizer = make_tokenizer(kind)
        process, url = standin(kind)
        try:
            print(f"{name} (confident judge, zero-cost stand-in)")
            for label, old, max_error, per, share in MODES:
                n = max(1, round(args.scores * share))
                line = measure(url, tokenizer, n, old, max_error, per, process)
                print(f"  {label:<16} {line}", flush=True)
        finally:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
