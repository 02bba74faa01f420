"""The kind contract a new kind can fulfil alone: a toy kind that lives in testing/toy_kind.py (and
nowhere in the lab) is registered from outside and runs through design check, plan, run, status
and report like the lab's own kinds."""

from __future__ import annotations

import json

import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.kinds import forget_kind, kind_names, register_kind

NOTES = ["The kettle broke and I laughed about it.", "Nobody called today. I did not mind."]


@pytest.fixture()
def toy(tmp_path, tiny_model_folder):
    register_kind("toy", "diarylab.testing.toy_kind")
    path = tmp_path / "toy.toml"
    path.write_text(
        f"""
[design]
name = "toy-run"
kind = "toy"
seed = 3
coverage_floor = 0.0

[toy]
notes = {json.dumps(NOTES)}

[[judges]]
id = "tiny-judge"
kind = "local"
model = "{tiny_model_folder}"
"""
    )
    yield path
    forget_kind("toy")


def test_a_kind_from_outside_the_lab_runs_through_every_command(toy, tmp_path, capsys):
    assert "toy" in kind_names()
    assert main(["design", "check", str(toy), "--offline"]) == 0
    assert "2 notes, 1 judge(s)" in capsys.readouterr().out
    assert main(["plan", str(toy), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["kind"] == "toy" and plan["readings"] == {"tiny-judge": {"number": 2}}
    out = tmp_path / "run"
    assert main(["run", str(toy), "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["status", str(out)]) == 0
    status = capsys.readouterr().out
    assert "toy_notes" in status and "judgments" in status
    assert "tiny-judge 0–100: 2 of 2 readings" in status
    assert main(["report", str(out)]) == 0
    findings = (out / "report" / "findings.md").read_text(encoding="utf-8")
    assert "| note0 | tiny-judge |" in findings and "| note1 | tiny-judge |" in findings
    # resumed: nothing is made again, the same readings stand
    assert main(["run", str(toy), "--out", str(out), "--no-progress"]) == 0
    assert "read from the store" in capsys.readouterr().out


def test_an_unregistered_kind_is_one_clear_error(tmp_path, capsys):
    path = tmp_path / "design.toml"
    path.write_text('[design]\nname = "x"\nkind = "nosuch"\nseed = 1\n')
    assert main(["design", "check", str(path), "--offline"]) == 2
    err = capsys.readouterr().err
    assert "unknown experiment kind 'nosuch'" in err and "Traceback" not in err
