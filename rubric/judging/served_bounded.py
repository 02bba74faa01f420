"""Bounded 0–100 readings of a served judge by prompt tokens (max_error > 0, trie-v3; the walk
itself: rubric/judging/bounded_walk.py), one prompt or a batch of them in step: each round, every
unfinished walk's queries go to the client at once, which sends equal requests as one list (a
round of sixteen readings asks the same nodes of each: one HTTP request, not sixteen). Each walk
sees only its own answers and each prompt of a list is read as if sent alone, so every reading
is what it is read alone (tests/model_access/test_served_bounded.py); its record states its own
prompts and its share of the HTTP requests they went in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from diarylab.rubric.judging.bounded_walk import Query, Walk
from diarylab.rubric.judging.exact_asks import Asked, ExactAsker
from diarylab.rubric.judging.judge_render import RenderedPrompt, render_judge_prompt
from diarylab.rubric.judging.number_reading import number_reading
from diarylab.rubric.judging.number_trie import NumberTrie, number_trie
from diarylab.rubric.prompts import JudgePrompt


@dataclass
class _Bounded:
    """One bounded reading under way: its prompt, trie and walk, and every query it asked."""

    rendered: RenderedPrompt
    trie: NumberTrie
    walk: Walk
    items: list[Asked] = field(default_factory=list)
    scouted: int = 0


class BoundedReads(ExactAsker):
    def _bounded_record(self, rendered: RenderedPrompt, trie: NumberTrie) -> dict[str, Any]:
        """Round by round (rubric/judging/bounded_walk.py): each round's prompts sent together."""
        reading = self._bounded_start(rendered, trie)
        self._walk_together([reading])
        return self._bounded_out(reading, alone=True)

    def number_records(self, prompts: Sequence[JudgePrompt]) -> list[dict[str, Any]]:
        """Bounded readings (max_error > 0) of several prompts in step (see above)."""
        if self.settings.max_error <= 0:
            raise ValueError("number_records reads bounded readings: max_error > 0")
        self.requests = self.http_requests = 0
        readings = []
        for prompt in prompts:
            rendered = render_judge_prompt(
                self.tokenizer, prompt, reasoning_effort=self.settings.reasoning_effort
            )
            trie = number_trie(self.tokenizer, rendered.text, rendered.ids)
            readings.append(self._bounded_start(rendered, trie))
        self._walk_together(readings)
        alone = len(readings) == 1
        return [self._bounded_out(r, alone=alone) for r in readings]

    def _bounded_start(self, rendered: RenderedPrompt, trie: NumberTrie) -> _Bounded:
        settings = self.settings
        walk = Walk(trie, self.facts, settings.max_error, node_cutoff=settings.node_cutoff)
        return _Bounded(rendered, trie, walk)

    def _walk_together(self, readings: list[_Bounded]) -> None:
        active = readings
        while active:
            rounds = []
            for reading in active:
                queries = reading.walk.next_queries()
                if queries:
                    items = [self._query_item(reading, q) for q in queries]
                    rounds.append((reading, queries, items))
            if not rounds:
                return
            self.ask([item for _, _, items in rounds for item in items])
            for reading, queries, items in rounds:
                walk = reading.walk
                for query, item in zip(queries, items, strict=True):
                    reading.items.append(item)
                    if query.mark is None:
                        walk.answer_node(query.index, item.lookup)
                    else:
                        walk.answer_point(query.index, query.mark, item.lookup)
            active = [reading for reading, _, _ in rounds]

    def _query_item(self, reading: _Bounded, query: Query) -> Asked:
        facts, settings, trie = self.facts, self.settings, reading.trie
        node = trie.nodes[query.index]
        seq = (*trie.prompt_ids, *node.ids)
        needed = trie.needed_ids(node, facts)
        if query.mark is not None:
            return Asked((*seq, query.mark), facts.continuation_ids)
        if query.kind == "tail":
            known = reading.walk.lookups[query.index]
            return Asked(seq, tuple(i for i in needed if i not in known))
        if len(needed) > settings.ids_per_request and settings.scout_logprobs > 0:
            reading.scouted += 1
            return Asked(seq, (), scout=settings.scout_logprobs)
        return Asked(seq, needed)

    def _bounded_out(self, reading: _Bounded, *, alone: bool) -> dict[str, Any]:
        walk, items = reading.walk, reading.items
        counts = None if alone else (sum(i.sent for i in items), sum(i.http for i in items))
        nodes = walk.nodes()
        record = {
            **self._about(reading.rendered, len(reading.trie.prompt_ids), counts),
            "asked_ids": sum(len(item.asked) for item in items),
            "scouted_nodes": reading.scouted,
            "rounds": walk.rounds,
            "max_error": self.settings.max_error,
        }
        reading_ = number_reading(nodes.values(), record=record)
        bound = reading_.bound
        out = dict(reading_.record)
        out["exact"] = (
            bound is not None and bound.open_mass == 0 and all(n.end_exact for n in nodes.values())
        )
        return out
