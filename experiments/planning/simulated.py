"""A stated judge behind an in-process server, so `diarylab plan` counts a reading's prompts and
HTTP requests with the reader a run uses (rubric/judging/served_exact.py ExactReader), not a
formula.

The server answers /v1/completions token prompts the way vLLM 0.32.0 does, as far as the reader
looks (the same behaviour testing/fake_judge_server.py cites: vllm/entrypoints/openai/completion/
serving.py and vllm/logprobs.py): with `logprob_token_ids` every asked id comes back with the
sampled (greedy) token first; without them the top `top_logprobs`; the prompt ids are echoed;
a list of prompts is one HTTP request per prompts_per_request equal prompts
(model_access/prompt_batches.py, as ServedClient.complete_prompts_counted counts it).

The judge it serves is stated, not measured: CONFIDENT puts most of its mass on one number
along that number's own token path, a little on a second, and spreads the rest evenly over the
whole vocabulary — what a real judge after "Score:" looks like, and what the lab's confident
test judge (testing/confident_judge.py) is built to be. How many prompts a bounded reading takes
depends on the judge, so the plan labels this count an estimate; the exact reading's count is
the trie's, whatever the judge (no likely decimal marks assumed: each adds a follow-up)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import islice

from diarylab.model_access.completions import (
    Alternative,
    Completion,
    CompletionRequest,
    TokenLogprob,
)
from diarylab.model_access.prompt_batches import batches
from diarylab.model_access.settings import EndpointSettings
from diarylab.model_access.token_prompts import TokenCompletion, TokenPromptRequest
from diarylab.rubric.judging.expected import LOG_ZERO, POINT_FLOOR
from diarylab.rubric.judging.number_trie import NumberTrie, TrieNode
from diarylab.rubric.prompts import JudgePrompt

# Share of a confident judge's mass on each number it writes; the rest is spread evenly.
CONFIDENT: Mapping[str, float] = {"72": 0.93, "62": 0.065}
# Where the confident judges of a batch read in step put their mass (confident_at): spread
# over the scale and over one, two and three digits, so the batch's walks part ways.
FAVOURITES = ("72", "15", "88", "40", "100", "55", "5", "95", "30", "64", "80", "22", "47", "9")
MARK_SHARE = 10 * POINT_FLOOR  # a mark the worst case follows up
CHAT_VOCAB = 100_000  # a chat judge's vocabulary, for the even share (its tokenizer is unknown)


def confident_at(k: int) -> Mapping[str, float]:
    """The k-th reading's confident judge in a batch: CONFIDENT's shares on a favourite of its
    own and the number ten below it (k = 0: CONFIDENT itself)."""
    if k == 0:
        return CONFIDENT
    first, second = CONFIDENT.values()
    favourite = FAVOURITES[k % len(FAVOURITES)]
    other = str(int(favourite) - 10) if int(favourite) >= 10 else str(int(favourite) + 10)
    return {favourite: first, other: second}


def variant(prompt: JudgePrompt, k: int) -> JudgePrompt:
    """The k-th of a batch's prompts: the sample with a mark of its own in the first message,
    so each reading has its own prompt ids and its own stated judge (k = 0: the sample). A raw
    prompt is not changed: the batch then reads alike."""
    if k == 0 or not prompt.messages:
        return prompt
    (role, content), *rest = prompt.messages
    return replace(prompt, messages=((role, f"{content} [{k}]"), *rest))


@dataclass(frozen=True)
class StatedJudge:
    """Next-token probabilities after a prompt whose number trie is `trie`."""

    trie: NumberTrie
    vocab_size: int
    end_id: int  # the token a finished number is followed by
    numbers: Mapping[str, float]
    # Worst case: every "."/"," after a number likely enough (POINT_FLOOR) to be followed up.
    marks: tuple[int, ...] = ()

    def distribution(self, after: Sequence[int]) -> dict[int, float]:
        """P(next id) for the ids with more than the even share (every other id has that share,
        spread_share())."""
        node = self._by_ids.get(tuple(after))
        if node is None:
            return {}  # off the trie (after a decimal mark): nothing stands out
        marks = {mark: MARK_SHARE for mark in self.marks} if node.is_number else {}
        through = {
            text: mass
            for text, mass in self.numbers.items()
            if self._path(text)[: len(node.ids)] == node.ids
        }
        total = sum(through.values())
        if total <= 0:
            return marks
        out = dict(marks)
        placed = 1.0 - self.rest() - MARK_SHARE * len(out)
        for text, mass in through.items():
            path = self._path(text)
            nxt = path[len(node.ids)] if len(path) > len(node.ids) else self.end_id
            out[nxt] = out.get(nxt, 0.0) + placed * mass / total
        return out

    def rest(self) -> float:
        return self._rest

    def spread_share(self) -> float:
        return self._spread

    # Worked out once a judge: every logprob of every answer reads them (hundreds of
    # thousands of times in a plan of the full study).
    @cached_property
    def _rest(self) -> float:
        return max(0.0, 1.0 - sum(self.numbers.values()))

    @cached_property
    def _spread(self) -> float:
        return self._rest / self.vocab_size

    @cached_property
    def _by_ids(self) -> dict[tuple[int, ...], TrieNode]:
        return {node.ids: node for node in self.trie.nodes}

    @cached_property
    def _paths(self) -> dict[str, tuple[int, ...]]:
        return {node.text: node.ids for node in self.trie.nodes if node.text in self.numbers}

    def _path(self, text: str) -> tuple[int, ...]:
        return self._paths.get(text, ())

    def logprob(self, dist: Mapping[int, float], token: int) -> float:
        p = dist.get(token, 0.0) + self.spread_share()
        return max(math.log(p), LOG_ZERO) if p > 0 else LOG_ZERO


class StatedServer:
    """Stands where a ServedClient stands for ExactReader: model, settings and
    complete_prompts_counted. Counts every prompt and HTTP request it answers. Several stated
    judges: one per prompt of a batch read in step, each answering the prompts that begin with
    its trie's prompt ids."""

    def __init__(
        self,
        judge: StatedJudge | Sequence[StatedJudge],
        settings: EndpointSettings,
        model: str,
    ) -> None:
        self.judges = (judge,) if isinstance(judge, StatedJudge) else tuple(judge)
        self.settings = settings
        self.model = model
        self.prompts = 0
        self.http_requests = 0

    def complete_prompts_counted(
        self, requests: Sequence[TokenPromptRequest]
    ) -> tuple[list[TokenCompletion], int]:
        if not requests:
            return [], 0
        calls = len(batches(requests, self.settings.prompts_per_request))
        self.prompts += len(requests)
        self.http_requests += calls
        return [self._answer(r) for r in requests], calls

    def list_answer(self, requests: Sequence[TokenPromptRequest]) -> list[TokenCompletion]:
        """The probe's list of two prompts in one request (ExactAsker.check_lists)."""
        self.prompts += len(requests)
        self.http_requests += 1
        return [self._answer(r) for r in requests]

    def _judge_for(self, ids: Sequence[int]) -> StatedJudge:
        for judge in self.judges:
            start = len(judge.trie.prompt_ids)
            if tuple(ids[:start]) == tuple(judge.trie.prompt_ids):
                return judge
        return self.judges[0]

    def _answer(self, request: TokenPromptRequest) -> TokenCompletion:
        judge = self._judge_for(request.prompt_ids)
        start = len(judge.trie.prompt_ids)
        dist = judge.distribution(request.prompt_ids[start:])
        greedy = max(dist, key=lambda i: dist[i]) if dist else judge.end_id
        if request.logprob_token_ids:
            asked = list(dict.fromkeys([greedy, *request.logprob_token_ids]))
        else:
            want = max(1, request.top_logprobs)
            ranked = sorted(dist, key=lambda i: -dist[i])[:want]
            # the rest of the top-k from the vocabulary, taken lazily (not all of it a prompt)
            filler = (i for i in range(judge.vocab_size) if i not in dist)
            asked = [*ranked, *islice(filler, want - len(ranked))]
        top = tuple(Alternative(f"token_id:{i}", judge.logprob(dist, i), i) for i in asked)
        position = TokenLogprob(f"token_id:{greedy}", judge.logprob(dist, greedy), top, greedy)
        return TokenCompletion("", "length", (position,), tuple(request.prompt_ids))


class StatedChat:
    """Stands where a ServedClient stands for a top-k ChatReader (rubric/judging/served_chat.py):
    the same stated judge, written one digit per token after the prompt's prefill, each position's
    top `top_logprobs` returned the way an OpenAI-compatible chat endpoint does (vLLM:
    vllm/entrypoints/openai/chat_completion/serving.py _create_chat_logprobs) — the favoured
    pieces, then other tokens at the even share, which the reader sees are no digits."""

    def __init__(
        self,
        numbers: Mapping[str, float],
        prefill: str,
        settings: EndpointSettings,
        model: str,
        vocab_size: int = CHAT_VOCAB,
    ) -> None:
        self.numbers = numbers
        self.prefill = prefill.rstrip()
        self.settings = settings
        self.model = model
        self.vocab_size = vocab_size
        self.requests = 0

    def complete_many(self, requests: Sequence[CompletionRequest]) -> list[Completion]:
        self.requests += len(requests)
        return [self._answer(r) for r in requests]

    def _answer(self, request: CompletionRequest) -> Completion:
        role, content = request.messages[-1]
        written = content[len(self.prefill) :] if role == "assistant" else ""
        rest = max(0.0, 1.0 - sum(self.numbers.values()))
        even = rest / self.vocab_size
        positions = []
        for _ in range(request.generation.max_new_tokens):
            through = {t: m for t, m in self.numbers.items() if t.startswith(written)}
            total = sum(through.values())
            shares: dict[str, float] = {}
            for text, mass in through.items():
                piece = text[len(written)] if len(text) > len(written) else "\n"
                shares[piece] = shares.get(piece, 0.0) + (1.0 - rest) * mass / total
            ranked = sorted(shares, key=lambda p: -shares[p])
            fill = [f"<other{k}>" for k in range(request.top_logprobs)]
            top = [(p, shares[p] + even) for p in ranked]
            top += [(p, even) for p in fill][: max(0, request.top_logprobs - len(top))]
            chosen = ranked[0] if ranked else fill[0]
            alts = tuple(Alternative(p, math.log(q), None) for p, q in top)
            positions.append(TokenLogprob(chosen, alts[0].logprob, alts, None))
            if chosen not in "0123456789":
                break
            written += chosen
        return Completion(written, "stop", tuple(positions))
