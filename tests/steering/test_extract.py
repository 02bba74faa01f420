from __future__ import annotations

import pytest
import torch

from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.writes import StoreWrites
from diarylab.foundation.errors import LabError
from diarylab.model_access.local import GenerationSettings
from diarylab.steering.extract import PairFilter, TextScore, extract_vector

POSITIVE = "You keep a diary. You are alone and nobody calls you."
NEGATIVE = "You keep a diary. You have many friends who call you every day."
PROMPTS = ["Write about today.", "Write about your weekend plans.", "Write about dinner."]
SETTINGS = GenerationSettings(max_new_tokens=8, temperature=1.0)


def run(model, store_file, **kwargs):
    """Extraction with its texts written through a store (a new file: nothing read back)."""
    assert not store_file.exists()
    batch = kwargs.get("batch_size", 8)
    args = dict(
        writes=StoreWrites(Store(store_file), model, batch_size=batch),
        pattern_id="test_pattern",
        pattern_sha256="a" * 64,
        positive_system=POSITIVE,
        negative_system=NEGATIVE,
        prompts=PROMPTS,
        settings=SETTINGS,
        seed=11,
        progress=False,
    )
    return extract_vector(model, **{**args, **kwargs})


@pytest.fixture()
def next_store(tmp_path):
    count = iter(range(100))
    return lambda: tmp_path / f"store-{next(count)}.sqlite"


def test_vector_shape_norms_and_provenance(tiny_model, next_store):
    result = run(tiny_model, next_store(), pairs=4, batch_size=3)
    v = result.vector
    assert v.directions.shape == (2, 64) and v.directions.dtype == torch.float32
    assert torch.allclose(v.directions.norm(dim=-1), torch.ones(2), atol=1e-5)
    assert torch.all(v.diff_norms > 0) and torch.all(v.residual_norms > 0)
    assert v.pairs == 4 and len(result.pairs) == 4 and v.max_new_tokens == 8 and v.seed == 11
    assert result.pairs[3].prompt == PROMPTS[0] and result.pairs[3].seed == 14  # prompts repeat
    v.check_model(tiny_model.info())


def test_batch_size_does_not_change_the_vector(tiny_model, next_store):
    one = run(tiny_model, next_store(), pairs=3, batch_size=1).vector
    many = run(tiny_model, next_store(), pairs=3, batch_size=6).vector
    assert torch.allclose(one.directions, many.directions, atol=1e-4)
    assert torch.allclose(one.residual_norms, many.residual_norms, rtol=1e-4)


def test_mean_difference_is_over_response_tokens_only(tiny_model, next_store):
    """Recompute layer 0's vector by hand, one unpadded sequence at a time, from
    output_hidden_states (index 1 = the first block's output)."""
    result = run(tiny_model, next_store(), pairs=2, batch_size=4)
    sides = []
    for system in (POSITIVE, NEGATIVE):
        per_pair = []
        for pair in result.pairs:
            chat = [{"role": "system", "content": system}, {"role": "user", "content": pair.prompt}]
            prompt = tiny_model.chat_ids(chat)
            [gen] = tiny_model.generate([prompt], SETTINGS, seeds=[pair.seed])
            ids = torch.tensor([prompt + list(gen.token_ids)])
            with torch.no_grad():
                hidden = tiny_model.model(ids, output_hidden_states=True).hidden_states[1][0]
            per_pair.append(hidden[len(prompt) :].double().mean(dim=0))
        sides.append(torch.stack(per_pair).mean(dim=0))
    diff = (sides[0] - sides[1]).float()
    assert torch.allclose(result.vector.raw(0), diff, atol=1e-4)


def test_scorer_filters_pairs(tiny_model, next_store):
    calls = []

    def scorer(texts):
        calls.append(len(texts))
        # positives are even rows; make the second pair's positive look healthy
        return [
            TextScore(pattern=90.0 if i % 2 == 0 and i != 2 else 10.0, coherence=80.0)
            for i in range(len(texts))
        ]

    result = run(tiny_model, next_store(), pairs=3, scorer=scorer)
    assert calls == [6]
    assert [p.kept for p in result.pairs] == [True, False, True]
    assert result.pairs[1].reason == "the scorer's filter"
    assert result.pairs[0].positive_score == TextScore(90.0, 80.0)
    assert result.vector.pairs == 2


def test_no_pair_kept_is_a_clear_error(tiny_model, next_store):
    def incoherent(texts):
        return [TextScore(pattern=90.0, coherence=5.0) for _ in texts]

    with pytest.raises(LabError, match="no contrast pair was kept"):
        run(
            tiny_model,
            next_store(),
            pairs=2,
            scorer=incoherent,
            pair_filter=PairFilter(coherence_min=50),
        )


def test_bad_arguments(tiny_model, next_store):
    with pytest.raises(LabError, match="pairs must be"):
        run(tiny_model, next_store(), pairs=0)
    with pytest.raises(LabError, match="no extraction prompts"):
        run(tiny_model, next_store(), prompts=[])


def test_a_second_extraction_reads_its_texts_back_from_the_store(tiny_model, tmp_path, monkeypatch):
    store = Store(tmp_path / "store.sqlite")
    args = dict(
        pattern_id="test_pattern",
        pattern_sha256="a" * 64,
        positive_system=POSITIVE,
        negative_system=NEGATIVE,
        prompts=PROMPTS,
        settings=SETTINGS,
        seed=11,
        pairs=3,
        progress=False,
        writes=StoreWrites(store, tiny_model, batch_size=4),
    )
    first = extract_vector(tiny_model, **args)
    assert store.made == 6 and store.count("calls", where={"kind": "diarist"}) == 6

    def no_generate(*a, **kw):
        raise AssertionError("a stored text was written again")

    monkeypatch.setattr(tiny_model, "generate", no_generate)
    again = extract_vector(tiny_model, **args)
    assert store.made == 6 and store.cached == 6
    assert [p.positive for p in again.pairs] == [p.positive for p in first.pairs]
    assert torch.equal(again.vector.directions, first.vector.directions)
