"""Chat readings of a served judge without its tokenizer (APIs that only offer chat): never
exact, always with an honest coverage.

The prefill goes without its trailing space: templates that trim and mistral_common strip it
anyway, and a prompt ending in a space the model never saw there is a prompt it was not trained
on. The judge then writes the space itself, so the trie accepts a space (alone or before digits)
at its root (rubric/judging/expected.py). `return_tokens_as_token_ids` is always sent, false unless
the
tokenizer is known, so a server started with --return-tokens-as-token-ids still prints text.
Alternatives that print alike are distinct tokens: their probabilities add, none is dropped.

Multi-token numbers: the first request's generated tokens already show the greedy path. Every
other node whose probability reaches `expand_floor` is read by prefilling the text written so
far ("Score: 8"). Nodes left unread count as zero: lower coverage, reported as such."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.model_access.completions import (
    Alternative,
    Completion,
    CompletionRequest,
    TokenLogprob,
)
from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import GenerationSettings
from diarylab.rubric.judging.expected import (
    ALL_NODE_TEXTS,
    LOG_ZERO,
    SPACE,
    NodeReading,
    ends_number,
    is_child_piece,
    logsumexp,
    number_of,
    path_masses,
)
from diarylab.rubric.judging.number_reading import number_reading
from diarylab.rubric.judging.vocab import VocabFacts, is_byte_level, token_text
from diarylab.rubric.judging.yes_no import answer_of, yes_no_reading
from diarylab.rubric.prompts import JudgePrompt

TOKEN_ID = re.compile(r"^token_id:(\d+)$")
MAX_TOKENS = 5  # a space, three digits and the token after


@dataclass(frozen=True)
class ChatSettings:
    top_logprobs: int = 20
    prefill: bool = True
    expand_floor: float = 1e-4


@dataclass(frozen=True)
class Seen:
    text: str
    logprob: float


class ChatReader:
    def __init__(
        self,
        client: ServedClient,
        settings: ChatSettings,
        *,
        tokenizer: Any | None = None,
        facts: VocabFacts | None = None,
    ) -> None:
        self.client = client
        self.settings = settings
        self.tokenizer = tokenizer
        self.facts = facts
        self._byte_level = facts is not None and is_byte_level(facts.raw_tokens)
        self.requests = 0

    def request(self, prompt: JudgePrompt, written: str, *, max_tokens: int) -> CompletionRequest:
        if prompt.text is not None:
            raise LabError(
                "a served judge without its tokenizer reads a chat, not raw prompt text",
                where="served judge",
                fix="give the judge's tokenizer (exact reading), or pass the prompt as a message",
            )
        messages = [{"role": r, "content": c} for r, c in prompt.messages]
        extra: dict[str, Any] = {}
        if self.client.settings.base_url:
            # A server of one's own (vLLM): say it explicitly, or a server started with
            # --return-tokens-as-token-ids prints ids this reader cannot map. A provider's API
            # (no base URL) would refuse a field it does not know.
            extra["return_tokens_as_token_ids"] = self.facts is not None
        prefill = (prompt.prefill.rstrip() + written) if self.settings.prefill else ""
        if prefill:
            messages.append({"role": "assistant", "content": prefill})
            extra.update(continue_final_message=True, add_generation_prompt=False)
        return CompletionRequest.of(
            messages,
            generation=GenerationSettings(max_new_tokens=max_tokens, temperature=0.0),
            top_logprobs=self.settings.top_logprobs,
            extra_body=extra,
        )

    def complete(self, requests: list[CompletionRequest]) -> list[Completion]:
        self.requests += len(requests)
        return self.client.complete_many(requests)

    def text_of(self, text: str, token_id: int | None) -> str:
        """What a returned token writes: from the raw vocabulary where its id is known."""
        match = TOKEN_ID.match(text)
        if match and token_id is None:
            token_id = int(match.group(1))
        facts = self.facts
        if token_id is not None and facts is not None and 0 <= token_id < len(facts.raw_tokens):
            return token_text(facts.raw_tokens[token_id], byte_level=self._byte_level)
        if match:
            raise LabError(
                "the server printed tokens as token_id:N, which cannot be read without the "
                "judge's tokenizer",
                where=f"judge {self.client.model}",
                fix="give the judge's tokenizer, or start vLLM without "
                "--return-tokens-as-token-ids",
            )
        return text

    def positions(self, completion: Completion) -> list[list[Seen]]:
        if not completion.logprobs or not completion.logprobs[0].top:
            raise LabError(
                "the judge's response has no top log-probabilities",
                where=f"judge {self.client.model}",
                fix="serve the judge where log-probabilities are returned (vLLM: the default, "
                "--max-logprobs ≥ 20; litellm's mistral/ provider drops them: use hosted_vllm/)",
            )
        return [self._seen(token) for token in completion.logprobs]

    def _seen(self, token: TokenLogprob) -> list[Seen]:
        """The alternatives at one position, each token once: the sampled token is added only
        where it is not among them (by id, or by text and log-prob where ids are unknown)."""
        alts: list[Alternative] = list(token.top)
        sampled = Alternative(token.token, token.logprob, token.token_id)
        if not any(_same(sampled, a) for a in alts):
            alts.append(sampled)
        return [Seen(self.text_of(a.text, a.token_id), max(a.logprob, LOG_ZERO)) for a in alts]

    # ------------------------------------------------------------------ 0–100
    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        observed: dict[str, list[Seen]] = {}
        frontier = [""]
        first: list[str] = []
        while frontier:
            requests = [
                self.request(prompt, written, max_tokens=MAX_TOKENS - len(written))
                for written in frontier
            ]
            for written, completion in zip(frontier, self.complete(requests), strict=True):
                if not written:
                    first = [self.text_of(t.token, t.token_id) for t in completion.logprobs or ()]
                self._absorb(written, completion, observed)
            if not self.settings.prefill:
                break
            masses = path_masses(_nodes(observed))
            # " " alone cannot be read by prefill: the server would strip the space again.
            frontier = sorted(
                t
                for t, m in masses.items()
                if t in ALL_NODE_TEXTS
                and t != SPACE
                and t not in observed
                and m >= self.settings.expand_floor
            )
        nodes = _nodes(observed)
        masses = path_masses(nodes)
        unread = sum(m for t, m in masses.items() if t and t not in observed)
        record = {
            "backend": "served",
            "mode": "top-k",
            "model": self.client.model,
            "requests": self.requests,
            "top_logprobs": self.settings.top_logprobs,
            "skipped_mass": unread,
            "first_tokens": first,
            "exact": False,
        }
        return dict(number_reading(nodes.values(), record=record).record)

    def _absorb(
        self, written: str, completion: Completion, observed: dict[str, list[Seen]]
    ) -> None:
        """Record every position of the generated path that is still inside the trie."""
        node = written
        for seen, token in zip(self.positions(completion), completion.logprobs or (), strict=True):
            observed.setdefault(node, seen)
            chosen = self.text_of(token.token, token.token_id)
            if not is_child_piece(node, chosen):
                break
            node += chosen

    # ------------------------------------------------------------------ yes/no
    def yes_no_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        words = prompt.answers
        [completion] = self.complete([self.request(prompt, "", max_tokens=1)])
        yes: dict[str, float] = {}
        no: dict[str, float] = {}
        for seen in self.positions(completion)[0]:
            answer = answer_of(seen.text, words)
            if answer is not None:
                side = yes if answer == "yes" else no
                # Keyed apart: two tokens that print alike are two answers' worth of mass.
                key, copy = seen.text, 1
                while key in side:
                    copy += 1
                    key = f"{seen.text}#{copy}"
                side[key] = seen.logprob
        record = {
            "backend": "served",
            "mode": "top-k",
            "model": self.client.model,
            "requests": self.requests,
            "exact": False,
        }
        return dict(yes_no_reading(yes, no, record=record).record)


def _same(a: Alternative, b: Alternative) -> bool:
    if a.token_id is not None and b.token_id is not None:
        return a.token_id == b.token_id
    return a.text == b.text and a.logprob == b.logprob


def _nodes(observed: dict[str, list[Seen]]) -> dict[str, NodeReading]:
    out = {}
    for prefix, seen in observed.items():
        children: dict[str, list[float]] = {}
        for s in seen:
            if is_child_piece(prefix, s.text):
                children.setdefault(s.text, []).append(s.logprob)
        end = None
        if number_of(prefix) is not None:
            # A lower bound: only the visible tokens that end the number.
            end = logsumexp(s.logprob for s in seen if ends_number(s.text))
        out[prefix] = NodeReading(
            prefix=prefix,
            children={k: logsumexp(v) for k, v in children.items()},
            end_logprob=end,
            end_exact=False,
        )
    return out
