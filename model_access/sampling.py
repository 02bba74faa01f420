"""Per-row seeded sampling.

transformers samples every row of a batch from one global random stream, so a row's text would
depend on which other rows share its batch. The lab caches each generation by its own seed and
resumes runs with different batch compositions, so each row carries its own generator instead:
this processor draws the row's token by the Gumbel-max trick (argmax of logits/T + Gumbel noise,
which is an exact sample from softmax(logits/T)) and hands generate() a one-hot score that greedy
decoding then picks."""

from __future__ import annotations

from collections.abc import Sequence

import torch


class RowSeededSampler:
    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float) -> None:
        if temperature <= 0:
            raise ValueError("RowSeededSampler needs temperature > 0; use greedy decoding for 0")
        self.temperature = temperature
        self.top_p = top_p
        self.generators = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        logits = scores.float() / self.temperature
        if self.top_p < 1.0:
            logits = _nucleus(logits, self.top_p)
        vocab = logits.shape[-1]
        # Each row draws exactly one noise vector per step from its own generator, finished rows
        # included, so a row's k-th token always uses its k-th draw whatever the batch holds.
        uniform = torch.stack(
            [torch.rand(vocab, generator=g, dtype=torch.float64) for g in self.generators]
        ).to(logits.device)
        gumbel = -torch.log(-torch.log(uniform.clamp_min(1e-300)))
        choice = (logits.double() + gumbel).argmax(dim=-1)
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(1, choice.unsqueeze(1), 0.0)
        return out  # type: ignore[return-value]


def _nucleus(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    # Drop a token when the mass before it already reaches top_p; the top token always stays.
    drop_sorted = (cumulative - sorted_logits.softmax(dim=-1)) >= top_p
    drop = drop_sorted.scatter(1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
