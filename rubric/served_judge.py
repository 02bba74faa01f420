"""A judge behind a served endpoint (vLLM or any OpenAI-compatible server), via model_access.served.

Each request asks for log-probabilities at temperature 0, never streamed. The prompt is a chat
whose last message is the assistant prefill ("Score: "), sent with vLLM's
continue_final_message=true / add_generation_prompt=false so the answer is the next token.

Two ways to see the distribution:
- top-k (any server): the top_logprobs (≤ 20) at each position. P(end) is then a lower bound
  (visible tokens that do not continue the number), so coverage is honest, never inflated.
- explicit token ids (vLLM with `logprob_token_ids`, given the judge's tokenizer): the server
  returns the log-probability of every token that can continue a number (and of every yes/no
  variant), so readings are exact, the same as a local model's. Tokens come back as
  "token_id:N" (vLLM's return_tokens_as_token_ids) and are mapped back through the tokenizer.

Multi-token numbers: the first request's generated tokens already show the greedy path
(max_tokens covers up to three digits and the token after). Every other node whose probability
reaches `expand_floor` is queried by prefilling the digits written so far ("Score: 8"), where the
server supports prefill. Nodes left unqueried count as zero: lower coverage, reported as such."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from foundation.errors import LabError
from model_access.served import Completion, CompletionRequest, ServedClient
from model_access.settings import GenerationSettings
from rubric.expected import (
    ALGORITHM,
    LOG_ZERO,
    NODE_TEXTS,
    NUMBER_TEXTS,
    NodeReading,
    continues_number,
    is_child_piece,
    logsumexp,
    number_reading,
    path_masses,
    prob,
    safe_log,
)
from rubric.judge_base import Judge, Question
from rubric.prompts import JudgePrompt
from rubric.vocab import VocabFacts, answer_ids, vocab_facts
from rubric.yes_no import answer_of, yes_no_reading

TOKEN_ID = re.compile(r"^token_id:(\d+)$")
MAX_DIGITS = 3


@dataclass(frozen=True)
class Entry:
    text: str
    token_id: int | None
    logprob: float


class ServedJudge(Judge):
    def __init__(
        self,
        client: ServedClient,
        *,
        tokenizer: Any | None = None,
        prefill: bool = True,
        top_logprobs: int = 20,
        expand_floor: float = 1e-4,
    ) -> None:
        if not 1 <= top_logprobs <= 20:
            raise LabError(f"top_logprobs={top_logprobs}", where="served judge", fix="use 1..20")
        self.client = client
        self.model = client.model
        self.tokenizer = tokenizer
        self.prefill = prefill
        self.top_logprobs = top_logprobs
        self.expand_floor = expand_floor
        self._facts: VocabFacts | None = None

    @property
    def batch_size(self) -> int:
        return self.client.settings.concurrency

    def records(self, question: Question, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
        """Prompts in parallel, as many at once as the endpoint's concurrency allows (the
        client's semaphore holds the same number, so no request waits on a free slot)."""
        one = self.number_record if question == "number" else self.yes_no_record
        if len(prompts) <= 1:
            return [one(p) for p in prompts]
        with ThreadPoolExecutor(max_workers=self.client.settings.concurrency) as pool:
            return list(pool.map(one, prompts))

    def yes_no_records(self, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
        return self.records("yes_no", prompts)

    @property
    def facts(self) -> VocabFacts | None:
        if self.tokenizer is not None and self._facts is None:
            self._facts = vocab_facts(self.tokenizer)
        return self._facts

    def identity(self) -> dict[str, Any]:
        tokenizer_sha = None
        if self.tokenizer is not None:
            vocab = json.dumps(sorted(self.tokenizer.get_vocab().items()))
            tokenizer_sha = hashlib.sha256(vocab.encode()).hexdigest()
        return {
            "kind": "served",
            "model": self.model,
            "token_ids": tokenizer_sha is not None,
            "tokenizer_sha256": tokenizer_sha,
            "prefill": self.prefill,
            "top_logprobs": self.top_logprobs,
            "expand_floor": self.expand_floor,
            "algorithm": ALGORITHM,
        }

    # ----------------------------------------------------------------- requests
    def _request(
        self, prompt: JudgePrompt, written: str, *, max_tokens: int, ids: Sequence[int]
    ) -> CompletionRequest:
        if prompt.text is not None:
            raise LabError(
                "a served judge reads a chat, not raw prompt text",
                where="served judge",
                fix="pass the prompt as a message (diarylab judge read --message-file)",
            )
        messages = [{"role": r, "content": c} for r, c in prompt.messages]
        extra: dict[str, Any] = {}
        prefill = prompt.prefill + written if self.prefill else ""
        if prefill:
            messages.append({"role": "assistant", "content": prefill})
            extra.update(continue_final_message=True, add_generation_prompt=False)
        if ids:
            extra.update(logprob_token_ids=list(ids), return_tokens_as_token_ids=True)
        return CompletionRequest.of(
            messages,
            generation=GenerationSettings(max_new_tokens=max_tokens, temperature=0.0),
            top_logprobs=self.top_logprobs,
            extra_body=extra,
        )

    def _complete(self, requests: list[CompletionRequest]) -> list[Completion]:
        try:
            return self.client.complete_many(requests)
        except LabError as exc:
            if self.facts is not None and "refused" in str(exc):
                raise LabError(
                    f"{exc}",
                    where="served judge",
                    fix="this server may not accept logprob_token_ids (vLLM added it in 2026); "
                    "drop the judge tokenizer to read the top-20 instead",
                ) from exc
            raise

    def _positions(self, completion: Completion) -> list[list[Entry]]:
        if not completion.logprobs:
            raise LabError(
                "the judge's response has no log-probabilities",
                where=f"judge {self.model}",
                fix="serve the judge where log-probabilities are returned (vLLM: the default, "
                "--max-logprobs ≥ 20; litellm's mistral/ provider drops them: use hosted_vllm/)",
            )
        positions = []
        for token in completion.logprobs:
            entries: dict[Any, Entry] = {}
            for text, logprob in ((token.token, token.logprob), *token.top):
                entry = self._entry(text, logprob)
                entries[entry.token_id if entry.token_id is not None else entry.text] = entry
            positions.append(list(entries.values()))
        if not completion.logprobs[0].top:
            raise LabError(
                "the judge's response has no top log-probabilities",
                where=f"judge {self.model}",
                fix="the server must honour top_logprobs (vLLM: --max-logprobs ≥ 20)",
            )
        return positions

    def _entry(self, text: str, logprob: float) -> Entry:
        match = TOKEN_ID.match(text)
        if match and self.tokenizer is not None:
            token_id = int(match.group(1))
            return Entry(str(self.tokenizer.decode([token_id])), token_id, logprob)
        return Entry(text, None, logprob)

    # ----------------------------------------------------------------- 0–100
    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        facts = self.facts
        ids = sorted(facts.continuation_ids) if facts is not None else []
        observed: dict[str, list[Entry]] = {}
        frontier, calls = [""], 0
        while frontier:
            requests = [
                self._request(prompt, s, max_tokens=MAX_DIGITS + 1 - len(s), ids=ids)
                for s in frontier
            ]
            calls += len(requests)
            for written, completion in zip(frontier, self._complete(requests), strict=True):
                self._absorb(written, completion, observed)
            if not self.prefill:
                break
            masses = path_masses(self._nodes(observed))
            frontier = sorted(
                t
                for t, m in masses.items()
                if t in NODE_TEXTS and t not in observed and m >= self.expand_floor
            )
        nodes = self._nodes(observed)
        masses = path_masses(nodes)
        unqueried = sum(m for t, m in masses.items() if t and t not in observed)
        record = {
            "backend": "served",
            "model": self.model,
            "calls": calls,
            "token_ids": facts is not None,
            "unqueried_mass": unqueried,
            "exact": unqueried == 0 and all(n.end_exact for n in nodes.values()),
        }
        return dict(number_reading(nodes.values(), record=record).record)

    def _absorb(
        self, written: str, completion: Completion, observed: dict[str, list[Entry]]
    ) -> None:
        """Record every position of the generated path that is still inside the trie."""
        node = written
        for position, token in zip(
            self._positions(completion), completion.logprobs or (), strict=True
        ):
            observed.setdefault(node, position)
            chosen = self._entry(token.token, token.logprob).text
            if not is_child_piece(node, chosen):
                break
            node += chosen

    def _nodes(self, observed: dict[str, list[Entry]]) -> dict[str, NodeReading]:
        facts = self.facts
        out = {}
        for prefix, entries in observed.items():
            children: dict[str, list[float]] = {}
            for e in entries:
                if is_child_piece(prefix, e.text):
                    children.setdefault(e.text, []).append(e.logprob)
            # Complete: every token that could continue a number was returned (explicit ids),
            # so the children are all there and P(end) is exact, not a lower bound.
            seen = {e.token_id: e.logprob for e in entries if e.token_id is not None}
            complete = facts is not None and all(i in seen for i in facts.continuation_ids)
            end = None
            if prefix in NUMBER_TEXTS and facts is not None and complete:
                cont = sum(prob(seen[i]) for i in facts.continuation_ids)
                end = safe_log(max(0.0, 1.0 - cont))
            elif prefix in NUMBER_TEXTS:
                end = logsumexp(e.logprob for e in entries if not continues_number(e.text))
            out[prefix] = NodeReading(
                prefix=prefix,
                children={k: logsumexp(v) for k, v in children.items()},
                end_logprob=end,
                end_exact=complete,
            )
        return out

    # ----------------------------------------------------------------- yes/no
    def yes_no_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        facts = self.facts
        words = prompt.answers
        ids = sorted({i for side in answer_ids(facts, words) for i in side}) if facts else []
        [completion] = self._complete([self._request(prompt, "", max_tokens=1, ids=ids)])
        entries = self._positions(completion)[0]
        yes: dict[str, float] = {}
        no: dict[str, float] = {}
        for e in entries:
            answer = answer_of(e.text, words)
            if answer is not None:
                side = yes if answer == "yes" else no
                side[e.text] = logsumexp([side.get(e.text, LOG_ZERO), max(e.logprob, LOG_ZERO)])
        seen = {e.token_id for e in entries}
        exact = facts is not None and all(i in seen for i in ids)
        record = {"backend": "served", "model": self.model, "calls": 1, "exact": exact}
        return dict(yes_no_reading(yes, no, record=record).record)
