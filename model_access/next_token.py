"""Reading a local model's next-token probabilities with the prompt's KV cache computed once:
the prompt runs one forward pass, and every continuation (a trie node of a judge's numbers)
reuses its cache. Prompts that share a beginning but are read as wholes (a reply's rubric
questions) go through `last_logprobs`, whose reading of a prompt does not depend on which other
prompts it is read with. LocalModel inherits this reader.

Continuations are read as one tree (tree attention): every distinct prefix token of every
continuation goes into a single row after the prompt, each token attending to the prompt and
to its own ancestors only (a 4D mask), at the position its depth gives. One forward pass of a
few dozen tokens then reads a whole trie, against the prompt's cache of batch one: nothing is
copied or repeated per continuation. The cache keeps the tree's tokens too, so the next call on
the same prompt (the bounded walk's next round, the decimal marks' follow-up) runs only the
tokens no earlier call ran, attending to the ones that did. A judge starts each reading afresh
(`forget_prompt`), so a reading is a function of its prompt alone. Caches that cannot hold a
tree exactly (sliding-window layers) take the batched path with a copy of the cache instead."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from diarylab.model_access.tree_reads import TreeReader, _cache_argument, _cache_of, _croppable


def _shared(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class NextTokenReader(TreeReader):
    """Expects `model` (a transformers causal LM), `tokenizer` and `device` on the instance."""

    model: Any
    tokenizer: Any

    def next_token_logprobs(
        self,
        prompt_ids: Sequence[int],
        prefixes: Sequence[Sequence[int]] = ((),),
        *,
        chunk: int = 64,
    ) -> torch.Tensor:
        """Full next-token log-probability vectors after prompt + each prefix, shape
        (len(prefixes), vocab). The prompt is run once; its KV cache serves every prefix."""
        return self._rows(prompt_ids, prefixes, chunk=chunk).cpu()

    def next_token_lookups(
        self,
        prompt_ids: Sequence[int],
        prefixes: Sequence[Sequence[int]],
        ids: Sequence[Sequence[int]],
        *,
        chunk: int = 64,
    ) -> list[dict[int, float]]:
        """For each prefix, log P(id | prompt + prefix) of its own `ids` only, as float64
        values: gathered where the rows are (the GPU) and copied in one transfer, never whole
        vocabulary rows."""
        rows = self._rows(prompt_ids, prefixes, chunk=chunk)
        width = max((len(i) for i in ids), default=0)
        if width == 0:
            return [{} for _ in prefixes]
        index = torch.zeros((len(prefixes), width), dtype=torch.long)
        for r, wanted in enumerate(ids):
            index[r, : len(wanted)] = torch.tensor(list(wanted), dtype=torch.long)
        values = rows.gather(1, index.to(rows.device)).double().cpu().tolist()
        return [
            dict(zip(wanted, row[: len(wanted)], strict=True))
            for wanted, row in zip(ids, values, strict=True)
        ]

    def _rows(
        self, prompt_ids: Sequence[int], prefixes: Sequence[Sequence[int]], *, chunk: int
    ) -> torch.Tensor:
        """(len(prefixes), vocab) log-probabilities, on whichever device the reader keeps them."""
        tree = self._tree_pass(prompt_ids, prefixes)
        if tree is not None:
            first, rows = tree
            return torch.stack([rows[tuple(int(t) for t in p)] if p else first for p in prefixes])
        found = {}
        for i, steps in self._cached_pass(prompt_ids, prefixes, chunk=chunk):
            found[i] = steps[-1]
        return torch.stack([found[i] for i in range(len(prefixes))])

    def continuation_logprobs(
        self, prompt_ids: Sequence[int], continuations: Sequence[Sequence[int]], *, chunk: int = 64
    ) -> list[list[float]]:
        """log P(token_i | prompt, continuation[:i]) for every token of every continuation,
        with the prompt's KV cache computed once."""
        tree = self._tree_pass(prompt_ids, continuations, steps=True)
        if tree is not None:
            first, on_device = tree
            first = first.cpu()
            rows = {path: row.cpu() for path, row in on_device.items()}
            out = []
            for seq in continuations:
                seq = [int(t) for t in seq]
                before = [first] + [rows[tuple(seq[:k])] for k in range(1, len(seq))]
                out.append([float(row[t]) for row, t in zip(before, seq, strict=False)])
            return out
        result: list[list[float]] = [[] for _ in continuations]
        for i, steps in self._cached_pass(prompt_ids, continuations, chunk=chunk):
            tokens = continuations[i]
            result[i] = [float(steps[k][t]) for k, t in enumerate(tokens)]
        return result

    def last_logprobs(
        self, seqs: Sequence[Sequence[int]], *, block: int = 64
    ) -> list[torch.Tensor]:
        """Next-token log-probabilities after each whole sequence, each a function of that
        sequence alone. A batch of prompts with a shared beginning would be cheapest as one pass
        over the shared part plus a padded batch of tails, but then a prompt's floats depend on
        where its batch-mates diverge and on the tails' padded width (about 1e-6 in fp32), so a
        resumed run could store a different reading than an unbroken one. Instead every sequence
        is run as the same chain of fixed blocks (tokens [0, block), [block, 2·block), ...,
        batch of one, no padding); a block shared with the sequence read before it is taken
        from the KV cache, which holds exactly the floats a fresh chain would compute."""
        if block < 1:
            raise ValueError("block must be at least 1")
        if any(len(s) == 0 for s in seqs):
            raise ValueError("every sequence needs at least one token")
        out: list[torch.Tensor | None] = [None] * len(seqs)
        cache: Any = None
        held: list[int] = []  # the tokens whose keys and values `cache` holds
        # Lexicographic order puts sequences with a long shared beginning next to each other;
        # the order changes what is reused, never a result.
        for index in sorted(range(len(seqs)), key=lambda i: list(seqs[i])):
            ids = list(seqs[index])
            last_start = (len(ids) - 1) // block * block  # the final block is always run
            keep = min(_shared(held, ids), last_start) // block * block
            if cache is not None and keep > 0 and _croppable(cache):
                cache.crop(keep - cache.get_seq_length())  # negative: tokens to drop
            else:
                cache, keep = None, 0
            with torch.no_grad():
                for start in range(keep, len(ids), block):
                    chunk = torch.tensor([ids[start : start + block]], device=self.device)
                    kwargs = {} if cache is None else {_cache_argument(self.model): cache}
                    result = self.model(chunk, use_cache=True, logits_to_keep=1, **kwargs)
                    cache = _cache_of(result)
            out[index] = torch.log_softmax(result.logits[0, -1].float(), dim=-1).cpu()
            held = ids
        return [row for row in out if row is not None]

    def full_pass_logprobs(self, ids: Sequence[int]) -> torch.Tensor:
        """Next-token log-probs after every position of one sequence, by a plain forward pass
        with no cache: the reference the cached path is tested against."""
        with torch.no_grad():
            logits = self.model(torch.tensor([list(ids)], device=self.device)).logits[0]
        return torch.log_softmax(logits.float(), dim=-1).cpu()

    def _cached_pass(
        self, prompt_ids: Sequence[int], seqs: Sequence[Sequence[int]], *, chunk: int
    ) -> Iterator[tuple[int, list[torch.Tensor]]]:
        """For each sequence, yield the next-token log-prob vectors after the prompt and after
        each of its tokens (len(seq) + 1 vectors)."""
        if not prompt_ids:
            raise ValueError("prompt_ids is empty")
        with torch.no_grad():
            prompt = torch.tensor([list(prompt_ids)], device=self.device)
            # Only the last position's logits are needed: a full-vocabulary row per prompt token
            # costs more than the rest of the pass on long judge prompts.
            out = self.model(prompt, use_cache=True, logits_to_keep=1)
            first = torch.log_softmax(out.logits[0, -1].float(), dim=-1).cpu()
            cache = _cache_of(out)
            pending = []
            for index, seq in enumerate(seqs):
                if len(seq) == 0:
                    yield index, [first]
                else:
                    pending.append(index)
            for start in range(0, len(pending), chunk):
                batch = pending[start : start + chunk]
                yield from self._continue(
                    cache, len(prompt_ids), first, [(i, seqs[i]) for i in batch]
                )

    def _continue(
        self,
        cache: Any,
        prompt_len: int,
        first: torch.Tensor,
        items: list[tuple[int, Sequence[int]]],
    ) -> Iterator[tuple[int, list[torch.Tensor]]]:
        width = max(len(seq) for _, seq in items)
        pad = int(self.tokenizer.pad_token_id)
        ids = torch.full((len(items), width), pad, dtype=torch.long)
        mask = torch.zeros((len(items), prompt_len + width), dtype=torch.long)
        mask[:, :prompt_len] = 1
        for row, (_, seq) in enumerate(items):
            ids[row, : len(seq)] = torch.tensor(list(seq))
            mask[row, prompt_len : prompt_len + len(seq)] = 1
        # Right padding: pads sit after every real token, so causal attention keeps them from
        # touching real positions; the cache is copied because the forward pass extends it.
        batch_cache = copy.deepcopy(cache)
        batch_cache.batch_repeat_interleave(len(items))
        positions = torch.arange(prompt_len, prompt_len + width).unsqueeze(0).expand(len(items), -1)
        out = self.model(
            ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            use_cache=True,
            **{_cache_argument(self.model): batch_cache},
        )
        logprobs = torch.log_softmax(out.logits.float(), dim=-1).cpu()
        for row, (index, seq) in enumerate(items):
            yield index, [first, *logprobs[row, : len(seq)]]
