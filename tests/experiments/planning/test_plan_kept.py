"""The plan a run is held to: `plan --measure` keeps its measurement beside the design and says
what it sent; `plan --measured` plans from it again without reading; a run made afterwards keeps
the measured plan (its basis named) and `status` compares the run with it; a design changed
since is held to the stated plan, which names its assumption. Against the vLLM-shaped judge
stand-in with a tiny random (diffuse) judge model behind it."""

from __future__ import annotations

import json

import pytest

from diarylab.experiments.cli import main
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import serve
from diarylab.testing.lab_fixtures import FIXED_ONLY, design_text, served_judge


def _design(tmp_path, model_folder, url):
    path = tmp_path / "design.toml"
    judges = served_judge(model_folder, url, max_error=0.05)
    text = design_text(model_folder, None, entries=2, diarists='["amara"]', chatbots=FIXED_ONLY,
                       judges=judges)  # fmt: skip
    path.write_text(
        text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["pattern"]')
    )
    return path


def _prompts(bodies) -> int:
    return sum(len(b["prompt"]) if isinstance(b["prompt"][0], list) else 1 for b in bodies)


def _json(capsys, *args) -> dict:
    assert main(["plan", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_run_after_plan_measure_is_held_to_the_measured_plan(
    tmp_path, capsys, tiny_model, tiny_model_folder
):
    with serve(judge_handler(tiny_model)) as server:
        path = _design(tmp_path, tiny_model_folder, server.base_url)
        stated = _json(capsys, str(path))
        assert stated["basis"]["kind"] == "stated" and "diffuse" in stated["basis"]["says"]
        first = tmp_path / "first"
        assert main(["run", str(path), "--out", str(first), "--no-progress"]) == 0
        capsys.readouterr()
        before = len(server.requests)
        measured = _json(capsys, str(path), "--measure", "--from", str(first))
        sent = server.requests[before:]
        # it says what it sent, and keeps it beside the design
        assert measured["measure_sent"]["served"]["prompts"] == _prompts(sent)
        assert measured["measure_sent"]["served"]["http_requests"] == len(sent)
        kept = path.with_name("design.measured.json")
        assert kept.is_file() and measured["basis"]["kind"] == "measured"
        # --measured reads nothing and plans the same
        before = len(server.requests)
        again = _json(capsys, str(path), "--measured")
        assert len(server.requests) == before
        assert again["requests"] == measured["requests"]
        assert again["basis"]["date"] == measured["basis"]["date"]
        second = tmp_path / "second"
        assert main(["run", str(path), "--out", str(second), "--no-progress"]) == 0
    capsys.readouterr()
    held = json.loads((second / "plan.json").read_text())
    assert held["basis"]["kind"] == "measured" and held["requests"] == measured["requests"]
    assert held["gpu"]["models"]["served"]["requests"] == pytest.approx(
        measured["requests"]["served"]["expected"]
    )
    assert main(["status", str(second)]) == 0
    out = capsys.readouterr().out
    assert "the plan: measured on the judges on" in out
    line = next(x for x in out.splitlines() if "served 0–100:" in x)
    ratio = float(line.split("(")[-1].split("×")[0])
    assert 0.75 <= ratio <= 1.25, line  # the measured plan, not the stated one, is compared
    assert "tokens, served: tokens a prompt" in out
    assert "time, the latest run (wall, on its own machine): writing " in out


def test_a_design_changed_since_its_measurement_is_held_to_the_stated_plan(
    tmp_path, capsys, tiny_model, tiny_model_folder
):
    with serve(judge_handler(tiny_model)) as server:
        path = _design(tmp_path, tiny_model_folder, server.base_url)
        _json(capsys, str(path), "--measure", "--sample", "2")
        path.write_text(path.read_text().replace("seed = 7", "seed = 8"))
        assert main(["plan", str(path), "--measured"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--measured" in err[0] and "--measure" in err[0]
        assert main(["run", str(path), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    held = json.loads((tmp_path / "run" / "plan.json").read_text())
    assert held["basis"]["kind"] == "stated"
    capsys.readouterr()
    assert main(["status", str(tmp_path / "run")]) == 0
    assert "the plan: stated: a served judge's bounded" in capsys.readouterr().out


def test_measure_and_measured_together_are_one_line_and_exit_2(tmp_path, capsys, tiny_model_folder):
    path = _design(tmp_path, tiny_model_folder, "http://127.0.0.1:9/v1")
    assert main(["plan", str(path), "--measure", "--measured"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "give one of them" in err[0]
