"""The `vllm` diarist engine (model_access/vllm_engine.py, a worker in the vLLM venv, vLLM in
its default compiled mode with the steering inside the model) against the transformers path, on
the embedded default (SmolLM2-135M, float32, CPU): greedy text, steered
at three layers × two strengths and at each kind of positions, is token for token the text the
lab's nnsight path writes, all rows in one batch; sampled text depends on the row's seed only,
not on its batch (what resume relies on)."""

from __future__ import annotations

import pytest

from diarylab.model_access.settings import GenerationSettings, VllmSettings
from diarylab.model_access.vllm_twin import attach_vllm
from diarylab.steering.apply import Steer, generate_steered
from diarylab.steering.vectors import random_vector

pytestmark = pytest.mark.vllm

LAYERS = (10, 18, 24)
STRENGTHS = (0.15, 0.3)
GREEDY = GenerationSettings(max_new_tokens=24, temperature=0.0)
SAMPLED = GenerationSettings(max_new_tokens=16, temperature=0.9, top_p=0.95)
CHATS = [
    [
        {"role": "system", "content": "You write a private diary. Write today's entry."},
        {"role": "user", "content": "Write about your evening."},
    ],
    [{"role": "user", "content": "Write a short diary entry about a walk in the rain."}],
]


@pytest.fixture(scope="module")
def on_vllm(smollm2):
    twin = attach_vllm(smollm2, VllmSettings(max_model_len=1024, max_num_seqs=8, block_size=32))
    yield twin
    assert twin.engine is not None
    twin.engine.close()


@pytest.fixture(scope="module")
def vector(smollm2):
    # SmolLM2's residual norm at layer ~20 is about 214 (ANCHORS.md): strengths 0.15 and 0.3
    # add vectors of length 32 and 64, enough to change the text without wrecking it.
    return random_vector(smollm2.info(), seed=5, residual_norm=214.0, pattern_id="social_isolation")


def rows(vector) -> list[Steer | None]:
    steers: list[Steer | None] = [None]
    steers += [Steer(vector, (layer,), s) for layer in LAYERS for s in STRENGTHS]
    steers += [Steer(vector, (LAYERS[1],), 0.3, positions=p) for p in ("prompt", "both")]
    steers.append(Steer(vector, LAYERS, 0.1))  # several layers at once
    return steers


def test_greedy_steered_text_is_token_identical_to_transformers(smollm2, on_vllm, vector):
    steers = rows(vector)
    # One prompt keeps the tier inside its CI budget (the rows are what varies).
    prompts = [smollm2.chat_ids(CHATS[0])] * len(steers)
    want = generate_steered(smollm2, prompts, GREEDY, steers=steers)
    got = generate_steered(on_vllm, prompts, GREEDY, steers=steers)
    for steer, a, b in zip(steers, want, got, strict=True):
        where = "unsteered" if steer is None else steer.spec()
        assert b.token_ids == a.token_ids, (where, a.text, b.text)
    # The steering did act (else the comparison could not fail).
    assert len({g.token_ids for g in want}) >= len(steers) - 2


def test_sampled_text_depends_on_the_seed_only(smollm2, on_vllm, vector):
    prompts = [smollm2.chat_ids(c) for c in CHATS] * 2
    steers = [None, Steer(vector, (18,), 0.3), Steer(vector, (18,), 0.3), None]
    seeds = [11, 12, 13, 14]
    batch = generate_steered(on_vllm, prompts, SAMPLED, seeds=seeds, steers=steers)
    alone = [
        generate_steered(on_vllm, [p], SAMPLED, seeds=[s], steers=[st])[0]
        for p, s, st in reversed(list(zip(prompts, seeds, steers, strict=True)))
    ][::-1]
    assert [g.token_ids for g in batch] == [g.token_ids for g in alone]
    again = generate_steered(on_vllm, prompts, SAMPLED, seeds=[21, 12, 13, 14], steers=steers)
    assert again[0].token_ids != batch[0].token_ids  # another seed, another text
    assert again[1:] == batch[1:]


def test_the_engine_is_named_in_cache_keys_and_transformers_keys_stay(smollm2, on_vllm):
    plain, engine = smollm2.generation_key(GREEDY), on_vllm.generation_key(GREEDY)
    assert "engine" not in plain  # stores written before the engine existed stay valid
    assert engine == {
        **plain,
        "engine": {"name": "vllm", "dtype": "float32", "steering": "in-model"},
    }


def test_the_worker_runs_with_the_settings_it_was_given(on_vllm):
    engine = on_vllm.engine
    assert engine is not None and engine.described  # started by the tests above
    asked = engine.settings
    assert engine.described["max_model_len"] == asked.max_model_len
    assert engine.described["max_num_seqs"] == asked.max_num_seqs
    assert engine.described["block_size"] == asked.block_size
    assert engine.described["gpu_memory_utilization"] == asked.gpu_memory_utilization
    assert engine.described["dtype"] == "float32" and engine.described["num_layers"] == 30
    # vLLM in its default mode: compiled, the steering inside the model, no eager forward.
    assert engine.described["enforce_eager"] is False
    assert engine.described["steered_model"] is True
