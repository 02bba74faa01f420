"""Per-row seeded sampling.

transformers samples every row of a batch from one global random stream, so a row's text would
depend on which other rows share its batch. The lab caches each generation by its own seed and
resumes runs with different batch compositions, so each row carries its own generator instead:
this processor draws the row's token by the Gumbel-max trick (argmax of logits/T + Gumbel noise,
which is an exact sample from softmax(logits/T)) and hands generate() a one-hot score that greedy
decoding then picks.

A CPU generator's noise is drawn on the CPU: on a GPU that costs more than the decode step itself
(bench/sampler_cost.py: 33 ms of noise against a 28 ms step, H200, 8B shape, 32 rows). So a model
on an accelerator samples with CounterSampler instead: its noise is a hash of (row seed, step,
token id) computed on the device in exact integer arithmetic, the same numbers on any device. The
two samplers draw different numbers, so each has its own name in the call key (sampler_name)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

CPU_SAMPLER = "row-seeded-gumbel"
COUNTER_SAMPLER = "row-seeded-counter-gumbel"


def sampler_name(temperature: float, device: torch.device) -> str:
    """The sampler a model on `device` uses, as its call keys name it."""
    if temperature <= 0:
        return "greedy"
    return CPU_SAMPLER if device.type == "cpu" else COUNTER_SAMPLER


def make_sampler(
    seeds: Sequence[int], temperature: float, top_p: float, device: torch.device
) -> Any:
    """The logits processor that draws each row's tokens from its own seed on `device`."""
    if sampler_name(temperature, device) == CPU_SAMPLER:
        return RowSeededSampler(seeds, temperature, top_p)
    return CounterSampler(seeds, temperature, top_p)


class RowSeededSampler:
    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float) -> None:
        if temperature <= 0:
            raise ValueError("RowSeededSampler needs temperature > 0; use greedy decoding for 0")
        self.temperature = temperature
        self.top_p = top_p
        self.generators = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.Tensor:
        logits = scores.float() / self.temperature
        if self.top_p < 1.0:
            logits = _nucleus(logits, self.top_p)
        vocab = logits.shape[-1]
        # Each row draws exactly one noise vector per step from its own generator, finished rows
        # included, so a row's k-th token always uses its k-th draw whatever the batch holds.
        uniform = torch.stack(
            [torch.rand(vocab, generator=g, dtype=torch.float64) for g in self.generators]
        ).to(logits.device)
        uniform = uniform.clamp_min(1e-300)
        return _one_hot(scores, logits, lambda at: uniform if at is None else uniform[at[0], at[1]])


class CounterSampler:
    """Gumbel-max like RowSeededSampler, with noise from counter_uniform on the logits' device:
    row r's k-th call uses hash(seed r, k, token), finished rows included."""

    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float) -> None:
        if temperature <= 0:
            raise ValueError("CounterSampler needs temperature > 0; use greedy decoding for 0")
        self.temperature = temperature
        self.top_p = top_p
        self.seeds = [int(s) for s in seeds]
        self.step = 0

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.Tensor:
        logits = scores.float() / self.temperature
        if self.top_p < 1.0:
            logits = _nucleus(logits, self.top_p)
        words = _row_words(self.seeds, self.step, logits.device)
        self.step += 1
        everywhere = _grid(logits.shape[0], logits.shape[1], logits.device)
        return _one_hot(scores, logits, lambda at: _uniform(words, *(at or everywhere)))


# The uniforms at (rows, tokens) index tensors, or at every position when given None.
Noise = Callable[[tuple[torch.Tensor, torch.Tensor] | None], torch.Tensor]


def _grid(rows: int, vocab: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Row and token indices that broadcast to every position of a (rows, vocab) batch."""
    return (
        torch.arange(rows, device=device)[:, None],
        torch.arange(vocab, device=device)[None, :],
    )


def _one_hot(scores: torch.Tensor, logits: torch.Tensor, noise_at: Noise) -> torch.Tensor:
    """A score row that is 0 at the Gumbel-max choice and -inf elsewhere (greedy picks it).
    `noise_at` gives the uniforms at given positions, or everywhere. After a nucleus step most
    of a row is -inf and can never be chosen, so the Gumbel transform (two float64 logs) is
    taken only where a token is still possible: the same argmax, first index on ties included."""
    possible = ~torch.isneginf(logits)
    if bool(possible.all()):
        total = logits.double() - torch.log(-torch.log(noise_at(None)))
    else:
        rows, tokens = possible.nonzero(as_tuple=True)
        total = torch.full(logits.shape, float("-inf"), dtype=torch.float64, device=logits.device)
        gumbel = -torch.log(-torch.log(noise_at((rows, tokens))))
        total[rows, tokens] = logits[rows, tokens].double() + gumbel
    choice = total.argmax(dim=-1)
    out = torch.full_like(scores, float("-inf"))
    out.scatter_(1, choice.unsqueeze(1), 0.0)
    return out


MASK32 = 0xFFFFFFFF
SALTS = (0x68E31DA4, 0x1B873593)  # one per hash chain


def _mul32(x: torch.Tensor, c: int) -> torch.Tensor:
    """x * c mod 2**32 for int64 x in [0, 2**32), in halves so no product passes 2**63 (signed
    overflow is left undefined by the kernels' C++)."""
    low, high = c & 0xFFFF, c >> 16
    return (x * low + (((x * high) & 0xFFFF) << 16)) & MASK32


def _mix32(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash (two xor-shift-multiply rounds; a bijection on [0, 2**32))."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def counter_uniform(
    seeds: Sequence[int], step: int, vocab: int, device: torch.device
) -> torch.Tensor:
    """Uniforms in (0, 1), float64 of 53 random bits, shape (rows, vocab): a pure function of
    each row's seed, the step and the token id, computed on `device`."""
    words = _row_words(seeds, step, device)
    return _uniform(words, *_grid(len(seeds), vocab, device))


def _row_words(seeds: Sequence[int], step: int, device: torch.device) -> list[torch.Tensor]:
    """Per hash chain, one 32-bit word per row for this step."""

    def tensor(values: Sequence[int]) -> torch.Tensor:
        return torch.tensor(list(values), dtype=torch.int64, device=device)

    low = tensor([s & MASK32 for s in seeds])
    high = tensor([(s >> 32) & MASK32 for s in seeds])
    step_word = tensor([step & MASK32])
    return [_mix32(_mix32(_mix32(low ^ salt) ^ high) ^ step_word) for salt in SALTS]


def _uniform(words: list[torch.Tensor], rows: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """The uniforms at (rows, tokens) (broadcast together). Two 32-bit words from two hash
    chains, so a draw holds 64 bits of state: with one word, two rows (or steps) would share a
    noise value somewhere in every few thousand tokens."""
    tokens = tokens.to(torch.int64)
    first, second = (
        _mix32(row[rows] ^ _mix32(tokens ^ salt)) for row, salt in zip(words, SALTS, strict=True)
    )
    bits = ((first >> 6) << 27) + (second >> 5)  # 26 + 27 bits: below 2**53, exact in float64
    return (bits.double() + 0.5) / float(2**53)


def _nucleus(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    # Drop a token when the mass before it already reaches top_p; the top token always stays.
    drop_sorted = (cumulative - sorted_logits.softmax(dim=-1)) >= top_p
    drop = drop_sorted.scatter(1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
