"""One chat try through litellm, and the key every served call sends: chat requests keep
litellm, whose providers (OpenAI, Anthropic, hosted vLLM, ...) each want their own request
shape; token prompts use the lean transport (model_access/completions_http.py)."""

from __future__ import annotations

import json
import os
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.model_access.completions import Completion, CompletionRequest, parse_response
from diarylab.model_access.settings import EndpointSettings

# litellm fetches a price list over the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def chat_once(
    model: str,
    settings: EndpointSettings,
    request: CompletionRequest,
    timeout: float,
    url: str | None,
) -> Completion:
    import litellm

    litellm.suppress_debug_info = True
    kwargs: dict[str, Any] = {
        "timeout": timeout,
        # Retries are ours (so that empty bodies are retried too, and Retry-After and the
        # retry budget are honoured once). num_retries=0 keeps litellm's own retry wrapper
        # off (litellm/utils.py, client(): `kwargs.get("num_retries") or litellm.num_retries`)
        # and, as litellm/main.py completion() sets max_retries = num_retries, is what reaches
        # the OpenAI SDK client of openai/ models (litellm/llms/openai/openai.py,
        # OpenAIChatCompletion.completion() pops "max_retries" with a default of 2, and
        # _get_openai_client() builds OpenAI(max_retries=...)); that SDK would otherwise retry
        # twice more on its own (openai/_base_client.py, _should_retry and
        # _calculate_retry_timeout). max_retries=0 says the same again, explicitly.
        # hosted_vllm/ chat goes through litellm's own HTTP handler, which does not retry.
        "num_retries": 0,
        "max_retries": 0,
        "stream": False,  # log-probs with streaming are unreliable in litellm
        "model": model,
        "messages": [{"role": r, "content": c} for r, c in request.messages],
        "max_tokens": request.generation.max_new_tokens,
        "temperature": request.generation.temperature,
    }
    if key := endpoint_key(model, settings):
        kwargs["api_key"] = key
    if url:
        kwargs["api_base"] = url
    if request.generation.top_p < 1.0:
        # Sent only when it restricts anything: some providers refuse temperature and top_p
        # together, and top_p = 1 is every provider's default.
        kwargs["top_p"] = request.generation.top_p
    if request.seed is not None:
        kwargs["seed"] = request.seed
    if request.top_logprobs:
        kwargs["logprobs"] = True
        kwargs["top_logprobs"] = request.top_logprobs
    extra = json.loads(request.extra_body)
    if extra:
        kwargs["extra_body"] = extra
    return parse_response(litellm.completion(**kwargs))


def endpoint_key(model: str, settings: EndpointSettings) -> str | None:
    """The key named by the endpoint, read now and never kept; "EMPTY" for a self-hosted server
    named by URL without one (vLLM takes none, but the OpenAI client insists on one); None to
    leave the provider's own default (e.g. OPENAI_API_KEY) to the transport."""
    name = settings.api_key_env
    if not name:
        return "EMPTY" if settings.urls else None
    value = os.environ.get(name)
    if not value:
        raise LabError(
            f"environment variable {name} is not set",
            where=f"model {model}",
            fix=f"export {name}=<your key> before running",
        )
    return value
