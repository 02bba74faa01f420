"""The two per-row seeded samplers (model_access/sampling.py). The counter sampler's noise is
exact integer arithmetic, so it is checked number for number against the same hash in Python
integers; both samplers are checked to draw from softmax(logits / T) and to give a row the same
tokens whatever batch it is in."""

from __future__ import annotations

import random

import pytest
import torch

from diarylab.model_access.sampling import (
    COUNTER_SAMPLER,
    CPU_SAMPLER,
    CounterSampler,
    RowSeededSampler,
    _nucleus,
    counter_uniform,
    make_sampler,
    sampler_name,
)

M = 0xFFFFFFFF


def mix(x: int) -> int:
    """The counter sampler's hash in plain Python integers (no tensor arithmetic)."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & M
    x ^= x >> 15
    x = (x * 0x846CA68B) & M
    return x ^ (x >> 16)


def reference_uniform(seed: int, step: int, token: int) -> float:
    first, second = (
        mix(mix(mix(mix((seed & M) ^ salt) ^ ((seed >> 32) & M)) ^ (step & M)) ^ mix(token ^ salt))
        for salt in (0x68E31DA4, 0x1B873593)
    )
    return (((first >> 6) << 27) + (second >> 5) + 0.5) / 2**53


def test_counter_noise_is_the_hash_number_for_number():
    seeds = [0, 1, 7, 2**32 + 5, 2**63 - 1, -3]
    rng = random.Random(0)
    for step in (0, 1, 17, 2**32 + 2):
        got = counter_uniform(seeds, step, 1000, torch.device("cpu"))
        for row, seed in enumerate(seeds):
            for token in rng.sample(range(1000), 25):
                assert got[row, token].item() == reference_uniform(seed, step, token)


def test_counter_noise_is_uniform_and_rows_and_steps_differ():
    u = counter_uniform(list(range(64)), 3, 4096, torch.device("cpu"))
    assert u.min().item() > 0 and u.max().item() < 1
    assert abs(u.mean().item() - 0.5) < 0.002  # 262,144 draws: sd of the mean 0.00056
    assert abs(u.var().item() - 1 / 12) < 0.001
    flat = u.flatten()
    assert torch.unique(flat).numel() == flat.numel()
    corr = torch.corrcoef(u[:2])[0, 1].item()  # neighbouring seeds are not related
    assert abs(corr) < 0.05
    other_step = counter_uniform(list(range(64)), 4, 4096, torch.device("cpu"))
    assert abs(torch.corrcoef(torch.stack([flat, other_step.flatten()]))[0, 1].item()) < 0.01


@pytest.mark.parametrize("kind", [RowSeededSampler, CounterSampler])
def test_a_row_draws_the_same_tokens_whatever_its_batch(kind):
    logits = torch.randn(5, 300, generator=torch.Generator().manual_seed(1))
    alone = kind([42], 0.8, 1.0)
    batch = kind([9, 42, 13], 0.8, 1.0)
    for _ in range(6):
        mine = alone(None, logits[:1]).argmax(-1)
        theirs = batch(None, logits[[3, 0, 4]]).argmax(-1)
        assert mine.item() == theirs[1].item()


@pytest.mark.parametrize("kind", [RowSeededSampler, CounterSampler])
def test_draws_follow_softmax_over_the_temperature(kind):
    """Gumbel-max is an exact sample: 4,000 rows (seeds) of one logit row, chi-square against
    softmax(logits / 0.7) with 9 degrees of freedom (99.99th percentile 33.7)."""
    logits = torch.tensor([[2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, 0.3, 1.2, -2.0]])
    rows = 4000
    sampler = kind(list(range(rows)), 0.7, 1.0)
    picks = sampler(None, logits.expand(rows, -1)).argmax(-1)
    counts = torch.bincount(picks, minlength=10).double()
    expected = torch.softmax(logits[0].double() / 0.7, -1) * rows
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 33.7, (counts.tolist(), expected.tolist())


def test_the_nucleus_is_applied_before_either_draw():
    logits = torch.tensor([[5.0, 4.0, -3.0, -3.0, -4.0]])
    for kind in (RowSeededSampler, CounterSampler):
        picks = kind(list(range(500)), 1.0, 0.5)(None, logits.expand(500, -1)).argmax(-1)
        assert set(picks.tolist()) == {0}  # token 0 alone holds 73% >= top_p


def test_the_device_picks_the_sampler_and_its_name():
    assert sampler_name(0.7, torch.device("cpu")) == CPU_SAMPLER
    assert sampler_name(0.7, torch.device("cuda", 1)) == COUNTER_SAMPLER
    assert sampler_name(0.0, torch.device("cuda")) == "greedy"
    assert isinstance(make_sampler([1], 0.7, 1.0, torch.device("cpu")), RowSeededSampler)
    assert isinstance(make_sampler([1], 0.7, 1.0, torch.device("cuda")), CounterSampler)


def dense_choice(logits: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
    """The Gumbel-max choice over the whole vocabulary, as the samplers first computed it."""
    return (logits.double() - torch.log(-torch.log(uniform))).argmax(dim=-1)


@pytest.mark.parametrize("top_p", [1.0, 0.9, 0.3])
def test_drawing_only_where_a_token_is_possible_chooses_as_the_whole_row_does(top_p):
    """The samplers take the Gumbel transform only at tokens the nucleus kept: every choice must
    equal the whole-row argmax with the same noise (rows of equal logits included)."""
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(16, 500, generator=gen) * 2
    logits[3] = 0.0  # a row of ties
    logits[5, :250] = float("-inf")  # a row another processor cut
    seeds = list(range(100, 116))
    for step in range(5):
        uniform = torch.stack(
            [
                torch.rand(500, generator=torch.Generator().manual_seed(s), dtype=torch.float64)
                for s in seeds
            ]
        )
        cut = _nucleus(logits / 0.8, top_p) if top_p < 1 else logits / 0.8
        cpu = RowSeededSampler(seeds, 0.8, top_p)(None, logits).argmax(-1)
        assert torch.equal(cpu, dense_choice(cut, uniform.clamp_min(1e-300)))
        counter = CounterSampler(seeds, 0.8, top_p)
        counter.step = step
        got = counter(None, logits).argmax(-1)
        assert torch.equal(got, dense_choice(cut, counter_uniform(seeds, step, 500, cut.device)))
