"""Reading continuations of one prompt as a tree (tree attention), for NextTokenReader.

Every distinct prefix token of every continuation goes into a single row after the prompt, each
token attending to the prompt and to its own ancestors only (a 4D mask), at the position its
depth gives. One forward pass of a few dozen tokens then reads a whole round of a judge's trie,
against the prompt's cache of batch one: nothing is copied or repeated per continuation. The
cache keeps the tree's tokens too, so the next call on the same prompt (the bounded walk's next
round, the decimal marks' follow-up) runs only the tokens no earlier call ran. A judge starts
each reading afresh (`forget_prompt`), so a reading is a function of its prompt alone."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch


def _cache_argument(model: Any) -> str:
    # transformers 5.2x renamed forward()'s `past_key_values` to `cache`; accept both.
    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def _cache_of(output: Any) -> Any:
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def _croppable(cache: Any) -> bool:
    """Whether dropping the cache's last tokens gives back exactly an earlier state: sliding-
    window layers have already forgotten early tokens, so their caches are rebuilt instead."""
    layers = getattr(cache, "layers", None)
    if layers is None or not hasattr(cache, "crop"):
        return False
    return all(
        getattr(x, "is_croppable", False) and not getattr(x, "is_sliding", True) for x in layers
    )


# A prompt's kept tree is dropped past this many tokens (its cache and rows are memory).
_MAX_TREE_TOKENS = 8192


@dataclass
class _TreeState:
    """One prompt's KV cache (batch one) with the tree tokens run after it so far: where each
    path's token sits in the cache, and the log-probs read after each wanted path."""

    key: tuple[int, ...]
    cache: Any
    first: torch.Tensor
    positions: dict[tuple[int, ...], int] = field(default_factory=dict)
    rows: dict[tuple[int, ...], torch.Tensor] = field(default_factory=dict)
    length: int = -1

    def __post_init__(self) -> None:
        if self.length < 0:
            self.length = len(self.key)


class TreeReader:
    """Expects `model` (a transformers causal LM) and `device` on the instance."""

    model: Any
    # False reads continuations the earlier way (the prompt's cache copied and repeated per
    # continuation, the prompt run again each call): kept for bench/judges.py's comparison.
    tree_reads: bool = True

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def _local(self) -> threading.local:
        """The calling thread's own kept state: readings made on several threads at once (the
        executor's lanes) never see another's tree, so each stays a function of its prompt."""
        return self.__dict__.setdefault("_tree_local", threading.local())

    def forget_prompt(self) -> None:
        """Drop the kept prompt state: the next read starts from its prompt alone, so what it
        returns is a function of that prompt and its own calls (a judge calls this at the
        start of each reading)."""
        self._local().state = None

    def _state(self, prompt_ids: Sequence[int]) -> _TreeState:
        """The prompt's state, computed once per prompt and kept for the next call on it."""
        key = tuple(int(t) for t in prompt_ids)
        state: _TreeState | None = getattr(self._local(), "state", None)
        if state is not None and state.key == key and state.length <= _MAX_TREE_TOKENS:
            return state
        self._local().state = None  # a failure below must not leave a half-made state
        with torch.no_grad():
            prompt = torch.tensor([list(key)], device=self.device)
            # Only the last position's logits are needed: a full-vocabulary row per prompt
            # token costs more than the rest of the pass on long judge prompts.
            out = self.model(prompt, use_cache=True, logits_to_keep=1)
        # Rows stay on the model's device: a reader gathers the few ids it needs there and
        # copies those alone (next_token_lookups), not whole vocabulary rows.
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        state = _TreeState(key, _cache_of(out), first)
        self._local().state = state
        return state

    def _tree_pass(
        self, prompt_ids: Sequence[int], seqs: Sequence[Sequence[int]], *, steps: bool = False
    ) -> tuple[torch.Tensor, dict[tuple[int, ...], torch.Tensor]] | None:
        """(log-probs after the prompt, log-probs after each path read), or None where the
        cache cannot be kept exactly (sliding-window layers). Paths are read after each
        sequence's last token, or with `steps` after each of its tokens but the last."""
        if not prompt_ids:
            raise ValueError("prompt_ids is empty")
        if not self.tree_reads:
            return None
        state = self._state(prompt_ids)
        if not _croppable(state.cache):
            self._local().state = None
            return None
        wanted: dict[tuple[int, ...], None] = {}
        for seq in seqs:
            path = tuple(int(t) for t in seq)
            for k in range(1, len(path)) if steps else range(len(path), len(path) + 1):
                if k > 0 and path[:k] not in state.rows:
                    wanted[path[:k]] = None
        if wanted:
            try:
                self._extend(state, list(wanted))
            except BaseException:
                self._local().state = None  # the cache may hold part of a failed pass
                raise
        return state.first, state.rows

    def _extend(self, state: _TreeState, wanted: list[tuple[int, ...]]) -> None:
        """Run every wanted path's missing tokens in one pass after what the cache holds (each
        token attending to the prompt and its own ancestors, old or new), and keep their keys,
        values and the wanted paths' log-probs."""
        feed: list[tuple[int, ...]] = []  # new tokens, by path, parents first
        new: dict[tuple[int, ...], int] = {}
        for path in wanted:
            for k in range(1, len(path) + 1):
                q = path[:k]
                # A wanted path already held (fed as an ancestor, its logits never kept) runs
                # again as a token of its own: a duplicate key, harmless to attention.
                if q not in new and (q not in state.positions or q == path):
                    new[q] = len(feed)
                    feed.append(q)
        held = state.length
        size = len(feed)
        allowed = torch.zeros((size, held + size), dtype=torch.bool)
        allowed[:, : len(state.key)] = True
        for i, q in enumerate(feed):
            allowed[i, held + i] = True
            for k in range(1, len(q)):
                r = q[:k]
                allowed[i, held + new[r] if r in new else state.positions[r]] = True
        dtype = next(self.model.parameters()).dtype
        # An additive mask (0 where allowed): eager attention adds it, SDPA accepts it as is.
        mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)
        depth = torch.tensor([[len(state.key) + len(q) - 1 for q in feed]], device=self.device)
        # Logits only where a wanted path ends (ancestors are fed for their keys and values):
        # the vocabulary projection is a large part of the pass.
        keep = [new[path] for path in wanted]
        with torch.no_grad():
            out = self.model(
                torch.tensor([[q[-1] for q in feed]], device=self.device),
                attention_mask=mask[None, None].to(self.device),
                position_ids=depth,
                use_cache=True,
                logits_to_keep=torch.tensor(keep, device=self.device),
                **{_cache_argument(self.model): state.cache},
            )
        rows = torch.log_softmax(out.logits[0].float(), dim=-1)
        for q, i in new.items():
            state.positions.setdefault(q, held + i)
        for path, row in zip(wanted, rows, strict=True):
            state.rows[path] = row
        state.length = held + size
