"""The vLLM-faithful judge stand-in (tests/fake_judge_server.py, over tests/confident_judge.py)
in a process of its own, with zero model cost: every distinct request body is answered once by
the stand-in and replayed thereafter, so after a warm-up pass what a client meets is the HTTP
server (HTTP/1.1, connections kept alive as by vLLM's uvicorn) and the JSON of vLLM-shaped answers,
and the client's CPU is measured apart from the
server's. Prints "PORT <n>" when it listens and serves until its stdin closes.

    .venv/bin/python bench/judge_standin.py digits|thousand"""

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


def main() -> None:
    from tests.confident_judge import confident_judge
    from tests.fake_judge_server import judge_handler
    from tests.fake_openai import Reply, Routed, serve

    kind = sys.argv[1]
    tokenizer = make_tokenizer(kind)
    # 32k context: a seed judge's (a study's whole conversation is in its reply prompts)
    handler = judge_handler(
        confident_judge(tokenizer),
        renderer=TOKENIZERS[kind][1],  # type: ignore[arg-type]
        max_model_len=32768,
    )
    answered: dict[tuple[str, str], Reply] = {}
    lock = threading.Lock()

    def replay(path: str, body: dict[str, Any]) -> Reply:
        key = (path, json.dumps(body, sort_keys=True))
        reply = answered.get(key)
        if reply is None:
            with lock:  # the model under the stand-in answers one request at a time anyway
                reply = answered.get(key) or handler.answer(path, body)
                answered[key] = reply
        return reply

    with serve(Routed(replay), keep_alive=True) as server:
        print(f"PORT {server.port}", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
