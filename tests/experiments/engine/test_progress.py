"""Progress that tells the truth: a small design interrupted while judging, then resumed —
the phases' totals, what the resumed run read from the store, and what `status` says at each
point."""

from __future__ import annotations

import json

from diarylab.experiments.cli import main
from diarylab.experiments.engine.progress import eta_seconds
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.testing.lab_fixtures import design_text


def test_interrupted_then_resumed_the_totals_and_status_say_what_happened(
    tmp_path, tiny_model_folder, capsys, monkeypatch
):
    design = tmp_path / "design.toml"
    design.write_text(design_text(tiny_model_folder, None, entries=2, diarists='["amara"]'))
    out = tmp_path / "run"
    real = LocalJudge.yes_no_records
    calls = {"n": 0}

    def stop_on_the_third(self, prompts):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # Ctrl-C while judging
        return real(self, prompts)

    monkeypatch.setattr(LocalJudge, "yes_no_records", stop_on_the_third)
    assert main(["run", str(design), "--out", str(out), "--no-progress"]) == 130
    capsys.readouterr()
    assert main(["status", str(out)]) == 0
    text = capsys.readouterr().out
    assert "state: interrupted — `diarylab run DESIGN --out FOLDER` resumes it" in text
    record = json.loads((out / "progress.json").read_text())
    writing, judging = record["phases"]
    assert writing["name"] == "writing" and writing["done"] == writing["planned"] > 0
    assert 0 < judging["done"] < judging["planned"]
    assert f"judging: {judging['done']} of {judging['planned']} steps" in text
    assert f"{judging['planned'] - judging['done']} left" in text

    monkeypatch.setattr(LocalJudge, "yes_no_records", real)
    assert main(["run", str(design), "--out", str(out), "--no-progress"]) == 0
    summary = capsys.readouterr().out
    resumed = json.loads((out / "progress.json").read_text())
    assert resumed["state"] == "complete"
    writing2, judging2 = resumed["phases"]
    # every text was stored by the first run: all read from the store, none written again
    assert writing2["done"] == writing2["stored_before"] == writing["planned"]
    assert judging2["done"] == judging2["planned"] == judging["planned"]
    assert judging2["stored_before"] == judging["done"]
    stored = writing["planned"] + judging["done"]
    assert f"read from the store {resumed['read_from_the_store']}" in summary
    assert resumed["read_from_the_store"] >= stored  # its stored steps, and cached calls
    assert main(["status", str(out)]) == 0
    text = capsys.readouterr().out
    assert "state: complete" in text and " left" not in text
    assert main(["status", str(out), "--json"]) == 0
    machine = json.loads(capsys.readouterr().out)
    assert machine["state"] == "complete" and machine["progress"]["phases"][1]["done"] > 0


def test_no_eta_until_there_is_a_pace():
    from collections import deque

    stamps = deque([(0.0, 1), (1.0, 2)])
    assert eta_seconds(stamps, 100) is None  # two steps: no pace yet
    stamps = deque([(0.0, 0), (10.0, 10)])
    assert eta_seconds(stamps, 50) == 50.0  # 1 s a step, 50 left
