"""Many token prompts in one `/v1/completions` request: the completions API takes a list of
token-id prompts and answers one choice per prompt. vLLM 0.32.0/0.33.0
(vllm/entrypoints/openai/completion/serving.py, create_completion and
request_output_to_completion_response) schedules every prompt of the list with the request's one
set of sampling parameters, collects the results by prompt position and writes the choices in
that order with `index` = the choice's position (n = 1); usage sums over the prompts.

So only requests equal in everything but their prompt can share a list (`batch_key`), and each
answer is matched to its prompt by the choice's index, never by order of arrival. A choice that
is missing or unreadable is a transport problem of that prompt alone: it is asked again on its
own, and the others' answers are kept."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from diarylab.model_access.completions import EmptyResponse, field_of, usage_of
from diarylab.model_access.token_prompts import TokenCompletion, TokenPromptRequest, parse_choice


@dataclass(frozen=True)
class PromptBatch:
    """Requests that differ only in their prompt, in the order their answers are wanted."""

    positions: tuple[int, ...]  # where each request stood in the caller's list
    requests: tuple[TokenPromptRequest, ...]

    def wire_fields(self) -> dict[str, Any]:
        fields = self.requests[0].wire_fields()
        if len(self.requests) > 1:
            fields["prompt"] = [list(r.prompt_ids) for r in self.requests]
        return fields


def batch_key(request: TokenPromptRequest) -> tuple[Any, ...]:
    return (
        request.max_tokens,
        request.top_logprobs,
        request.logprob_token_ids,
        request.extra_body,
    )


def batches(requests: Sequence[TokenPromptRequest], size: int) -> list[PromptBatch]:
    """Group equal requests (first appearance order), at most `size` prompts a batch."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, request in enumerate(requests):
        groups.setdefault(batch_key(request), []).append(i)
    out = []
    for members in groups.values():
        for k in range(0, len(members), max(1, size)):
            chunk = tuple(members[k : k + size])
            out.append(PromptBatch(chunk, tuple(requests[i] for i in chunk)))
    return out


def parse_choices(response: Any, count: int) -> list[TokenCompletion | EmptyResponse]:
    """One answer per prompt of a list request, by choice index (EmptyResponse where a choice
    is missing or unreadable)."""
    choices = field_of(response, "choices") or []
    by_index: dict[int, Any] = {}
    for position, choice in enumerate(choices):
        index = field_of(choice, "index")
        by_index[index if isinstance(index, int) else position] = choice
    model = field_of(response, "model")
    fingerprint = field_of(response, "system_fingerprint")
    usage = usage_of(field_of(response, "usage")) if count == 1 else {}
    out: list[TokenCompletion | EmptyResponse] = []
    for i in range(count):
        choice = by_index.get(i)
        if choice is None:
            out.append(EmptyResponse(f"no choice {i} in an answer to {count} prompts"))
            continue
        try:
            out.append(parse_choice(choice, model, usage, fingerprint))
        except EmptyResponse as exc:
            out.append(exc)
    return out


def answer_all(
    requests: Sequence[TokenPromptRequest],
    size: int,
    send: Callable[[PromptBatch], list[TokenCompletion | EmptyResponse]],
    send_one: Callable[[TokenPromptRequest], TokenCompletion],
    run: Callable[[Callable[[PromptBatch], Any], list[PromptBatch]], list[Any]],
) -> tuple[list[TokenCompletion], int]:
    """Every request's answer in order, and how many prompts had to be asked again alone.
    `send` makes one (retried) list request, `send_one` one single-prompt request, `run` maps
    over batches concurrently."""
    out: list[TokenCompletion | None] = [None] * len(requests)
    again: list[int] = []
    for batch, answers in zip(groups := batches(requests, size), run(send, groups), strict=True):
        for position, answer in zip(batch.positions, answers, strict=True):
            if isinstance(answer, TokenCompletion):
                out[position] = answer
            else:
                again.append(position)
    for position in again:
        out[position] = send_one(requests[position])
    return [a for a in out if a is not None], len(again)
