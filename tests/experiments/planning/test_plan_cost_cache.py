"""The plan keeps a served judge's reading cost once worked out (experiments/planning/
cost_cache.py): planning the same design again loads no tokenizer and prints the same plan;
a changed judge setting or changed tokenizer files are worked out afresh; a kept file that
cannot be read is passed over."""

from __future__ import annotations

import json

import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.planning import costs
from diarylab.testing.judge_tokenizers import mistral_style_tokenizer
from diarylab.testing.lab_fixtures import FIXED_ONLY, design_text, served_judge


@pytest.fixture
def kept(tmp_path, monkeypatch):
    folder = tmp_path / "plan-costs"
    monkeypatch.setenv("DIARYLAB_PLAN_COSTS", str(folder))
    return folder


@pytest.fixture
def judge_tokenizer(tmp_path):
    folder = tmp_path / "judge-tokenizer"
    mistral_style_tokenizer().save_pretrained(folder)
    return folder


def _design(tmp_path, model_folder, tokenizer, max_error=0.05):
    path = tmp_path / "design.toml"
    judges = served_judge(tokenizer, "http://127.0.0.1:9/v1", max_error=max_error)
    text = design_text(model_folder, None, entries=2, diarists='["amara"]', chatbots=FIXED_ONLY,
                       judges=judges)  # fmt: skip
    path.write_text(text)
    return path


def _plan(path, capsys) -> dict:
    assert main(["plan", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["requests"]["served"]


def _no_tokenizer(monkeypatch) -> list[str]:
    loaded: list[str] = []
    monkeypatch.setattr(costs, "load_tokenizer", lambda name: loaded.append(name) or 1 / 0)
    return loaded


def test_a_second_plan_reads_the_kept_cost_and_loads_no_tokenizer(
    tmp_path, capsys, monkeypatch, kept, tiny_model_folder, judge_tokenizer
):
    path = _design(tmp_path, tiny_model_folder, judge_tokenizer)
    first = _plan(path, capsys)
    assert first["expected"] > 0 and len(list(kept.iterdir())) == 1
    loaded = _no_tokenizer(monkeypatch)
    assert _plan(path, capsys) == first
    assert loaded == []


def test_a_changed_setting_or_tokenizer_is_worked_out_again(
    tmp_path, capsys, monkeypatch, kept, tiny_model_folder, judge_tokenizer
):
    path = _design(tmp_path, tiny_model_folder, judge_tokenizer)
    first = _plan(path, capsys)
    loaded = _no_tokenizer(monkeypatch)
    path.write_text(path.read_text().replace("max_error = 0.05", "max_error = 0.1"))
    with pytest.raises(ZeroDivisionError):
        _plan(path, capsys)
    path.write_text(path.read_text().replace("max_error = 0.1", "max_error = 0.05"))
    config = judge_tokenizer / "tokenizer_config.json"
    config.write_text(config.read_text().replace("{", '{"model_max_length": 77, ', 1))
    with pytest.raises(ZeroDivisionError):
        _plan(path, capsys)
    assert len(loaded) == 2
    monkeypatch.undo()
    monkeypatch.setenv("DIARYLAB_PLAN_COSTS", str(kept))
    assert _plan(path, capsys) == first  # the same figures: the tokenizer splits alike


def test_a_kept_file_that_cannot_be_read_is_worked_out_again(
    tmp_path, capsys, kept, tiny_model_folder, judge_tokenizer
):
    path = _design(tmp_path, tiny_model_folder, judge_tokenizer)
    first = _plan(path, capsys)
    (file,) = kept.iterdir()
    file.write_text('{"judge": "served"}')
    assert _plan(path, capsys) == first
    assert json.loads(file.read_text())["number_exact"]["basis"] == "trie"


def test_a_changed_cast_plans_as_from_scratch_and_both_are_kept_after(
    tmp_path, capsys, monkeypatch, kept, tiny_model_folder, judge_tokenizer
):
    """More diarists read in other batch sizes: the counts are worked out again with those
    sizes added, equal to a plan from nothing, and from then on both casts read them back."""
    path = _design(tmp_path, tiny_model_folder, judge_tokenizer)
    one = _plan(path, capsys)
    path.write_text(path.read_text().replace('diarists = ["amara"]', 'diarists = "all"'))
    monkeypatch.setenv("DIARYLAB_PLAN_COSTS", str(tmp_path / "nothing-kept"))
    fresh = _plan(path, capsys)
    monkeypatch.setenv("DIARYLAB_PLAN_COSTS", str(kept))
    assert _plan(path, capsys) == fresh
    loaded = _no_tokenizer(monkeypatch)
    assert _plan(path, capsys) == fresh
    path.write_text(path.read_text().replace('diarists = "all"', 'diarists = ["amara"]'))
    assert _plan(path, capsys) == one
    assert loaded == []


def test_another_address_for_the_same_server_reads_the_kept_cost(
    tmp_path, capsys, monkeypatch, kept, tiny_model_folder, judge_tokenizer
):
    """Where a judge's server is, and how long to wait for it, do not change what a reading
    takes."""
    path = _design(tmp_path, tiny_model_folder, judge_tokenizer)
    first = _plan(path, capsys)
    text = path.read_text().replace("127.0.0.1:9/v1", "127.0.0.1:8123/v1")
    path.write_text(text.replace("timeout_s = 30", "timeout_s = 90"))
    loaded = _no_tokenizer(monkeypatch)
    assert _plan(path, capsys) == first
    assert loaded == []


def test_after_the_setups_keeping_step_the_shipped_studies_load_no_tokenizer(
    tmp_path, capsys, monkeypatch, kept
):
    # scripts/setup-env.sh runs this step after installing: a new user's first check or plan
    # of a shipped study reads the judges' costs back instead of working them out
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "DIARYLAB_VENV": str(Path(sys.executable).parents[1])}
    subprocess.run([root / "scripts" / "keep-plan-costs.sh"], check=True, env=env)
    assert len(list(kept.iterdir())) == 4  # two judges, each in both studies
    loaded = _no_tokenizer(monkeypatch)
    for design in ("diary-full.toml", "friends.toml"):
        path = str(root / "experiments" / "designs" / design)
        assert main(["design", "check", "--offline", path]) == 0
        assert main(["plan", path]) == 0
        assert main(["serve-lines", path]) == 0
    capsys.readouterr()
    assert loaded == []
