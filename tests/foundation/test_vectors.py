from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

from diarylab.foundation.datafiles import file_sha256
from diarylab.foundation.errors import LabError
from diarylab.steering.vectors import PatternVector, random_vector, vector_paths


@pytest.fixture()
def vector(tiny_model):
    return random_vector(tiny_model.info(), seed=3)


def test_round_trip_is_bit_exact(tmp_path, vector):
    sha = vector.save(tmp_path / "v")
    tensors, meta = vector_paths(tmp_path / "v")
    assert tensors.name == "v.safetensors" and meta.name == "v.json"
    assert sha == file_sha256(tensors) == json.loads(meta.read_text())["tensors_sha256"]
    for path in (tmp_path / "v", tensors, meta):
        loaded = PatternVector.load(path, expect_sha256=sha)
        for name in ("directions", "diff_norms", "residual_norms", "residual_norm_sds"):
            assert torch.equal(getattr(loaded, name), getattr(vector, name))
        assert loaded.metadata() == vector.metadata()
        assert loaded.content_sha256() == vector.content_sha256()
    assert not list(tmp_path.glob("*.tmp"))


def test_no_pickle_in_the_files(tmp_path, vector):
    vector.save(tmp_path / "v")
    from safetensors.torch import load_file

    assert set(load_file(str(tmp_path / "v.safetensors"))) == {
        "directions",
        "diff_norms",
        "residual_norms",
        "residual_norm_sds",
    }


def test_wrong_or_changed_file_is_refused(tmp_path, vector):
    sha = vector.save(tmp_path / "v")
    with pytest.raises(LabError, match="expected"):
        PatternVector.load(tmp_path / "v", expect_sha256="f" * 64)
    data = bytearray((tmp_path / "v.safetensors").read_bytes())
    data[-1] ^= 0xFF
    (tmp_path / "v.safetensors").write_bytes(bytes(data))
    with pytest.raises(LabError, match="does not match the sha256"):
        PatternVector.load(tmp_path / "v")
    (tmp_path / "v.json").unlink()
    with pytest.raises(LabError, match="missing v.json"):
        PatternVector.load(tmp_path / "v")
    assert sha


def test_vector_for_another_model_is_refused(tiny_model, vector):
    vector.check_model(tiny_model.info())
    for change, message in [
        ({"hidden_size": 96}, "hidden size 64 vs the model's 96"),
        ({"num_layers": 4}, "2 layers vs the model's 4"),
        ({"tokenizer_sha256": "0" * 64}, "a different tokenizer"),
    ]:
        other = replace(tiny_model.info(), spec="other", **change)
        with pytest.raises(LabError, match=message) as err:
            vector.check_model(other)
        assert "steer extract" in str(err.value)


def test_loading_for_another_model_is_refused(tmp_path, tiny_model, vector):
    vector.save(tmp_path / "v")
    PatternVector.load(tmp_path / "v", model=tiny_model.info())
    other = replace(tiny_model.info(), spec="other", num_layers=30)
    with pytest.raises(LabError, match=r"v\.safetensors: vector was extracted from"):
        PatternVector.load(tmp_path / "v", model=other)


def test_layer_out_of_range_is_clear(vector):
    with pytest.raises(LabError, match=r"layer 5 does not exist.*layers 0\.\.1"):
        vector.raw(5)
    with pytest.raises(LabError, match="layer -1 does not exist"):
        vector.unit(-1)


def test_describe_lists_every_layer(vector):
    text = vector.describe()
    assert "2 layers × 64" in text
    assert len([line for line in text.splitlines() if line.strip()[:1].isdigit()]) == 2


def test_the_content_hash_is_what_the_vector_is_not_when_it_was_made(vector):
    """Steered call keys hold content_sha256: the same vector made at another time keeps its
    keys; any change to its numbers or what it was made from changes them."""
    from dataclasses import replace

    later = replace(vector, created="2030-01-01T00:00:00+00:00")
    assert later.content_sha256() == vector.content_sha256()
    assert replace(vector, pairs=vector.pairs + 1).content_sha256() != vector.content_sha256()
    nudged = replace(vector, diff_norms=vector.diff_norms * 1.001)
    assert nudged.content_sha256() != vector.content_sha256()
