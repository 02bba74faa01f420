"""The vLLM-faithful judge stand-in (tests/fake_judge_server.py, over tests/confident_judge.py)
in a process of its own, with zero model cost: every distinct request body is answered once by
the stand-in and replayed thereafter, so after a warm-up pass what a client meets is the HTTP
server (HTTP/1.1, connections kept alive as by vLLM's uvicorn) and the JSON of vLLM-shaped answers,
and the client's CPU is measured apart from the
server's. Prints "PORT <n>" when it listens and serves until its stdin closes.

    .venv/bin/python bench/judge_standin.py digits|thousand [--costless]"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOKENIZERS = {
    "digits": ("mistral_style_tokenizer", "mistral"),
    "thousand": ("thousand_numbers_tokenizer", "trim"),
}


def make_tokenizer(kind: str) -> Any:
    from tests import judge_tokenizers

    return getattr(judge_tokenizers, TOKENIZERS[kind][0])()


def costless_engine(model: Any) -> Any:
    """The confident judge's engine without its forward pass: each next-token row is the judge's
    bigram bias on the last token plus noise seeded by a hash of the prompt, so readings differ a
    little between prompts (as a model's do) and cost microseconds. A rehearsal's every judge
    request is new, and a tiny model's pass over a 4,000-token reply prompt was the stand-in's
    whole cost (py-spy, 2026-12-04: it held both cores while the client waited)."""
    import zlib

    import numpy as np
    import torch

    from tests.confident_judge import LOGIT_SCALE, bigram_table
    from tests.fake_judge_engine import JudgeEngine

    class CostlessEngine(JudgeEngine):
        def __init__(self) -> None:
            super().__init__(model)
            self.table = bigram_table(self.tokenizer, self.vocab_size)

        def next_logprobs(self, ids: Any) -> torch.Tensor:
            ids = [int(i) for i in ids]
            seed = zlib.crc32(np.asarray([len(ids), *ids[-32:]], dtype=np.int64).tobytes())
            noise = np.random.default_rng(seed).standard_normal(self.vocab_size)
            logits = torch.from_numpy(noise.astype(np.float32)) * LOGIT_SCALE
            return torch.log_softmax(logits + self.table[ids[-1]], dim=-1)

    return CostlessEngine()


def main() -> None:
    from tests.confident_judge import confident_judge
    from tests.fake_judge_server import judge_handler
    from tests.fake_openai import Reply, Routed, serve

    kind = sys.argv[1]
    tokenizer = make_tokenizer(kind)
    model = confident_judge(tokenizer)
    costless = "--costless" in sys.argv
    # 32k context: a seed judge's (a study's whole conversation is in its reply prompts)
    handler = judge_handler(
        model,
        renderer=TOKENIZERS[kind][1],  # type: ignore[arg-type]
        max_model_len=32768,
        engine=costless_engine(model) if costless else None,
    )
    answered: dict[tuple[str, str], Reply] = {}
    lock = threading.Lock()

    def replay(path: str, body: dict[str, Any]) -> Reply:
        if costless:  # nothing to save by replaying, and a study's answers would fill memory
            return handler.answer(path, body)
        key = (path, json.dumps(body, sort_keys=True))
        reply = answered.get(key)
        if reply is None:
            with lock:  # the model under the stand-in answers one request at a time anyway
                reply = answered.get(key) or handler.answer(path, body)
                answered[key] = reply
        return reply

    with serve(Routed(replay), keep_alive=True, record=not costless) as server:
        print(f"PORT {server.port}", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
