from __future__ import annotations

import pytest

from diarylab.diarists.profiles import UNSTEERED, load_profile, write_profile
from diarylab.foundation.errors import LabError
from diarylab.steering.apply import Steer
from diarylab.steering.settings import SteerSettings
from diarylab.steering.vectors import random_vector


@pytest.fixture()
def saved(tmp_path, tiny_model):
    vector = random_vector(tiny_model.info(), seed=5, pattern_id="social_isolation")
    sha = vector.save(tmp_path / "vectors" / "si")
    return vector, sha, tmp_path / "vectors" / "si.safetensors"


def test_unsteered_is_built_in():
    assert load_profile("unsteered") is UNSTEERED
    assert not UNSTEERED.steered and UNSTEERED.steer is None and UNSTEERED.spec() is None


def test_written_profile_loads_into_a_steer(tmp_path, saved, tiny_model):
    vector, sha, path = saved
    profile_path = write_profile(
        tmp_path / "profiles" / "si.toml",
        profile_id="social_isolation",
        pattern="social_isolation",
        vector=path,
        vector_sha256=sha,
        steer=SteerSettings(layers=[1], strength=0.5),
        calibration={"floor": 60.0, "judge": "fake"},
    )
    assert 'vector = "../vectors/si.safetensors"' in profile_path.read_text()
    profile = load_profile(profile_path)
    assert profile.id == "social_isolation" and profile.steered
    assert profile.calibration is not None and profile.calibration["judge"] == "fake"
    profile.check_model(tiny_model.info())
    steer = profile.steer
    assert isinstance(steer, Steer) and steer.strength == 0.5 and steer.layers == (1,)
    assert steer.vector.content_sha256() == vector.content_sha256()


def test_profile_errors_are_clear(tmp_path, saved):
    _, sha, path = saved
    good = dict(
        profile_id="x",
        pattern="social_isolation",
        vector=path,
        vector_sha256=sha,
        steer=SteerSettings(layers=[1], strength=0.5),
    )
    with pytest.raises(LabError, match="unknown profile 'nope'"):
        load_profile("nope")
    wrong_sha = write_profile(tmp_path / "a.toml", **{**good, "vector_sha256": "0" * 64})
    with pytest.raises(LabError, match="expected 000000000000"):
        load_profile(wrong_sha)
    wrong_pattern = write_profile(tmp_path / "b.toml", **{**good, "pattern": "entitlement"})
    with pytest.raises(LabError, match="vector is for pattern 'social_isolation'"):
        load_profile(wrong_pattern)
    bad_layer = write_profile(
        tmp_path / "c.toml", **{**good, "steer": SteerSettings(layers=[7], strength=0.5)}
    )
    with pytest.raises(LabError, match="layer 7 does not exist"):
        load_profile(bad_layer)
    bad_scale = tmp_path / "d.toml"
    bad_scale.write_text(bad_layer.read_text().replace('"relative"', '"loud"'))
    with pytest.raises(LabError, match=r"d.toml profile.scale: must be one of 'relative' or 'raw'"):
        load_profile(bad_scale)
    missing = write_profile(tmp_path / "e.toml", **{**good, "vector": tmp_path / "gone"})
    with pytest.raises(LabError, match="not found"):
        load_profile(missing)
    unknown = tmp_path / "f.toml"
    unknown.write_text(missing.read_text().replace("version = 1", "version = 1\nstrenght = 2"))
    with pytest.raises(LabError, match="profile.strenght: unknown field"):
        load_profile(unknown)
