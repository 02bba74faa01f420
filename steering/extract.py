"""Extracting a pattern vector from contrast pairs.

For each diary prompt the model writes twice, once under a system prompt for a diarist who has
the pattern and once under one for a healthy diarist (same seed). A forward pass over
prompt + response reads every decoder block's output; each response's hidden states are averaged
over its RESPONSE tokens only (the prompts differ by design, so their tokens would mostly encode
the instructions). The vector at each layer is mean(positive) − mean(negative).

This module takes plain strings, a `Writes` door and an optional scorer callable: it knows nothing
about pattern files, judges or the store (steering/ sits below diarists/, rubric/ and
experiments/). The texts are written through `writes` (the caller's cached-call door, so a
killed run reads them back); only the activation reads below run on the model directly, since
they keep nothing but the vector, which is saved whole."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import torch
from tqdm.auto import tqdm

from diarylab.foundation.errors import LabError
from diarylab.model_access.local import GenerationSettings, LocalModel
from diarylab.steering.vectors import PatternVector
from diarylab.steering.write_door import WriteRequest, Writes, Written


@dataclass(frozen=True)
class TextScore:
    """What a scorer says about one text, both on 0–100."""

    pattern: float
    coherence: float


# Scores a batch of texts for one pattern (the caller binds the pattern's name and definition).
Scorer = Callable[[Sequence[str]], Sequence[TextScore]]


@dataclass(frozen=True)
class PairFilter:
    """Which pairs a scorer lets through: the positive shows the pattern, the negative does not,
    and both still read as coherent text."""

    positive_min: float = 50.0
    negative_max: float = 50.0
    coherence_min: float = 50.0

    def keeps(self, positive: TextScore, negative: TextScore) -> bool:
        return (
            positive.pattern >= self.positive_min
            and negative.pattern <= self.negative_max
            and min(positive.coherence, negative.coherence) >= self.coherence_min
        )


@dataclass(frozen=True)
class ContrastPair:
    prompt: str
    seed: int
    positive: str
    negative: str
    kept: bool
    reason: str = ""  # why a pair was dropped
    positive_score: TextScore | None = None
    negative_score: TextScore | None = None


@dataclass(frozen=True, eq=False)
class Extraction:
    vector: PatternVector
    pairs: tuple[ContrastPair, ...]


def extract_vector(
    model: LocalModel,
    *,
    pattern_id: str,
    pattern_sha256: str,
    positive_system: str,
    negative_system: str,
    prompts: Sequence[str],
    settings: GenerationSettings,
    seed: int,
    writes: Writes,
    pairs: int | None = None,
    batch_size: int = 8,
    scorer: Scorer | None = None,
    pair_filter: PairFilter = PairFilter(),
    progress: bool = True,
) -> Extraction:
    """Generate contrast pairs, optionally filter them with `scorer`, and average response-token
    hidden states into a PatternVector. With `pairs` larger than len(prompts), prompts repeat
    with new seeds. `batch_size` is the activation reads'; `writes` batches the texts."""
    if not prompts:
        raise LabError("no extraction prompts", where="extraction", fix="give at least one")
    count = len(prompts) if pairs is None else pairs
    if count < 1:
        raise LabError(f"pairs must be ≥ 1, got {count}", where="extraction")
    if batch_size < 1:
        raise LabError(f"batch size must be ≥ 1, got {batch_size}", where="extraction")
    jobs = [(prompts[i % len(prompts)], seed + i) for i in range(count)]
    # Both sides of a pair share a seed, so they differ only in the system prompt.
    requests = [
        WriteRequest([{"role": "system", "content": system}, {"role": "user", "content": p}], s)
        for p, s in jobs
        for system in (positive_system, negative_system)
    ]
    gens = writes(requests, settings)
    if len(gens) != len(requests):
        raise ValueError(f"{len(gens)} texts written for {len(requests)} requests")
    chats = [model.chat_ids(r.messages) for r in requests]
    found = _judge_pairs(jobs, gens, scorer, pair_filter)
    kept = [i for i, pair in enumerate(found) if pair.kept]
    if not kept:
        reasons = sorted({p.reason for p in found})
        raise LabError(
            f"no contrast pair was kept out of {len(found)} ({'; '.join(reasons)})",
            where="extraction",
            fix="use more pairs or more new tokens, or loosen the scorer's thresholds",
        )
    rows = [(chats[2 * i + side], gens[2 * i + side]) for i in kept for side in (0, 1)]
    stats = _response_means(model, rows, batch_size, progress)
    positive = stats.means[0::2].mean(dim=0)  # [layers, hidden]
    negative = stats.means[1::2].mean(dim=0)
    diff = positive - negative
    norms = diff.norm(dim=-1)
    directions = diff / norms.clamp_min(1e-12)[:, None]
    info = model.info()
    vector = PatternVector(
        pattern_id=pattern_id,
        pattern_sha256=pattern_sha256,
        model_spec=info.spec,
        model_revision=info.revision,
        tokenizer_sha256=info.tokenizer_sha256,
        hidden_size=info.hidden_size,
        num_layers=info.num_layers,
        directions=directions.float(),
        diff_norms=norms.float(),
        residual_norms=stats.norm_mean.float(),
        residual_norm_sds=stats.norm_sd.float(),
        pairs=len(kept),
        max_new_tokens=settings.max_new_tokens,
        seed=seed,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        notes=(
            f"{len(kept)} of {len(found)} pairs kept"
            + (" by the scorer's filter" if scorer is not None else "")
            + f"; temperature {settings.temperature}, top_p {settings.top_p}"
        ),
    )
    return Extraction(vector=vector, pairs=tuple(found))


def _judge_pairs(
    jobs: list[tuple[str, int]],
    gens: list[Written],
    scorer: Scorer | None,
    pair_filter: PairFilter,
) -> list[ContrastPair]:
    texts = [g.text for g in gens]
    scores: Sequence[TextScore | None] = [None] * len(texts)
    if scorer is not None:
        scores = list(scorer(texts))
        if len(scores) != len(texts):
            raise ValueError(f"scorer returned {len(scores)} scores for {len(texts)} texts")
    found = []
    for i, (prompt, seed) in enumerate(jobs):
        pos, neg = gens[2 * i], gens[2 * i + 1]
        ps, ns = scores[2 * i], scores[2 * i + 1]
        reason = ""
        if pos.new_tokens == 0 or neg.new_tokens == 0:
            reason = "an empty response"
        elif ps is not None and ns is not None and not pair_filter.keeps(ps, ns):
            reason = "the scorer's filter"
        found.append(ContrastPair(prompt, seed, pos.text, neg.text, not reason, reason, ps, ns))
    return found


@dataclass(frozen=True)
class _ResponseStats:
    means: torch.Tensor  # [rows, layers, hidden]: each response's mean hidden state
    norm_mean: torch.Tensor  # [layers]: mean residual norm over all response tokens
    norm_sd: torch.Tensor  # [layers]


def _response_means(
    model: LocalModel,
    rows: list[tuple[list[int], Written]],
    batch_size: int,
    progress: bool,
) -> _ResponseStats:
    layers = model.num_layers
    means = torch.zeros(len(rows), layers, model.hidden_size, dtype=torch.float64)
    norm_sum = torch.zeros(layers, dtype=torch.float64)
    norm_sq = torch.zeros(layers, dtype=torch.float64)
    tokens = 0
    bar = tqdm(
        total=len(rows), desc="extracting: reading activations", unit="text", disable=not progress
    )
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        seqs = [list(prompt) + list(gen.token_ids) for prompt, gen in chunk]
        ids, mask = model.batch_inputs(seqs)
        width = ids.shape[1]
        response = torch.zeros(len(chunk), width, dtype=torch.float64)
        for row, (_, gen) in enumerate(chunk):
            response[row, width - gen.new_tokens :] = 1.0  # left padding: responses end flush
        sums, sq, nsum = _layer_reductions(model, ids, mask, response)
        counts = response.sum(dim=1)  # [batch]
        means[start : start + len(chunk)] = sums / counts[:, None, None]
        norm_sum += nsum
        norm_sq += sq
        tokens += int(counts.sum())
        bar.update(len(chunk))
    bar.close()
    mean = norm_sum / tokens
    sd = (norm_sq / tokens - mean**2).clamp_min(0).sqrt()
    return _ResponseStats(means, mean, sd)


def _layer_reductions(
    model: LocalModel, ids: torch.Tensor, mask: torch.Tensor, response: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One forward pass; per layer, the sum of each row's response-token hidden states
    [batch, layers, hidden], and the sum of squared and plain norms over all response tokens
    [layers]. Reduced inside the hook so only small tensors are kept, whatever the model size.
    Hooks on the blocks rather than output_hidden_states: transformers puts the final norm's
    output in the last hidden_states slot, so it would not be the last block's residual."""
    batch = ids.shape[0]
    layers = model.num_layers
    sums = torch.zeros(batch, layers, model.hidden_size, dtype=torch.float64)
    norm_sum = torch.zeros(layers, dtype=torch.float64)
    norm_sq = torch.zeros(layers, dtype=torch.float64)
    weight = response.to(model.device)

    def hook_for(layer: int) -> Any:
        def hook(module: torch.nn.Module, args: Any, output: Any) -> None:
            hidden = (output[0] if isinstance(output, tuple) else output).double()
            here = weight.to(hidden.device)  # a device map may put each block elsewhere
            sums[:, layer] = (hidden * here[:, :, None]).sum(dim=1).cpu()
            norms = hidden.norm(dim=-1) * here
            norm_sum[layer] = norms.sum().cpu()
            norm_sq[layer] = (norms**2).sum().cpu()

        return hook

    # Positions count from each row's first real token, as in generation with left padding.
    positions = (mask.cumsum(dim=-1) - 1).clamp_min(0)
    body = getattr(model.model, "model", model.model)  # the decoder stack, without lm_head
    handles = []
    try:
        for layer in range(layers):
            handles.append(model.layers[layer].register_forward_hook(hook_for(layer)))
        with torch.no_grad():
            body(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False)
    finally:
        for handle in handles:
            handle.remove()
    return sums, norm_sq, norm_sum
