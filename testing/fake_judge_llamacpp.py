"""llama.cpp's server (ggml-org/llama.cpp tools/server) answering /v1/chat/completions and
/v1/completions, for the judge stand-in (testing/fake_judge_server.py). Sources:

- `server-common.cpp` oaicompat_chat_params_parse: an assistant message at the end is a prefill
  (prefill_assistant): the template renders the messages before it with add_generation_prompt
  forced on and the prefill's text is appended verbatim, so its trailing space is kept;
  continue_final_message is never read. `logprobs: true` sets n_probs = top_logprobs, default 20;
  top_logprobs without logprobs is a 400. Every other body field is copied through unread, so
  logprob_token_ids, return_token_ids and return_tokens_as_token_ids are ignored silently.
- `server-common.cpp` oaicompat_completion_params_parse and tokenize_input_prompts: `prompt` is
  required (a string, tokenised with BOS and special tokens parsed, or a list of token ids taken
  as given); echo, best_of and suffix are refused. `server-task.cpp` params_from_json_cmpl: the
  completions endpoint's integer `logprobs` becomes n_probs.
- `server-context.cpp` populate_token_probs: probabilities are the softmax of the raw logits over
  the whole vocabulary, sorted, the first min(n_probs, n_vocab) kept: no cap at 20.
  launch_slot_with_task: a prompt token outside the vocabulary is "Prompt contains invalid tokens".
- `server-task.cpp` completion_token_output::probs_vector_to_json / to_json: every entry has `id`,
  `token`, `bytes`, `logprob`; the sampled one adds `top_logprobs`. Both endpoints answer
  `logprobs: {"content": [...]}` (the completions endpoint too, not OpenAI's legacy
  tokens/top_logprobs dicts); finish_reason is "stop" at end-of-generation, else "length"; no
  prompt token ids are echoed.
- `server-common.cpp` format_error_response: errors are {"error": {"code", "message", "type"}}."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from diarylab.testing.fake_judge_engine import (
    JudgeEngine,
    Step,
    llamacpp_logprob,
    llamacpp_piece,
    whole_utf8_prefix,
)
from diarylab.testing.fake_openai import Reply

DEFAULT_CHAT_N_PROBS = 20


class LlamaRefused(Exception):
    def __init__(self, message: str, status: int = 400, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status = status
        self.body = {"error": {"code": status, "message": message, "type": kind}}


def entry(engine: JudgeEngine, token_id: int, logprob: float) -> dict[str, Any]:
    piece = llamacpp_piece(engine.tokenizer, token_id)
    text = piece[: whole_utf8_prefix(piece)].decode("utf-8", "replace")
    return {
        "id": token_id,
        "token": text,
        "bytes": list(piece),
        "logprob": llamacpp_logprob(logprob),
    }


def probs_json(engine: JudgeEngine, steps: Sequence[Step], n_probs: int) -> list[dict[str, Any]]:
    out = []
    for step in steps:
        keep = min(n_probs, engine.vocab_size)
        order = [int(i) for i in torch.topk(step.row, keep).indices]
        top = [entry(engine, i, float(step.row[i])) for i in order]
        out.append(
            entry(engine, step.token_id, float(step.row[step.token_id])) | {"top_logprobs": top}
        )
    return out


def chat_prompt(engine: JudgeEngine, body: Mapping[str, Any]) -> str:
    messages = [dict(m) for m in body.get("messages") or []]
    if not messages:
        raise LlamaRefused("'messages' is required")
    add = bool(body.get("add_generation_prompt", True))
    prefill = None
    if messages[-1].get("role") == "assistant":
        prefill = str(messages.pop().get("content") or "")
        if messages and messages[-1].get("role") == "assistant":
            raise LlamaRefused("Cannot have 2 or more assistant messages at the end of the list.")
        add = True
    text = str(
        engine.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=add)
    )
    return text + (prefill or "")


def chat_n_probs(body: Mapping[str, Any]) -> int:
    if body.get("logprobs"):
        top = body.get("top_logprobs")  # json_value: absent or null gives the default
        return DEFAULT_CHAT_N_PROBS if top is None else int(top)
    if body.get("top_logprobs") is not None:
        raise LlamaRefused("top_logprobs requires logprobs to be set to true")
    return 0


def completion_prompt(engine: JudgeEngine, body: Mapping[str, Any]) -> list[int]:
    if "prompt" not in body:
        raise LlamaRefused('"prompt" is required')
    if body.get("echo"):
        raise LlamaRefused("Only no echo is supported")
    for name in ("best_of", "suffix"):
        if name in body:
            raise LlamaRefused(f"Unsupported param: {name}")
    prompt = body["prompt"]
    if isinstance(prompt, str):
        return list(engine.tokenizer(prompt, add_special_tokens=True)["input_ids"])
    if isinstance(prompt, list) and all(isinstance(i, int) for i in prompt):
        return [int(i) for i in prompt]
    raise LlamaRefused("the llama.cpp stand-in models a single string or token-id prompt", 501)


def listed_prompts(body: Mapping[str, Any]) -> list[Any] | None:
    """A list of token-id prompts, or None for one prompt. tools/server/server.cpp
    (handle_completions_impl) runs one task per prompt and answers a JSON array of their
    completion objects, each in the one-prompt shape with its own choices[0] (a single object
    only when there is one): not the completions API's one choice per prompt."""
    prompt = body.get("prompt")
    if isinstance(prompt, list) and prompt and all(isinstance(p, list) for p in prompt):
        return prompt
    return None


def check_tokens(engine: JudgeEngine, prompt: Sequence[int]) -> None:
    if any(i < 0 or i >= engine.vocab_size for i in prompt):
        raise LlamaRefused("Prompt contains invalid tokens")


def _budget(body: Mapping[str, Any], default: int) -> int:
    value = body.get("n_predict", body.get("max_completion_tokens", body.get("max_tokens")))
    return default if value is None or value < 0 else int(value)


def _envelope(
    kind: str, model: str, prompt: Sequence[int], steps: Sequence[Step], choice: dict[str, Any]
) -> dict[str, Any]:
    return {
        "choices": [choice],
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "b0000-fake",
        "object": kind,
        "usage": {
            "completion_tokens": len(steps),
            "prompt_tokens": len(prompt),
            "total_tokens": len(steps) + len(prompt),
        },
        "id": f"{'chatcmpl' if kind == 'chat.completion' else 'cmpl'}-{uuid.uuid4().hex}",
    }


def answer(
    engine: JudgeEngine, path: str, body: Mapping[str, Any], *, model: str, max_new: int
) -> Reply:
    prompts = listed_prompts(body) if path.endswith("/v1/completions") else None
    if prompts is not None:
        replies = [
            answer(engine, path, {**body, "prompt": p}, model=model, max_new=max_new)
            for p in prompts
        ]
        failed = [r for r in replies if r[0] != 200]
        if failed:
            return failed[0]  # the first error stops the batch (server_response_reader.next)
        objects = [r[1] for r in replies]
        for k, obj in enumerate(objects):
            obj["choices"][0]["index"] = k  # each task's own index
        return (200, objects[0]) if len(objects) == 1 else (200, objects)  # type: ignore[return-value]
    try:
        if path.endswith("/chat/completions"):
            n_probs = chat_n_probs(body)
            text = chat_prompt(engine, body)
            prompt = list(engine.tokenizer(text, add_special_tokens=True)["input_ids"])
        elif path.endswith("/completions"):
            prompt = completion_prompt(engine, body)
            n_probs = int(body.get("n_probs") or body.get("logprobs") or 0)
        else:
            raise LlamaRefused("File Not Found", 404, "not_found_error")
        check_tokens(engine, prompt)
    except LlamaRefused as refused:
        return refused.status, refused.body
    steps = engine.greedy(prompt, _budget(body, max_new))
    finish = "stop" if engine.finish_reason(steps) == "stop" else "length"
    raw = b"".join(llamacpp_piece(engine.tokenizer, s.token_id) for s in steps)
    content = raw.decode("utf-8", "replace")
    probs = {"content": probs_json(engine, steps, n_probs)} if n_probs > 0 else None
    if path.endswith("/chat/completions"):
        choice: dict[str, Any] = {
            "finish_reason": finish,
            "index": 0,
            "message": {"role": "assistant", "content": content},
        }
        if probs is not None:
            choice["logprobs"] = probs
        return 200, _envelope("chat.completion", model, prompt, steps, choice)
    choice = {"text": content, "index": 0, "logprobs": probs, "finish_reason": finish}
    return 200, _envelope("text_completion", model, prompt, steps, choice)
