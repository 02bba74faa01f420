"""Exact readings of a served judge by prompt tokens: the prompt is rendered on the client with
the judge's own tokenizer and chat template (rubric/judge_render.py; harmony form for gpt-oss,
ending in the final channel), and every trie node is read through /v1/completions with the
prompt as token ids, max_tokens = 1 and the ids it needs asked for explicitly (vLLM's
`logprob_token_ids`, at most `ids_per_request` per request; answers merged by id). The server must
say it read exactly the tokens sent (`return_token_ids`), and a reading is exact only where every
needed id came back — exactness is what came back, never what was asked: a server that ignores
the ids (llama.cpp) answers with its top-k instead, which is exact only when the top-k is the
whole vocabulary.

Requests go in two rounds per batch of nodes: each node's first block of ids, then the blocks of
ids that neither came back nor were asked yet, so a server that returns everything at once
(llama.cpp with a large top_logprobs) is asked once per node, and one that returns exactly what
was asked (vLLM) gets every block."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from foundation.errors import LabError
from model_access.served import ServedClient
from model_access.token_prompts import TokenCompletion, TokenPromptRequest
from rubric.expected import LOG_ZERO, number_reading, path_masses, prob
from rubric.judge_render import RenderedPrompt, render_judge_prompt
from rubric.number_trie import (
    NumberTrie,
    TrieNode,
    digits_after,
    number_trie,
    points_to_follow,
    read_node,
)
from rubric.prompts import JudgePrompt
from rubric.vocab import VocabFacts, answer_ids, is_byte_level, token_text
from rubric.yes_no import yes_no_reading

TAIL_CHARS = 160  # how much of the rendered prompt a record keeps, to diagnose a wrong reading


@dataclass(frozen=True)
class ExactSettings:
    ids_per_request: int = 128  # vLLM's cap on logprob_token_ids
    top_logprobs: int = 0  # a server that ignores ids answers its top-k instead (llama.cpp)
    node_cutoff: float = 0.0  # nodes reached with less probability are not read
    reasoning_effort: str = "low"  # harmony judges (gpt-oss) only


@dataclass
class Asked:
    """What one node's requests asked for and what came back, merged by token id."""

    seq: tuple[int, ...]
    needed: tuple[int, ...]
    lookup: dict[int, float] = field(default_factory=dict)
    asked: set[int] = field(default_factory=set)

    @property
    def missing(self) -> list[int]:
        return [i for i in self.needed if i not in self.lookup]


class ExactReader:
    def __init__(
        self, client: ServedClient, tokenizer: Any, facts: VocabFacts, settings: ExactSettings
    ) -> None:
        if settings.ids_per_request < 1:
            raise LabError("ids_per_request must be at least 1", where="served judge")
        self.client = client
        self.tokenizer = tokenizer
        self.facts = facts
        self.settings = settings
        self.requests = 0

    # ------------------------------------------------------------------ transport
    def _request(self, seq: Sequence[int], ids: Sequence[int]) -> TokenPromptRequest:
        # Token ids back ("token_id:N") so two tokens that print alike stay apart, and the
        # prompt's ids back so what the server read can be checked.
        extra = {"return_token_ids": True, "return_tokens_as_token_ids": True}
        return TokenPromptRequest(
            prompt_ids=tuple(seq),
            max_tokens=1,
            top_logprobs=self.settings.top_logprobs,
            logprob_token_ids=tuple(ids),
            extra_body=json.dumps(extra, sort_keys=True),
        )

    def _send(self, requests: list[TokenPromptRequest]) -> list[TokenCompletion]:
        self.requests += len(requests)
        answers = self.client.complete_prompts(requests)
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

    def ask(self, items: list[Asked]) -> None:
        """Fill every item's lookup with the log-probabilities the server returns by id."""
        size = self.settings.ids_per_request
        first = [(item, item.needed[:size]) for item in items]
        self._round(first)
        rest = []
        for item in items:
            todo = [i for i in item.needed if i not in item.lookup and i not in item.asked]
            rest += [(item, tuple(todo[k : k + size])) for k in range(0, len(todo), size)]
        self._round(rest)

    def _round(self, blocks: list[tuple[Asked, tuple[int, ...]]]) -> None:
        if not blocks:
            return
        answers = self._send([self._request(item.seq, ids) for item, ids in blocks])
        for (item, ids), answer in zip(blocks, answers, strict=True):
            item.asked.update(ids)
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

    # ------------------------------------------------------------------ 0–100
    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        rendered = render_judge_prompt(
            self.tokenizer, prompt, reasoning_effort=self.settings.reasoning_effort
        )
        trie = number_trie(self.tokenizer, rendered.text)
        self.requests = 0
        items, skipped = self._read_nodes(trie)
        after: dict[int, dict[int, float]] = {}
        marks = [
            (index, mark)
            for index, node in enumerate(trie.nodes)
            if index in items
            for mark in points_to_follow(node, items[index].lookup, self.facts)
        ]
        follow = [
            Asked((*trie.prompt_ids, *trie.nodes[i].ids, mark), self.facts.continuation_ids)
            for i, mark in marks
        ]
        self.ask(follow)
        for (index, mark), item in zip(marks, follow, strict=True):
            after.setdefault(index, {})[mark] = (
                digits_after(item.lookup, self.facts) if not item.missing else 1.0
            )
        nodes = [
            read_node(trie.nodes[i], items[i].lookup, self.facts, after_point=after.get(i))
            for i in sorted(items)
        ]
        incomplete = {
            trie.nodes[i].text: items[i].missing[:20] for i in sorted(items) if items[i].missing
        }
        incomplete_after = sum(1 for item in follow if item.missing)
        record = {
            **self._about(rendered, len(trie.prompt_ids)),
            "asked_ids": sum(len(item.asked) for item in [*items.values(), *follow]),
            "missing_ids": incomplete,
            "skipped_mass": skipped,
            "exact": not incomplete and not incomplete_after and skipped == 0,
        }
        return dict(number_reading(nodes, record=record).record)

    def _about(self, rendered: RenderedPrompt, prompt_tokens: int) -> dict[str, Any]:
        """What every exact record says of how it was read."""
        return {
            "backend": "served",
            "mode": "exact",
            "model": self.client.model,
            "form": rendered.form,
            "reasoning_effort": rendered.reasoning_effort,
            "prompt_tokens": prompt_tokens,
            "prompt_tail": rendered.text[-TAIL_CHARS:],
            "requests": self.requests,
        }

    def _read_nodes(self, trie: NumberTrie) -> tuple[dict[int, Asked], float]:
        """Every node at once; with a cut-off, depth by depth so a node's probability is known
        before it is read. Returns the read nodes by index and the mass left unread."""

        def asked(node: TrieNode) -> Asked:
            return Asked((*trie.prompt_ids, *node.ids), trie.needed_ids(node, self.facts))

        if self.settings.node_cutoff <= 0:
            items = {i: asked(node) for i, node in enumerate(trie.nodes)}
            self.ask(list(items.values()))
            return items, 0.0
        items = {}
        skipped = 0.0
        depth = 0
        while True:
            level = [i for i, node in enumerate(trie.nodes) if len(node.ids) == depth]
            if not level:
                return items, skipped
            masses = self._masses(trie, items)
            wanted = []
            for i in level:
                mass = masses.get(trie.nodes[i].text, 0.0)
                if depth and mass < self.settings.node_cutoff:
                    # The node's whole subtree goes unread; its parent's read gave its mass.
                    skipped += mass
                else:
                    wanted.append(i)
            batch = {i: asked(trie.nodes[i]) for i in wanted}
            self.ask(list(batch.values()))
            items.update(batch)
            depth += 1

    def _masses(self, trie: NumberTrie, items: dict[int, Asked]) -> dict[str, float]:
        nodes = {
            trie.nodes[i].text: read_node(trie.nodes[i], items[i].lookup, self.facts) for i in items
        }
        return path_masses(nodes) if nodes else {"": 1.0}

    # ------------------------------------------------------------------ yes/no
    def yes_no_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        rendered = render_judge_prompt(
            self.tokenizer, prompt, reasoning_effort=self.settings.reasoning_effort
        )
        ids = list(self.tokenizer(rendered.text, add_special_tokens=False)["input_ids"])
        yes_ids, no_ids = answer_ids(self.facts, prompt.answers)
        if not yes_ids or not no_ids:
            raise LabError(
                f"the judge's vocabulary has no single-token {prompt.answers[0]}/"
                f"{prompt.answers[1]}",
                where="judge tokenizer",
            )
        self.requests = 0
        item = Asked(tuple(ids), tuple(sorted({*yes_ids, *no_ids})))
        self.ask([item])
        raw = self.facts.raw_tokens
        yes = {raw[i]: item.lookup[i] for i in yes_ids if i in item.lookup}
        no = {raw[i]: item.lookup[i] for i in no_ids if i in item.lookup}
        record = {
            **self._about(rendered, len(ids)),
            "missing_ids": item.missing[:20],
            "exact": not item.missing,
        }
        return dict(yes_no_reading(yes, no, record=record).record)

    def root_coverage(self, prompt: JudgePrompt) -> tuple[float, bool, str]:
        """P(the judge starts a number) on this prompt, whether it was read exactly, and the
        rendered prompt's tail: the probe's figures."""
        rendered = render_judge_prompt(
            self.tokenizer, prompt, reasoning_effort=self.settings.reasoning_effort
        )
        trie = number_trie(self.tokenizer, rendered.text)
        root = trie.nodes[0]
        item = Asked(trie.prompt_ids, trie.needed_ids(root, self.facts))
        self.ask([item])
        covered = sum(prob(item.lookup.get(i)) for _, i in root.children)
        return covered, not item.missing, rendered.text[-TAIL_CHARS:]

    def first_tokens(self, prompt: JudgePrompt, count: int = 8) -> list[str]:
        """The tokens the server writes first after the rendered prompt (greedy), as text."""
        rendered = render_judge_prompt(
            self.tokenizer, prompt, reasoning_effort=self.settings.reasoning_effort
        )
        ids = list(self.tokenizer(rendered.text, add_special_tokens=False)["input_ids"])
        extra = {"return_token_ids": True, "return_tokens_as_token_ids": True}
        request = TokenPromptRequest(
            prompt_ids=tuple(ids),
            max_tokens=count,
            top_logprobs=1,
            extra_body=json.dumps(extra, sort_keys=True),
        )
        [answer] = self._send([request])
        raw = self.facts.raw_tokens
        byte_level = is_byte_level(raw)
        out = []
        for position in answer.positions:
            token_id = position.token_id
            if token_id is not None and 0 <= token_id < len(raw):
                out.append(token_text(raw[token_id], byte_level=byte_level))
            else:
                out.append(position.token)
        return out
