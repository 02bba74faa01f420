"""Exact readings of a served judge by prompt tokens: the prompt is rendered on the client with
the judge's own tokenizer and chat template (rubric/judging/judge_render.py; harmony form for
gpt-oss, ending in the final channel), and every trie node is read through /v1/completions with
the prompt as token ids (how, and when a reading counts as exact: rubric/judging/exact_asks.py).
A 0–100 reading reads every node (or, with max_error > 0, only what can move the mean:
rubric/judging/served_bounded.py over rubric/judging/bounded_walk.py); yes/no reads the answer
ids at the prompt's end, a reply's questions rendered and encoded as a group; the probe reads the
root, the first tokens written, and whether the server takes lists of prompts."""

from __future__ import annotations

import json
from typing import Any

from diarylab.foundation.errors import LabError
from diarylab.model_access.token_prompts import TokenPromptRequest
from diarylab.rubric.judging.exact_asks import TAIL_CHARS, Asked, ExactSettings
from diarylab.rubric.judging.expected import path_masses, prob
from diarylab.rubric.judging.group_encoding import encode_group
from diarylab.rubric.judging.group_render import render_group
from diarylab.rubric.judging.judge_render import RenderedPrompt, render_judge_prompt
from diarylab.rubric.judging.number_reading import number_reading
from diarylab.rubric.judging.number_trie import (
    NumberTrie,
    TrieNode,
    digits_after,
    number_trie,
    points_to_follow,
    read_node,
)
from diarylab.rubric.judging.served_bounded import BoundedReads
from diarylab.rubric.judging.vocab import answer_ids, is_byte_level, token_text
from diarylab.rubric.judging.yes_no import yes_no_reading
from diarylab.rubric.prompts import JudgePrompt

__all__ = ["Asked", "ExactReader", "ExactSettings"]


class ExactReader(BoundedReads):
    # ------------------------------------------------------------------ 0–100
    def number_record(self, prompt: JudgePrompt) -> dict[str, Any]:
        rendered = render_judge_prompt(
            self.tokenizer, prompt, reasoning_effort=self.settings.reasoning_effort
        )
        trie = number_trie(self.tokenizer, rendered.text, rendered.ids)
        self.requests = self.http_requests = 0
        if self.settings.max_error > 0:
            return self._bounded_record(rendered, trie)
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
        return self.yes_no_records([prompt])[0]

    def yes_no_records(self, prompts: list[JudgePrompt]) -> list[dict[str, Any]]:
        """Every prompt's answer ids asked in one round, so the client sends them as lists of
        prompts_per_request (a reply's rubric questions: one HTTP request, not fifteen). Each
        prompt is its own choice in the list, read exactly as if sent alone; a record states
        one prompt and its share of the HTTP requests the round took."""
        self.requests = self.http_requests = 0
        # A reply's questions share the whole conversation: rendered and encoded once for the
        # group, each prompt's text and ids equal to rendering and encoding it alone
        # (rubric/judging/group_render.py, group_encoding.py).
        texts = render_group(
            self.tokenizer, prompts, reasoning_effort=self.settings.reasoning_effort
        )
        encoded = encode_group(self.tokenizer, [t.text for t in texts])
        asked = [
            self._yes_no_asked(prompt, text, ids)
            for prompt, text, ids in zip(prompts, texts, encoded, strict=True)
        ]
        self.ask([item for _, item, _ in asked])
        share = self.http_requests / len(prompts) if prompts else 0.0
        raw = self.facts.raw_tokens
        out = []
        for rendered, item, (yes_ids, no_ids) in asked:
            yes = {raw[i]: item.lookup[i] for i in yes_ids if i in item.lookup}
            no = {raw[i]: item.lookup[i] for i in no_ids if i in item.lookup}
            record = {
                **self._about(rendered, len(item.seq)),
                "requests": max(1, -(-len(item.needed) // self.settings.ids_per_request)),
                "http_requests": round(share, 6),
                "missing_ids": item.missing[:20],
                "exact": not item.missing,
            }
            out.append(dict(yes_no_reading(yes, no, record=record).record))
        return out

    def _yes_no_asked(
        self, prompt: JudgePrompt, rendered: RenderedPrompt, ids: list[int]
    ) -> tuple[RenderedPrompt, Asked, tuple[tuple[int, ...], tuple[int, ...]]]:
        yes_ids, no_ids = answer_ids(self.facts, prompt.answers)
        if not yes_ids or not no_ids:
            raise LabError(
                f"the judge's vocabulary has no single-token {prompt.answers[0]}/"
                f"{prompt.answers[1]}",
                where="judge tokenizer",
            )
        item = Asked(tuple(ids), tuple(sorted({*yes_ids, *no_ids})))
        return rendered, item, (tuple(yes_ids), tuple(no_ids))

    def root_coverage(self, prompt: JudgePrompt) -> tuple[float, bool, str]:
        """P(the judge starts a number) on this prompt, whether it was read exactly, and the
        rendered prompt's tail: the probe's figures."""
        rendered = render_judge_prompt(
            self.tokenizer, prompt, reasoning_effort=self.settings.reasoning_effort
        )
        trie = number_trie(self.tokenizer, rendered.text, rendered.ids)
        root = trie.nodes[0]
        item = Asked(trie.prompt_ids, trie.needed_ids(root, self.facts))
        self.ask([item])
        self.check_lists(item)
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
