"""How an exact served reading asks a judge (rubric/judging/served_exact.py reads what comes back):
every
query is one /v1/completions prompt of token ids with max_tokens = 1 and the ids it needs asked
for explicitly (vLLM's `logprob_token_ids`, at most `ids_per_request` per request; answers merged
by id). The server must say it read exactly the tokens sent (`return_token_ids`), and a reading
is exact only where every needed id came back — exactness is what came back, never what was
asked: a server that ignores the ids (llama.cpp) answers with its top-k instead, which is exact
only when the top-k is the whole vocabulary.

Requests go in two rounds per batch of nodes: each node's first block of ids, then the blocks of
ids that neither came back nor were asked yet, so a server that returns everything at once
(llama.cpp with a large top_logprobs) is asked once per node, and one that returns exactly what
was asked (vLLM) gets every block. Each round's prompts go to the client together, which sends
them as lists (prompts_per_request)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.model_access.completions import EmptyResponse
from diarylab.model_access.served import ServedClient
from diarylab.model_access.token_prompts import TokenCompletion, TokenPromptRequest
from diarylab.rubric.judging.expected import LOG_ZERO
from diarylab.rubric.judging.judge_render import RenderedPrompt
from diarylab.rubric.judging.vocab import VocabFacts

EXACT_EXTRA = json.dumps(
    {"return_token_ids": True, "return_tokens_as_token_ids": True}, sort_keys=True
)
TAIL_CHARS = 160  # how much of the rendered prompt a record keeps, to diagnose a wrong reading


@dataclass(frozen=True)
class ExactSettings:
    ids_per_request: int = 128  # vLLM's cap on logprob_token_ids
    top_logprobs: int = 0  # a server that ignores ids answers its top-k instead (llama.cpp)
    node_cutoff: float = 0.0  # nodes reached with less probability are not read
    reasoning_effort: str = "low"  # harmony judges (gpt-oss) only
    max_error: float = 0.0  # points; > 0: a bounded reading (rubric/judging/bounded_walk.py)
    scout_logprobs: int = (
        20  # bounded: a node needing more ids than one request is read top-k first
    )


@dataclass
class Asked:
    """What one node's requests asked for and what came back, merged by token id."""

    seq: tuple[int, ...]
    needed: tuple[int, ...]
    scout: int = 0  # > 0: one top-k request of this many instead of ids (a bounded reading)
    lookup: dict[int, float] = field(default_factory=dict)
    asked: set[int] = field(default_factory=set)
    sent: int = 0  # prompts sent for it
    http: float = 0.0  # its share of the HTTP requests they went in (a list is shared evenly)

    @property
    def missing(self) -> list[int]:
        return [i for i in self.needed if i not in self.lookup]


class ExactAsker:
    def __init__(
        self, client: ServedClient, tokenizer: Any, facts: VocabFacts, settings: ExactSettings
    ) -> None:
        if settings.ids_per_request < 1:
            raise LabError("ids_per_request must be at least 1", where="served judge")
        self.client = client
        self.tokenizer = tokenizer
        self.facts = facts
        self.settings = settings
        self.requests = 0  # prompts read (one completion each)
        self.http_requests = 0  # requests sent (a list of prompts is one)
        self.fingerprints: set[str] = set()

    # ------------------------------------------------------------------ transport
    def _request(self, seq: Sequence[int], ids: Sequence[int], top: int = 0) -> TokenPromptRequest:
        # Token ids back ("token_id:N") so two tokens that print alike stay apart, and the
        # prompt's ids back so what the server read can be checked.
        return TokenPromptRequest(
            prompt_ids=tuple(seq),
            max_tokens=1,
            top_logprobs=max(top, self.settings.top_logprobs),
            logprob_token_ids=tuple(ids),
            extra_body=EXACT_EXTRA,
        )

    def _send(self, requests: list[TokenPromptRequest]) -> list[TokenCompletion]:
        self.requests += len(requests)
        answers, calls = self.client.complete_prompts_counted(requests)
        self.http_requests += calls
        self.fingerprints.update(a.system_fingerprint for a in answers if a.system_fingerprint)
        for request, answer in zip(requests, answers, strict=True):
            seen = answer.prompt_token_ids
            if seen is not None and tuple(seen) != request.prompt_ids:
                raise LabError(
                    f"the server read {len(seen)} prompt tokens, not the {len(request.prompt_ids)} "
                    "sent (it re-tokenized or added tokens)",
                    where=f"judge {self.client.model}",
                    fix="serve the judge with vLLM's /v1/completions, which takes prompt token "
                    "ids as they are",
                )
        return answers

    def check_lists(self, item: Asked) -> None:
        """That the server answers a list of token prompts one choice per prompt, in order (what
        prompts_per_request > 1 relies on): `item`'s prompt and the same without its last token
        go as one list; both choices must come back, readable, each echoing its own prompt. A
        server that refuses lists, or answers only one choice, fails the probe here, before a
        run depends on it."""
        if self.client.settings.prompts_per_request < 2 or len(item.seq) < 2:
            return
        size = self.settings.ids_per_request
        requests = [self._request(seq, item.needed[:size]) for seq in (item.seq, item.seq[:-1])]
        self.requests += len(requests)
        self.http_requests += 1
        fix = (
            "set prompts_per_request = 1 in the judge's endpoint settings (one prompt per "
            "request), or serve the judge with vLLM, which answers lists"
        )
        where = f"judge {self.client.model}"
        try:
            answers = self.client.list_answer(requests)
        except LabError as exc:
            raise LabError(
                f"the server failed a list of {len(requests)} token prompts in one request: {exc}",
                where=where,
                fix=fix,
            ) from exc
        for k, (request, answer) in enumerate(zip(requests, answers, strict=True)):
            if isinstance(answer, EmptyResponse):
                problem = str(answer)
            elif answer.prompt_token_ids not in (None, request.prompt_ids):
                problem = f"choice {k} echoes another prompt than the {k}th sent"
            else:
                continue
            raise LabError(
                f"the server does not answer a list of prompts one choice each: {problem}",
                where=where,
                fix=fix,
            )

    def ask(self, items: list[Asked]) -> None:
        """Fill every item's lookup with the log-probabilities the server returns by id."""
        size = self.settings.ids_per_request
        first = [(item, item.needed[:size]) for item in items]
        self._round(first)
        rest = []
        for item in items:
            if item.scout:
                continue
            todo = [i for i in item.needed if i not in item.lookup and i not in item.asked]
            rest += [(item, tuple(todo[k : k + size])) for k in range(0, len(todo), size)]
        self._round(rest)

    def _round(self, blocks: list[tuple[Asked, tuple[int, ...]]]) -> None:
        if not blocks:
            return
        before = self.http_requests
        answers = self._send([self._request(item.seq, ids, item.scout) for item, ids in blocks])
        share = (self.http_requests - before) / len(blocks)
        for (item, ids), answer in zip(blocks, answers, strict=True):
            item.asked.update(ids)
            item.sent += 1
            item.http += share
            if not answer.positions:
                raise LabError(
                    "the judge's response has no log-probabilities",
                    where=f"judge {self.client.model}",
                    fix="serve the judge where log-probabilities are returned; a server that "
                    "ignores logprob_token_ids (llama.cpp) answers only its top-k: set "
                    "top_logprobs to the vocabulary size for an exact reading",
                )
            position = answer.positions[0]
            for alt in position.top:
                if alt.token_id is not None:
                    item.lookup[alt.token_id] = max(alt.logprob, LOG_ZERO)
            if position.token_id is not None:
                item.lookup.setdefault(position.token_id, max(position.logprob, LOG_ZERO))

    def _about(
        self,
        rendered: RenderedPrompt,
        prompt_tokens: int,
        counts: tuple[int, float] | None = None,
    ) -> dict[str, Any]:
        """What every exact record says of how it was read; `counts`: its prompts and share of
        HTTP requests where the reader read others with it (else the reader's own counts)."""
        requests, http = counts if counts is not None else (self.requests, self.http_requests)
        return {
            "backend": "served",
            "mode": "exact",
            "model": self.client.model,
            "form": rendered.form,
            "reasoning_effort": rendered.reasoning_effort,
            "prompt_tokens": prompt_tokens,
            "prompt_tail": rendered.text[-TAIL_CHARS:],
            "requests": requests,
            "http_requests": round(http, 6) if counts is not None else http,
            # what the server says it is (vLLM: version and a hash of its whole configuration,
            # dtype included); None where it says nothing
            "system_fingerprint": ",".join(sorted(self.fingerprints)) or None,
        }
