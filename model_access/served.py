"""The lab's second door to models: served models (API providers and OpenAI-compatible servers
such as vLLM or llama.cpp) through litellm. Two request types — a chat CompletionRequest, and a
TokenPromptRequest whose prompt is token ids sent to /v1/completions — and one client with a
concurrency limit, timeouts and retries with backoff shared by both. Keys are read from the
environment at call time and never stored.

Transport settings (base URL, key variable, timeout, retries, concurrency) are the client's
EndpointSettings; what determines a result lives on the request — only the latter belongs in
cache keys."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from foundation.errors import LabError
from model_access.completions import (
    Alternative,
    Completion,
    CompletionRequest,
    EmptyResponse,
    TokenLogprob,
    parse_response,
)
from model_access.prompt_batches import PromptBatch, answer_all, batches, parse_choices
from model_access.replicas import Replicas
from model_access.retry_after import retry_after_s
from model_access.settings import EndpointSettings
from model_access.token_prompts import TokenCompletion, TokenPromptRequest, parse_text_response

__all__ = [
    "Alternative",
    "Completion",
    "CompletionRequest",
    "EmptyResponse",
    "ServedClient",
    "TokenCompletion",
    "TokenLogprob",
    "TokenPromptRequest",
    "TransportFailure",
    "retry_after_s",
]

T = TypeVar("T")
R = TypeVar("R")

# litellm fetches a price list over the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TRANSIENT = (
    "APIConnectionError",
    "Timeout",
    "RateLimitError",
    "ServiceUnavailableError",
    "InternalServerError",
    "BadGatewayError",
    "APIError",
)
USER_FIXABLE = (
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "BadRequestError",
    "UnsupportedParamsError",
    "ContextWindowExceededError",
    "PaymentRequiredError",
)


class TransportFailure(LabError):
    """The server could not be reached or kept answering with nothing, after every retry."""


class ServedClient:
    """The one door to served models. `model` is litellm's model string (e.g. "openai/gpt-4o",
    "hosted_vllm/mistralai/Mistral-Small-3.1-24B-Instruct-2503"); `settings` are the design's
    own EndpointSettings, read here and nowhere else."""

    def __init__(
        self,
        model: str,
        settings: EndpointSettings | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.settings = settings or EndpointSettings()
        self._slots = threading.BoundedSemaphore(self.settings.concurrency)
        self._sleep = sleep
        self.replicas = Replicas(self.settings.urls)

    def complete(self, request: CompletionRequest) -> Completion:
        return self._with_retries(lambda timeout, url: self._call(request, timeout, url))

    def complete_prompt(self, request: TokenPromptRequest) -> TokenCompletion:
        """One `/v1/completions` call with the prompt as token ids (see token_prompts)."""
        batch = PromptBatch((0,), (request,))
        return self._with_retries(lambda timeout, url: self._call_prompt(batch, timeout, url))

    def complete_many(self, requests: Sequence[CompletionRequest]) -> list[Completion]:
        return self._map(self.complete, requests)

    def complete_prompts(self, requests: Sequence[TokenPromptRequest]) -> list[TokenCompletion]:
        return self.complete_prompts_counted(requests)[0]

    def complete_prompts_counted(
        self, requests: Sequence[TokenPromptRequest]
    ) -> tuple[list[TokenCompletion], int]:
        """Every prompt's answer, sent as lists of up to prompts_per_request equal requests
        (model_access/prompt_batches.py), and how many HTTP requests that took."""
        if not requests:
            return [], 0
        groups = batches(requests, self.settings.prompts_per_request)
        answers, again = answer_all(
            requests,
            self.settings.prompts_per_request,
            self._send_batch,
            self.complete_prompt,
            self._map,
        )
        return answers, len(groups) + again

    def _send_batch(self, batch: PromptBatch) -> list[TokenCompletion | EmptyResponse]:
        if len(batch.requests) == 1:
            return [self.complete_prompt(batch.requests[0])]
        return self._with_retries(lambda timeout, url: self._call_batch(batch, timeout, url))

    def _map(self, call: Callable[[R], T], requests: Sequence[R]) -> list[T]:
        if not requests:
            return []
        with ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
            return list(pool.map(call, requests))

    def _with_retries(self, attempt_once: Callable[[float, str | None], T]) -> T:
        """Runs one call (given its timeout) with this client's slots, retries, backoff and retry
        budget, and classifies what fails: the same for chat and token-prompt calls."""
        settings = self.settings
        attempts = settings.max_retries + 1
        budget = settings.retry_budget_s
        # Seconds this call has used of its retry budget: each try as measured (from when it has
        # a slot), each wait between tries as asked of `sleep` (so an injected sleep counts too).
        spent = 0.0
        start = self.replicas.start()
        for attempt in range(attempts):
            url = self.replicas.url(start, attempt)  # a retry goes to the next replica
            if attempt:
                self.replicas.retried(url)
            try:
                with self._slots:
                    began = time.monotonic()
                    try:
                        # No try may run past the budget either.
                        return attempt_once(min(settings.timeout_s, budget - spent), url)
                    finally:
                        spent += time.monotonic() - began
            except EmptyResponse as exc:
                self.replicas.failed(url)
                problem: Exception = exc
            except Exception as exc:
                name = type(exc).__name__
                if name in USER_FIXABLE:
                    raise LabError(
                        f"{self.model} refused the request: {name}: {_short(exc)}",
                        where=f"model {self.model}",
                        fix="check the model name, base URL and the key variable "
                        f"{settings.api_key_env or '(none set)'}",
                    ) from exc
                if name not in TRANSIENT:
                    raise
                self.replicas.failed(url)
                problem = exc
            if attempt + 1 == attempts:
                break
            # Exponential backoff with jitter so parallel workers don't retry in lockstep; never
            # shorter than the server's Retry-After, when it sends one.
            backoff = settings.backoff_s * 2**attempt * (0.5 + random.random())
            asked = retry_after_s(problem)
            wait = backoff if asked is None else max(asked, backoff)
            left = budget - spent
            if wait >= left:
                if asked is not None and asked >= left:
                    why = (
                        f"the server asked to wait {asked:.1f} s before retrying (Retry-After), "
                        f"more than the {max(left, 0.0):.1f} s left"
                    )
                else:
                    why = f"the next wait of {wait:.1f} s would pass it ({spent:.1f} s spent)"
                raise TransportFailure(
                    f"gave up on {self.model} after {attempt + 1} of {attempts} attempts: "
                    f"retry budget of {budget:g} s (retry_budget_s) — {why}; last error: "
                    f"{type(problem).__name__}: {_short(problem)}",
                    where=f"model {self.model} at {settings.where}",
                    fix=f"raise retry_budget_s (now {budget:g} s) in the endpoint settings, or "
                    "check that the server is up and within its rate limits; re-running resumes "
                    "where the run stopped",
                ) from problem
            self._sleep(wait)
            spent += wait
        raise TransportFailure(
            f"no answer after {attempts} attempts ({type(problem).__name__}: {_short(problem)})",
            where=f"model {self.model} at {settings.where}",
            fix="check that the server is up; re-running resumes where the run stopped",
        )

    def _call(self, request: CompletionRequest, timeout: float, url: str | None) -> Completion:
        import litellm

        kwargs = self._transport(timeout)
        kwargs.update(
            model=self.model,
            messages=[{"role": r, "content": c} for r, c in request.messages],
            max_tokens=request.generation.max_new_tokens,
            temperature=request.generation.temperature,
        )
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
        response = litellm.completion(**kwargs)
        return parse_response(response)

    def _call_prompt(self, batch: PromptBatch, timeout: float, url: str | None) -> TokenCompletion:
        return parse_text_response(self._post_prompts(batch, timeout, url))

    def _call_batch(
        self, batch: PromptBatch, timeout: float, url: str | None
    ) -> list[TokenCompletion | EmptyResponse]:
        response = self._post_prompts(batch, timeout, url)
        answers = parse_choices(response, len(batch.requests))
        if all(isinstance(a, EmptyResponse) for a in answers):
            raise EmptyResponse(f"no readable choice in an answer to {len(answers)} prompts")
        return answers

    def _post_prompts(self, batch: PromptBatch, timeout: float, url: str | None) -> Any:
        import litellm

        model, api_base, api_key = self._text_model(url)
        kwargs = self._transport(timeout)
        kwargs.update(model=model, api_base=api_base, **batch.wire_fields())
        if api_key and "api_key" not in kwargs:
            kwargs["api_key"] = api_key
        return litellm.text_completion(**kwargs)

    def _text_model(self, url: str | None) -> tuple[str, str | None, str | None]:
        """litellm's model string, base URL and key for `/v1/completions` with token ids.

        litellm 1.110.2's text_completion() (main.py) takes a token-id prompt only for the
        openai-style providers ("text-completion-openai", "openai", ...) and refuses it for
        "hosted_vllm" ("Unmapped prompt format"); an "openai/" model whose name is a known chat
        model would be sent to /v1/chat/completions. "text-completion-openai/<name>" goes, for
        either, to the handler litellm uses for hosted_vllm text completions anyway
        (main.py _complete_text_completion_openai -> llms/openai/completion/handler.py), which
        posts to <base>/completions with the prompt as given."""
        import litellm

        provider, _, name = self.model.partition("/")
        if provider not in ("openai", "hosted_vllm", "text-completion-openai") or not name:
            raise LabError(
                f"{self.model} has no token-prompt door: token-id prompts go to an "
                "OpenAI-compatible /v1/completions endpoint",
                where=f"model {self.model}",
                fix="serve the model with vLLM or llama.cpp and name it hosted_vllm/<name> "
                "(or openai/<name>) with its base_url",
            )
        api_base, api_key = url, None
        if provider == "hosted_vllm":
            # Where, and with what key, litellm itself would send a hosted_vllm/ model
            # (HOSTED_VLLM_API_BASE, HOSTED_VLLM_API_KEY); a self-hosted server usually takes
            # none, but the OpenAI client under the text handler insists on one.
            _, _, env_key, env_base = litellm.get_llm_provider(self.model)
            api_base = api_base or env_base
            api_key = env_key or "EMPTY"
            if not api_base:
                raise LabError(
                    f"{self.model} has no base URL",
                    where=f"model {self.model}",
                    fix="set base_url in the endpoint settings (or HOSTED_VLLM_API_BASE)",
                )
        return f"text-completion-openai/{name}", api_base, api_key

    def _transport(self, timeout: float) -> dict[str, Any]:
        """What every call gives litellm besides the request: timeout, retries, the key."""
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
            # _get_openai_client() builds OpenAI(max_retries=...); the text-completion handler,
            # llms/openai/completion/handler.py, does the same); that SDK would otherwise retry
            # twice more on its own (openai/_base_client.py, _should_retry and
            # _calculate_retry_timeout). max_retries=0 says the same again, explicitly.
            # hosted_vllm/ chat goes through litellm's own HTTP handler, which does not retry.
            "num_retries": 0,
            "max_retries": 0,
            "stream": False,  # log-probs with streaming are unreliable in litellm
        }
        if key := self._key():
            kwargs["api_key"] = key
        elif self.settings.urls:
            # Self-hosted servers (vLLM) usually take no key, but the OpenAI client insists on one.
            kwargs["api_key"] = "EMPTY"
        return kwargs

    def _key(self) -> str | None:
        name = self.settings.api_key_env
        if not name:
            return None
        value = os.environ.get(name)
        if not value:
            raise LabError(
                f"environment variable {name} is not set",
                where=f"model {self.model}",
                fix=f"export {name}=<your key> before running",
            )
        return value


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text[:300]
