"""What a served 0–100 reading costs against the cheapest read there is, in one run: one
/v1/completions request for the same prompt asking the top-20 next-token log-probabilities (how
the persona-vector line of work reads a judge: one token, top-20, numbers 0..100 as single
tokens or not at all).

Two judges:
- SmolLM2 on the real vLLM server (the CPU build in scripts/setup-vllm.sh's venv, float32, the
  flags of testing/vllm_server.py): one digit per token, diffuse as a judge;
- the confident test judge (testing/confident_judge.py: most of its mass on one number) behind the
  vLLM-faithful stand-in (testing/fake_judge_server.py), since its output bias is a hook that vLLM
  cannot serve; that server's seconds are the stand-in computing the tiny model, in this
  process's threads (so its "client CPU" holds the stand-in's too).

Per judge and mode (bounded at max_error 0.05, the designs' default, and exact): median prompts
and HTTP requests per reading, median wall seconds per reading on an otherwise idle server (read
one at a time), the client's own CPU seconds per reading, and the ratio of the reading's wall
seconds to the top-20 read's. Every prompt is made fresh for each read (a nonce at the start of
the judged text), so neither read finds the other's prefix in the server's cache.

Run: .venv/bin/python bench/reading_cost.py [--texts 8]"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tables import keep_results, write_docs_block  # noqa: E402
from diarylab.diarists.cards import load_cards  # noqa: E402
from diarylab.model_access.embedded import embedded_model_folder  # noqa: E402
from diarylab.model_access.loading import load_tokenizer  # noqa: E402
from diarylab.model_access.served import ServedClient  # noqa: E402
from diarylab.model_access.settings import EndpointSettings  # noqa: E402
from diarylab.model_access.token_prompts import TokenPromptRequest  # noqa: E402
from diarylab.rubric.entry_scores import EntryTemplates, entry_prompts  # noqa: E402
from diarylab.rubric.judging.judge_render import render_judge_prompt  # noqa: E402
from diarylab.rubric.judging.served_exact import ExactSettings  # noqa: E402
from diarylab.rubric.judging.served_judge import ServedJudge  # noqa: E402
from diarylab.testing import vllm_server  # noqa: E402


def client(model: str, url: str) -> ServedClient:
    settings = EndpointSettings(base_url=url, concurrency=4, prompts_per_request=16)
    return ServedClient(model, settings)


def texts(count: int) -> list[str]:
    cards = load_cards()
    return [f"{c.situation} {c.cares_about}" for c in cards][:count]


def timed(call: Callable[[], Any]) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def measure(
    label: str, model: str, url: str, tokenizer: Any, samples: list[str]
) -> list[dict[str, Any]]:
    templates = EntryTemplates.load()

    def prompt(text: str) -> Any:
        return entry_prompts(text, [], templates)["coherence"]

    top20 = client(model, url)
    tops: list[float] = []
    for i, text in enumerate(samples):
        rendered = render_judge_prompt(tokenizer, prompt(f"[t{i}] {text}"))
        ids = tuple(tokenizer(rendered.text, add_special_tokens=False)["input_ids"])
        request = TokenPromptRequest(prompt_ids=ids, max_tokens=1, top_logprobs=20)
        _, wall, _ = timed(lambda r=request: top20.complete_prompts_counted([r]))
        tops.append(wall)
    top = statistics.median(tops)
    print(f"\n== {label}: one request, top-20: median {top:.3f} s")
    print(f"{'mode':>14}  {'prompts':>8}  {'HTTP':>6}  {'wall s':>8}  {'client CPU s':>12}  "
          "wall ÷ top-20  (medians per reading)")  # fmt: skip
    rows: list[dict[str, Any]] = [
        {"judge": label, "read": "one request, top-20", "prompts": 1, "HTTP requests": 1,
         "wall s": top, "client CPU s": None, "wall ÷ top-20": 1.0}
    ]  # fmt: skip
    for mode, max_error in (("bounded 0.05", 0.05), ("exact", 0.0)):
        judge = ServedJudge(
            client(model, url), tokenizer=tokenizer, exact=ExactSettings(max_error=max_error)
        )
        prompts, http, walls, cpus = [], [], [], []
        for i, text in enumerate(samples):
            p = prompt(f"[{mode[0]}{i}] {text}")
            record, wall, cpu = timed(lambda p=p, j=judge: j.number_record(p))
            prompts.append(record["requests"])
            http.append(record["http_requests"])
            walls.append(wall)
            cpus.append(cpu)
        med = statistics.median
        print(f"{mode:>14}  {med(prompts):8.0f}  {med(http):6.0f}  {med(walls):8.3f}  "
              f"{med(cpus):12.3f}  {med(walls) / top:13.1f}")  # fmt: skip
        rows.append({"judge": label, "read": mode, "prompts": med(prompts),
                     "HTTP requests": med(http), "wall s": med(walls),
                     "client CPU s": med(cpus), "wall ÷ top-20": med(walls) / top})  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=8)
    args = parser.parse_args()
    samples = texts(args.texts)
    work = Path(tempfile.mkdtemp(prefix="reading-cost-"))
    folder = embedded_model_folder()
    server = vllm_server.start(folder, work / "vllm.log", eager=False)  # timed as users serve
    print(f"vLLM server up in {server.start_s:.1f} s; {len(samples)} texts per mode")
    try:
        tokenizer = load_tokenizer(str(folder))
        rows = measure(
            "SmolLM2 on real vLLM", server.litellm_model, server.base_url, tokenizer, samples
        )
    finally:
        vllm_server.stop(server)

    from diarylab.testing.confident_judge import confident_judge
    from diarylab.testing.fake_judge_server import judge_handler
    from diarylab.testing.fake_openai import serve
    from diarylab.testing.judge_tokenizers import mistral_style_tokenizer

    tokenizer = mistral_style_tokenizer()
    model = confident_judge(tokenizer)
    with serve(judge_handler(model, renderer="mistral"), keep_alive=True) as stand_in:
        rows += measure(
            "confident test judge on the vLLM stand-in",
            "hosted_vllm/fake-judge",
            stand_in.base_url,
            tokenizer,
            samples,
        )
    kept = keep_results("reading_cost", {"texts": len(samples), "medians per reading": "yes"},
                        {"a 0–100 reading against one top-20 request": rows})  # fmt: skip
    write_docs_block("judges.md", "reading_cost", kept)


if __name__ == "__main__":
    main()
