"""The corpus's fixtures: one profile file and one finished run for the whole package."""

from __future__ import annotations

import pytest

from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.running.runner import run_design
from diarylab.testing.bad_inputs import Lab
from diarylab.testing.lab_fixtures import make_profile, small_run_text


@pytest.fixture(scope="package")
def shared(tmp_path_factory, tiny_model_folder):
    """A profile file and its vector (random directions on the tiny model)."""
    folder = tmp_path_factory.mktemp("bad-inputs")
    return folder, make_profile(folder, tiny_model_folder)


@pytest.fixture(scope="package")
def finished(shared, tiny_model_folder):
    """A small finished run (one diarist, one entry, fixed replies, the tiny local judge)."""
    folder, profile = shared
    text = small_run_text(tiny_model_folder, profile)
    design = folder / "finished.toml"
    design.write_text(text)
    run = folder / "finished-run"
    run_design(load_design(design), run, progress=False)
    return run


@pytest.fixture
def lab(request, tmp_path, tiny_model_folder, shared):
    folder, profile = shared
    return Lab(tmp_path, tiny_model_folder, folder, profile, request)
