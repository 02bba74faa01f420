"""A judge that is a local open model (model_access.local.LocalModel): readings from its full
next-token distributions, exact at max_error = 0 and within a certified bound otherwise.

For a 0–100 score: tokenize every number after the prompt (prefix-stable), build the trie of those
token sequences, and query the trie's nodes with next_token_lookups, which runs the prompt once
and reads a whole round of nodes in one tree-attention pass on its KV cache (about 102 short
continuations for an exact reading, whatever the tokenizer; fewer for a bounded one). From
each node's full next-token distribution the record keeps only what the algorithm needs: the
log-probabilities of the trie's child tokens and log P(the number ends here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from diarylab.foundation.errors import LabError
from diarylab.model_access.local import LocalModel
from diarylab.rubric.judging.bounded_walk import Walk
from diarylab.rubric.judging.expected import ALGORITHM, LOG_ZERO, check_max_error
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.judge_render import (
    HARMONY_REASONING_EFFORT,
    is_harmony,
    render_judge_prompt,
)
from diarylab.rubric.judging.number_reading import number_reading
from diarylab.rubric.judging.number_trie import (
    NumberTrie,
    digits_after,
    number_trie,
    points_to_follow,
    read_node,
)
from diarylab.rubric.judging.vocab import VocabFacts, answer_ids, vocab_facts
from diarylab.rubric.judging.yes_no import yes_no_reading
from diarylab.rubric.prompts import JudgePrompt


class LocalJudge(Judge):
    reasoning_effort: str = HARMONY_REASONING_EFFORT  # used by harmony (gpt-oss) judges only

    def __init__(
        self, model: LocalModel, *, chunk: int = 64, block: int = 64, max_error: float = 0.0
    ) -> None:
        self.model = model
        self.max_error = check_max_error(max_error)
        self.chunk = chunk
        self.block = block
        self._facts: VocabFacts | None = None

    @property
    def facts(self) -> VocabFacts:
        if self._facts is None:
            self._facts = vocab_facts(self.model.tokenizer)
        return self._facts

    def identity(self) -> dict[str, Any]:
        info = self.model.info()
        return {
            "kind": "local",
            "spec": info.spec,
            "revision": info.revision,
            "dtype": info.dtype,
            "tokenizer_sha256": info.tokenizer_sha256,
            "chat_template_sha256": info.chat_template_sha256,
            "algorithm": ALGORITHM,
            # a bounded reading stops where the rest could move E[n] by less
            # (rubric/judging/bound.py)
            "max_error": self.max_error,
            # yes/no prompts are read in blocks of this many tokens (model_access/next_token.py)
            "prompt_block": self.block,
            # a harmony judge's answers depend on the reasoning effort its prompt states
            **(
                {"reasoning_effort": self.reasoning_effort}
                if is_harmony(self.model.tokenizer)
                else {}
            ),
        }

    def prompt_text(self, prompt: JudgePrompt) -> str:
        """Exactly the text the model reads before its answer (rubric/judging/judge_render.py)."""
        rendered = render_judge_prompt(
            self.model.tokenizer, prompt, reasoning_effort=self.reasoning_effort
        )
        return rendered.text

    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        # Every reading starts from its prompt alone (the runtime keeps a prompt's tree between
        # calls: the walk's rounds and the marks' follow-up reuse it within this reading).
        self.model.forget_prompt()
        trie = number_trie(self.model.tokenizer, self.prompt_text(prompt))
        if self.max_error > 0:
            return self._bounded_record(trie)
        facts = self.facts
        prefixes = [node.ids for node in trie.nodes]
        lookups = self.model.next_token_lookups(
            trie.prompt_ids,
            prefixes,
            [trie.needed_ids(node, facts) for node in trie.nodes],
            chunk=self.chunk,
        )
        # trie-v2: what follows a likely bare decimal mark, read in a second call.
        marks = [
            (index, mark)
            for index, node in enumerate(trie.nodes)
            for mark in points_to_follow(node, lookups[index], facts)
        ]
        after: dict[int, dict[int, float]] = {}
        if marks:
            found = self.model.next_token_lookups(
                trie.prompt_ids,
                [(*trie.nodes[index].ids, mark) for index, mark in marks],
                [facts.continuation_ids] * len(marks),
                chunk=self.chunk,
            )
            for (index, mark), digits in zip(marks, found, strict=True):
                after.setdefault(index, {})[mark] = digits_after(digits, facts)
        nodes = [
            read_node(node, lookups[index], facts, after_point=after.get(index))
            for index, node in enumerate(trie.nodes)
        ]
        record = {
            "backend": "local",
            "mode": "local",
            "prompt_tokens": len(trie.prompt_ids),
            "queried_nodes": len(prefixes) + len(marks),
            "exact": True,
        }
        return dict(number_reading(nodes, record=record).record)

    def _bounded_record(self, trie: NumberTrie) -> dict[str, Any]:
        """Round by round (rubric/judging/bounded_walk.py), each round's nodes in one cached
        pass."""
        facts = self.facts
        walk = Walk(trie, facts, self.max_error)
        queried = 0
        while queries := walk.next_queries():
            prefixes = [
                trie.nodes[q.index].ids if q.mark is None else (*trie.nodes[q.index].ids, q.mark)
                for q in queries
            ]
            wanted = [
                trie.needed_ids(trie.nodes[q.index], facts)
                if q.mark is None
                else facts.continuation_ids
                for q in queries
            ]
            found = self.model.next_token_lookups(
                trie.prompt_ids, prefixes, wanted, chunk=self.chunk
            )
            for query, lookup in zip(queries, found, strict=True):
                if query.mark is None:
                    walk.answer_node(query.index, lookup)
                else:
                    walk.answer_point(query.index, query.mark, lookup)
            queried += len(prefixes)
        nodes = walk.nodes()
        record = {
            "backend": "local",
            "mode": "local",
            "prompt_tokens": len(trie.prompt_ids),
            "queried_nodes": queried,
            "rounds": walk.rounds,
            "max_error": self.max_error,
        }
        reading = number_reading(nodes.values(), record=record)
        bound = reading.bound
        record_out = dict(reading.record)
        record_out["exact"] = bound is not None and bound.open_mass == 0
        return record_out

    def yes_no_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        return self.yes_no_records([prompt])[0]

    def yes_no_records(self, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
        """Several yes/no calls whose prompts share a beginning (the rubric's questions about
        one reply differ only near the end): blocks of the shared tokens run once and their KV
        cache serves every question, while each reading stays a function of its own prompt
        alone, whatever else is in the batch (LocalModel.last_logprobs)."""
        all_ids = [self.model.encode(self.prompt_text(p)) for p in prompts]
        if not all(all_ids):
            raise LabError("the judge prompt encodes to no tokens", where="judge prompt")
        rows = self.model.last_logprobs(all_ids, block=self.block)
        return [
            self._yes_no(row.double(), len(ids), p.answers)
            for row, ids, p in zip(rows, all_ids, prompts, strict=True)
        ]

    def _yes_no(
        self, row: torch.Tensor, prompt_tokens: int, words: tuple[str, str] = ("yes", "no")
    ) -> dict[str, Any]:
        facts = self.facts
        yes_ids, no_ids = answer_ids(facts, words)
        if not yes_ids or not no_ids:
            raise LabError(
                f"the judge's vocabulary has no single-token {words[0]}/{words[1]}",
                where="judge tokenizer",
            )
        yes = {facts.raw_tokens[i]: max(float(row[i]), LOG_ZERO) for i in yes_ids}
        no = {facts.raw_tokens[i]: max(float(row[i]), LOG_ZERO) for i in no_ids}
        record = {
            "backend": "local",
            "mode": "local",
            "prompt_tokens": prompt_tokens,
            "exact": True,
        }
        return dict(yes_no_reading(yes, no, record=record).record)
