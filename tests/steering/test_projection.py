"""The judge-free pattern measure: an entry read back through the unsteered diarist model, its
mean activation over the entry's tokens projected on the pattern direction, stored as judge
`projection` beside the judges and shown in the report."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.running.runner import run_design
from diarylab.foundation.errors import LabError
from diarylab.steering.projection import project
from diarylab.steering.vectors import random_vector
from diarylab.testing.lab_fixtures import design_text, make_profile
from diarylab.testing.stores import opened


def _hidden(model, ids, layer):
    out = model.model(torch.tensor([ids]), output_hidden_states=True)
    return out.hidden_states[layer + 1][0].double()  # slot l+1: block l's output (l < last)


def test_the_value_is_the_mean_text_activation_along_the_direction(tiny_model):
    vector = random_vector(tiny_model.info(), seed=5, pattern_id="social_isolation")
    context = tiny_model.chat_ids([{"role": "user", "content": "Write today's entry."}])
    text = tiny_model.encode("I ate alone again and nobody called.")
    got = project(tiny_model, context, text, vector, (0,))
    with torch.no_grad():
        hidden = _hidden(tiny_model, context + text, 0)[len(context) :]
    expected = float(hidden.mean(0) @ vector.unit(0).double()) / float(vector.residual_norms[0])
    assert got.value == pytest.approx(expected, rel=1e-9)
    assert got.tokens == len(text) and set(got.per_layer) == {0}


def test_a_text_that_carries_the_direction_scores_higher(tiny_model):
    """A direction built from one text's activations minus another's ranks the first above."""
    context = tiny_model.chat_ids([{"role": "user", "content": "Write today's entry."}])
    lonely = tiny_model.encode("Nobody called. I ate alone again, the flat silent.")
    busy = tiny_model.encode("Lunch with Sam, then the team dinner; my phone kept buzzing.")
    with torch.no_grad():
        a = _hidden(tiny_model, context + lonely, 0)[len(context) :].mean(0)
        b = _hidden(tiny_model, context + busy, 0)[len(context) :].mean(0)
    base = random_vector(tiny_model.info(), seed=1, pattern_id="social_isolation")
    directions = base.directions.clone()
    directions[0] = ((a - b) / (a - b).norm()).float()
    vector = replace(base, directions=directions)
    high = project(tiny_model, context, lonely, vector, (0,)).value
    low = project(tiny_model, context, busy, vector, (0,)).value
    assert high > low


def test_nothing_to_project_is_refused(tiny_model):
    vector = random_vector(tiny_model.info(), seed=5, pattern_id="social_isolation")
    with pytest.raises(LabError, match="no tokens"):
        project(tiny_model, [1, 2], [], vector, (0,))


@pytest.fixture(scope="module")
def run(tmp_path_factory, tiny_model_folder) -> Path:
    folder = tmp_path_factory.mktemp("projection")
    profile = make_profile(folder, tiny_model_folder)
    path = folder / "design.toml"
    path.write_text(design_text(tiny_model_folder, profile, entries=2))
    run_design(load_design(path), folder / "run", progress=False)
    return folder / "run"


def test_every_entry_gets_a_projection_score_beside_the_judges(run):
    with opened(run) as store:
        entries = {e for (e, text) in store.select("entries", ["entry_id", "text"]) if text != ""}
        columns = ["target_id", "item", "coverage", "readable", "call_key"]
        rows = store.select("judgments", columns, where={"judge": "projection"})
        calls = {c[0] for c in store.calls_of(["projection"])}
    assert {t for t, *_ in rows} == entries
    assert {item for _, item, *_ in rows} == {"pattern:social_isolation"}
    assert all(c == 1.0 and r == 1 for _, _, c, r, _ in rows)
    assert {key for *_, key in rows} <= calls  # stored through the cached-call door
    # The measure is no judge's reading: the report's "Judge readings" section leaves it out.
    from diarylab.experiments.engine.store import Store
    from diarylab.experiments.kinds.diary.rows import EntryRow, ReplyRow
    from diarylab.experiments.kinds.diary.tables import judge_readings

    store = Store(run / "store.sqlite", (EntryRow, ReplyRow))
    try:
        readings = judge_readings(store)
    finally:
        store.close()
    assert "projection" not in set(readings["judge"]) and len(readings)


def test_a_rerun_reads_projections_back(run, tiny_model_folder):
    design = load_design(run / "design.toml")
    summary = run_design(design, run, progress=False)
    assert summary.calls_made == 0


def test_the_report_shows_the_measure_and_its_correlation(run):
    assert main(["report", str(run), "--resamples", "200"]) == 0
    findings = (run / "report" / "findings.md").read_text()
    assert "## Judge-free pattern measure" in findings
    part = findings.split("## Judge-free pattern measure")[1].split("\n## ")[0]
    assert "tiny-judge" in part  # correlation with the judge's pattern score
    steering = (run / "report" / "tables" / "steering.csv").read_text()
    assert "projection" in steering and "tiny-judge" in steering


def test_a_judge_may_not_take_the_measures_id(tmp_path, tiny_model_folder, capsys):
    text = design_text(tiny_model_folder, None).replace('id = "tiny-judge"', 'id = "projection"')
    path = tmp_path / "design.toml"
    path.write_text(text)
    assert main(["design", "check", str(path), "--offline"]) == 2
    assert "judge-free pattern measure" in capsys.readouterr().err
