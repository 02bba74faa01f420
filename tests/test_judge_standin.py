"""The rehearsal's costless judge stand-in (bench/judge_standin.py): its next-token rows are true
log-softmax rows, the same for the same prompt, fresh for another, with the judge's bigram bias
on the ids it names; and bench/phase_clock.py counts another process's CPU per phase."""

from __future__ import annotations

import math
import subprocess
import sys
import time

import pytest
import torch

from bench.judge_standin import costless_engine, make_tokenizer, standin_model
from bench.phase_clock import PhaseClock, process_cpu_seconds


@pytest.fixture(scope="module")
def engine():
    tokenizer = make_tokenizer("digits")
    return costless_engine(standin_model(tokenizer, costless=True))


def test_a_row_is_a_log_softmax_over_the_vocabulary(engine):
    row = engine.next_logprobs([5, 6, 7]).materialize()
    assert row.dtype == torch.float32 and row.shape == (engine.vocab_size,)
    assert math.isclose(float(torch.logsumexp(row.double(), 0)), 0.0, abs_tol=1e-5)


def test_the_same_prompt_reads_the_same_row_and_another_a_fresh_one(engine):
    first = engine.next_logprobs([5, 6, 7]).materialize()
    assert torch.equal(first, engine.next_logprobs([5, 6, 7]).materialize())
    other = engine.next_logprobs([5, 6, 8]).materialize()
    fresh = engine.fresh
    assert not torch.equal(first[fresh], other[fresh])  # the readable ids are drawn per prompt
    kept = torch.ones(engine.vocab_size, dtype=torch.bool)
    kept[fresh] = False
    # the rest of the row is one fixed draw: the same but for the normaliser's shift
    shift = first[kept] - other[kept]
    assert float(shift.max() - shift.min()) < 1e-4


def test_a_lazy_row_reads_as_the_written_out_row(engine):
    """What an answer reads of a row (each entry, the greedy token, the top-k, every id ranked)
    is what the row written out in full gives, by torch's own operations over all of it."""
    assert len(engine.contenders) < engine.vocab_size  # a real shortcut, so a real check
    for n in range(300):
        lazy = engine.next_logprobs([n % 97, n, 3 * n + 1])
        row = lazy.materialize()
        assert [float(lazy[i]) for i in range(engine.vocab_size)] == row.tolist()
        assert engine.best(lazy) == int(row.argmax())
        for k in (1, 5, 20, engine.vocab_size):
            assert engine.top(lazy, k) == [int(i) for i in torch.topk(row, k).indices]
    assert engine.ranked(lazy) == [int(i) for i in torch.argsort(row, descending=True)]
    drawn = lazy.drawn.copy()
    drawn[[3, 7]] = 40.0  # two fresh ids tie for the largest: the first wins, as in argmax
    tied = type(lazy)(engine, drawn, lazy.shift)
    assert engine.best(tied) == int(tied.materialize().argmax()) == int(engine.fresh[3])


def test_the_judges_bias_lands_on_the_ids_it_names(engine):
    prompt = [5, 6, 7]
    places, bias = engine.first
    assert len(places) > 0
    ids = engine.fresh[places]
    biased = engine.next_logprobs(prompt).materialize()
    # the same draw without the bias, normalised the same way
    saved = engine.first
    engine.first = (places, torch.zeros_like(bias))
    try:
        plain = engine.next_logprobs(prompt).materialize()
    finally:
        engine.first = saved
    lifted = (biased[ids] - plain[ids]).double()
    # each biased id moves by its bias, less one common shift (the normaliser)
    common = lifted - bias
    assert float(common.max() - common.min()) < 1e-4


def test_phase_clock_counts_a_watched_process_cpu():
    spin = "import time\nend = time.time() + 3\nwhile time.time() < end: pass"
    busy = subprocess.Popen([sys.executable, "-c", spin])
    try:
        clock = PhaseClock()
        clock.watch_processes([busy.pid])
        start = (time.perf_counter(), 0.0)
        time.sleep(1.5)
        clock.stop()
    finally:
        busy.kill()
        busy.wait()
    spans = clock.spans(start, (time.perf_counter(), 0.0))
    assert 0.3 < spans["profiles"]["watched_cpu_s"] <= 1.6
    assert process_cpu_seconds([busy.pid]) == 0.0  # a process gone counts nothing
