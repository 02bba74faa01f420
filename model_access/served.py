"""The lab's second door to models: served models (API providers and OpenAI-compatible servers
such as vLLM or llama.cpp). Two request types — a chat CompletionRequest, sent through litellm
(model_access/served_chat_call.py), and a TokenPromptRequest whose prompt is token ids, sent to
/v1/completions by a lean pooled HTTP transport (model_access/completions_http.py), as lists of
up to prompts_per_request prompts (model_access/prompt_batches.py) — and one client with a
concurrency limit, timeouts and retries with backoff shared by both
(model_access/served_retries.py). Keys are read from the environment at call time and never
stored.

Transport settings (base URL, key variable, timeout, retries, concurrency) are the client's
EndpointSettings; what determines a result lives on the request — only the latter belongs in
cache keys."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from diarylab.model_access.completions import (
    Alternative,
    Completion,
    CompletionRequest,
    EmptyResponse,
    TokenLogprob,
)
from diarylab.model_access.completions_http import CompletionsHTTP, route
from diarylab.model_access.prompt_batches import PromptBatch, answer_all, batches, parse_choices
from diarylab.model_access.replicas import Replicas
from diarylab.model_access.retry_after import retry_after_s
from diarylab.model_access.served_chat_call import chat_once, endpoint_key
from diarylab.model_access.served_retries import TransportFailure, with_retries
from diarylab.model_access.settings import EndpointSettings
from diarylab.model_access.token_prompts import (
    TokenCompletion,
    TokenPromptRequest,
    parse_text_response,
)

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
        self._http = CompletionsHTTP(self.settings.concurrency)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def complete(self, request: CompletionRequest) -> Completion:
        return self._with_retries(
            lambda timeout, url: chat_once(self.model, self.settings, request, timeout, url)
        )

    def complete_prompt(self, request: TokenPromptRequest) -> TokenCompletion:
        """One `/v1/completions` call with the prompt as token ids (see token_prompts)."""
        batch = PromptBatch((0,), (request,))
        return self._with_retries(
            lambda timeout, url: parse_text_response(self._post_prompts(batch, timeout, url))
        )

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
        size = self.settings.prompts_per_request
        groups = batches(requests, size)
        answers, again = answer_all(
            requests, size, self._send_batch, self.complete_prompt, self._map
        )
        return answers, len(groups) + again

    def list_answer(
        self, requests: Sequence[TokenPromptRequest]
    ) -> list[TokenCompletion | EmptyResponse]:
        """Equal requests sent as one list whatever prompts_per_request says, each choice as
        parsed (EmptyResponse where missing or unreadable): the probe's check that the server
        answers lists; a refusal is raised as any failure is."""
        batch = PromptBatch(tuple(range(len(requests))), tuple(requests))
        return self._with_retries(
            lambda timeout, url: parse_choices(
                self._post_prompts(batch, timeout, url), len(requests)
            )
        )

    def _send_batch(self, batch: PromptBatch) -> list[TokenCompletion | EmptyResponse]:
        if len(batch.requests) == 1:
            return [self.complete_prompt(batch.requests[0])]
        return self._with_retries(lambda timeout, url: self._call_batch(batch, timeout, url))

    def _map(self, call: Callable[[R], T], requests: Sequence[R]) -> list[T]:
        if not requests:
            return []
        if len(requests) == 1:
            return [call(requests[0])]
        # One pool for the client's life: the mapped calls never map again themselves, so they
        # cannot wait on their own pool; starting threads per call cost more than the request.
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.settings.concurrency, thread_name_prefix="served"
                )
            pool = self._pool
        return list(pool.map(call, requests))

    def _with_retries(self, attempt_once: Callable[[float, str | None], T]) -> T:
        return with_retries(
            self.model, self.settings, self._slots, self.replicas, self._sleep, attempt_once
        )

    def _call_batch(
        self, batch: PromptBatch, timeout: float, url: str | None
    ) -> list[TokenCompletion | EmptyResponse]:
        answers = parse_choices(self._post_prompts(batch, timeout, url), len(batch.requests))
        if all(isinstance(a, EmptyResponse) for a in answers):
            raise EmptyResponse(f"no readable choice in an answer to {len(answers)} prompts")
        return answers

    def _post_prompts(self, batch: PromptBatch, timeout: float, url: str | None) -> Any:
        name, base, provider_key = route(self.model, url)
        key = endpoint_key(self.model, self.settings) or provider_key
        fields = batch.wire_fields()
        body = {"model": name, **fields.pop("extra_body", {}), **fields}
        return self._http.post(base, body, key, timeout)
