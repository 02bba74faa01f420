"""The reduced friends design on the embedded default (SmolLM2-135M) as writer and judge: real
letters, real readings, the report with its plot. Slow: minutes on a CPU."""

from __future__ import annotations

import pytest

from diarists.profiles import write_profile
from experiments.cli import main
from experiments.design import load_design
from experiments.kinds.friends.rows import LetterRow
from experiments.runner import run_design
from experiments.store import Store
from model_access.local import LocalModel
from model_access.settings import LocalSettings
from steering.settings import SteerSettings
from steering.vectors import random_vector
from tests.friends_fixtures import FIRST_HYPOTHESIS, friends_design


@pytest.mark.slow
def test_friends_on_the_embedded_default(tmp_path, smollm2_folder):
    path = friends_design(
        tmp_path,
        smollm2_folder,
        controls='["fixed_friend"]',
        hypotheses=FIRST_HYPOTHESIS,
    )
    # A random direction at the depth and strength the demo steers SmolLM2 with: the pipeline,
    # not a finding (the demo design extracts a real vector; that takes longer).
    model = LocalModel.load(str(smollm2_folder), LocalSettings(device="cpu"))
    vector = random_vector(model.info(), seed=5, pattern_id="social_isolation")
    sha = vector.save(tmp_path / "vectors" / "si")
    profile = write_profile(
        tmp_path / "profiles" / "tiny-social_isolation.toml",
        profile_id="tiny-social_isolation",
        pattern="social_isolation",
        vector=tmp_path / "vectors" / "si",
        vector_sha256=sha,
        steer=SteerSettings(layers=[20], strength=0.25),
    )
    text = path.read_text().replace("max_new_tokens = 6", "max_new_tokens = 60")
    assert str(profile) in text  # replaces the tiny profile friends_design made at that path
    path.write_text(text)
    out = tmp_path / "run"
    summary = run_design(load_design(path), out, progress=False)
    model_letters = 4 * 6 + 4 * 3
    assert summary.rows == {"letters": model_letters + 4 * 3, "judgments": model_letters * 2}
    store = Store(out / "store.sqlite", (LetterRow,))
    try:
        texts = [
            r[0] for r in store.db.execute("SELECT text FROM letters WHERE call_key IS NOT NULL")
        ]
        readable = store.count_where("judgments", "readable = 1")
    finally:
        store.close()
    assert sum(len(t.split()) > 5 for t in texts) > len(texts) / 2  # mostly real prose
    assert readable > 0
    assert main(["report", str(out)]) == 0
    findings = (out / "report" / "findings.md").read_text()
    assert "## Primary outcome against both controls" in findings
    assert (out / "report" / "plots" / "letters_tiny-judge.png").stat().st_size > 5000
