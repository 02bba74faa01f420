"""The steps of a local generate around the model's own call: a batch of token-id prompts
left-padded, the arguments for transformers' generate (greedy, or sampled row by row from each
row's seed: model_access/sampling.py), the cache key of the decoding settings, and each output
row cut into a Generation. LocalModel inherits this; it expects the attributes declared here.
Split from model_access/local.py, which holds the model itself (loading, placement, identity)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from diarylab.model_access.decoding import config_fields, local_generation_key
from diarylab.model_access.sampling import make_sampler, sampler_name
from diarylab.model_access.settings import GenerationSettings
from diarylab.model_access.vllm_engine import VllmEngine


@dataclass(frozen=True)
class Generation:
    text: str
    token_ids: tuple[int, ...]
    prompt_tokens: int
    new_tokens: int
    stopped_at_eos: bool


class GenerationSteps:
    tokenizer: Any
    engine: VllmEngine | None

    @property
    def device(self) -> torch.device:
        raise NotImplementedError  # LocalModel's

    @property
    def eos_token_ids(self) -> list[int]:
        raise NotImplementedError  # LocalModel's

    def _check_bare_config(self) -> None:
        raise NotImplementedError  # LocalModel's

    def decode(self, ids: Sequence[int]) -> str:
        raise NotImplementedError  # ChatTokens'

    def batch_inputs(self, prompts: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Left-padded input ids and attention mask for a batch of token-id prompts."""
        if not prompts or any(len(p) == 0 for p in prompts):
            raise ValueError("every prompt needs at least one token")
        width = max(len(p) for p in prompts)
        pad = int(self.tokenizer.pad_token_id)
        ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            ids[row, width - len(prompt) :] = torch.tensor(list(prompt), dtype=torch.long)
            mask[row, width - len(prompt) :] = 1
        return ids.to(self.device), mask.to(self.device)

    def generation_kwargs(
        self, settings: GenerationSettings, seeds: Sequence[int] | None, batch: int
    ) -> dict[str, Any]:
        """Arguments for model.generate: greedy decoding, with sampling done by a per-row
        seeded processor when temperature > 0 (see model_access.sampling)."""
        from transformers import GenerationConfig, LogitsProcessorList

        self._check_bare_config()
        config = GenerationConfig(
            **config_fields(settings),
            eos_token_id=self.eos_token_ids,
            pad_token_id=int(self.tokenizer.pad_token_id),
        )
        processors = LogitsProcessorList()
        if settings.temperature > 0:
            row_seeds = list(seeds) if seeds is not None else [0] * batch
            if len(row_seeds) != batch:
                raise ValueError(f"{len(row_seeds)} seeds for {batch} prompts")
            processors.append(
                make_sampler(row_seeds, settings.temperature, settings.top_p, self.device)
            )
        return {"generation_config": config, "logits_processor": processors}

    def generation_key(self, settings: GenerationSettings) -> dict[str, Any]:
        """The full effective decoding settings of a local generate, for cache keys; another
        engine than transformers is named in it (its sampler draws other numbers)."""
        key = local_generation_key(settings, sampler_name(settings.temperature, self.device))
        return key if self.engine is None else {**key, "engine": self.engine.key()}

    def finish(self, prompts: Sequence[Sequence[int]], output: torch.Tensor) -> list[Generation]:
        """Turn generate()'s output rows (prompt width + new tokens) into Generation records."""
        width = max(len(p) for p in prompts)
        return [self._generation(p, output[row, width:].tolist()) for row, p in enumerate(prompts)]

    def _generation(self, prompt: Sequence[int], new: list[int]) -> Generation:
        """A row's new tokens, cut before the first end-of-sequence token."""
        eos = set(self.eos_token_ids)
        stopped = False
        for i, token in enumerate(new):
            if token in eos:
                new, stopped = new[:i], True
                break
        return Generation(
            text=self.decode(new),
            token_ids=tuple(new),
            prompt_tokens=len(prompt),
            new_tokens=len(new),
            stopped_at_eos=stopped,
        )
