"""A served judge stand-in: a handler for tests/fake_openai.serve that answers chat completions
the way vLLM does, with REAL log-probabilities computed by a local model (the tiny random Llama),
so HTTP, litellm and the served judge's parsing all run for real.

Honoured request fields: messages, max_tokens, logprobs, top_logprobs, continue_final_message,
add_generation_prompt and, in "vllm" mode, logprob_token_ids and return_tokens_as_token_ids.
Modes: "vllm" (everything above), "openai" (explicit token ids ignored, as a server without
that feature would), "no_logprobs" (answers without any log-probabilities)."""

from __future__ import annotations

from typing import Any

from model_access.local import LocalModel
from tests.fake_openai import Handler, chat_response


def judge_handler(model: LocalModel, *, mode: str = "vllm") -> Handler:
    tokenizer = model.tokenizer
    eos = set(model.eos_token_ids)

    def token_text(token_id: int, as_ids: bool) -> str:
        return f"token_id:{token_id}" if as_ids else str(tokenizer.decode([token_id]))

    def handle(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        cont = bool(body.get("continue_final_message", False))
        ids = model.chat_ids(
            body["messages"],
            add_generation_prompt=bool(body.get("add_generation_prompt", True)) and not cont,
            continue_final_message=cont,
        )
        want = bool(body.get("logprobs")) and mode != "no_logprobs"
        k = int(body.get("top_logprobs") or 0)
        explicit = body.get("logprob_token_ids") if mode == "vllm" else None
        as_ids = bool(body.get("return_tokens_as_token_ids")) and mode == "vllm"
        content, generated = [], []
        for _ in range(int(body.get("max_tokens") or 1)):
            row = model.next_token_logprobs(ids)[0]
            chosen = int(row.argmax())  # temperature 0
            if explicit:
                alternatives = [int(i) for i in explicit]
            else:
                alternatives = [int(i) for i in row.topk(k).indices] if k else []
            content.append(
                {
                    "token": token_text(chosen, as_ids),
                    "logprob": float(row[chosen]),
                    "top_logprobs": [
                        {"token": token_text(i, as_ids), "logprob": float(row[i])}
                        for i in alternatives
                    ],
                }
            )
            if chosen in eos:
                break
            generated.append(chosen)
            ids = [*ids, chosen]
        text = str(tokenizer.decode(generated, skip_special_tokens=True))
        return 200, chat_response(text, model="fake-judge", logprobs=content if want else None)

    return handle
