"""`diarylab judge read|score|rubric` on the tiny model (in a folder) and a served stand-in."""

from __future__ import annotations

import json

import pytest

from experiments.cli import main
from model_access.local import LocalModel
from model_access.settings import LocalSettings
from rubric.local_judge import LocalJudge
from rubric.prompts import JudgePrompt
from tests.fake_judge_server import judge_handler
from tests.fake_openai import serve

PROMPT = "Rate the entry from 0 to 100.\nScore: "


def run_json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def folder_judge(tiny_model_folder):
    return LocalJudge(LocalModel.load(str(tiny_model_folder), LocalSettings(device="cpu")))


def test_read_prompt_file_is_exactly_what_the_model_sees(
    tmp_path, capsys, tiny_model_folder, folder_judge
):
    f = tmp_path / "prompt.txt"
    f.write_text(PROMPT)
    out = run_json(
        capsys,
        "judge",
        "read",
        "--judge",
        str(tiny_model_folder),
        "--prompt-file",
        str(f),
        "--floor",
        "0",
        "--json",
    )
    assert len(out["distribution"]) == 101
    expected = folder_judge.read_number(JudgePrompt.raw(PROMPT), floor=0.0)
    assert out["distribution"] == pytest.approx(list(expected.distribution), abs=1e-9)
    assert out["mean"] == pytest.approx(expected.mean) and out["mode"] == expected.mode
    assert out["coverage"] == pytest.approx(expected.coverage)


def test_read_unreadable_by_default_floor(tmp_path, capsys, tiny_model_folder):
    f = tmp_path / "prompt.txt"
    f.write_text(PROMPT)
    out = run_json(
        capsys,
        "judge",
        "read",
        "--judge",
        str(tiny_model_folder),
        "--prompt-file",
        str(f),
        "--json",
    )
    assert out["readable"] is False and out["mean"] is None and out["mode"] is None


def test_read_yes_no_and_message_file(tmp_path, capsys, tiny_model_folder, folder_judge):
    f = tmp_path / "q.txt"
    f.write_text("Is this entry about loneliness? Answer yes or no.")
    out = run_json(
        capsys,
        "judge",
        "read",
        "--judge",
        str(tiny_model_folder),
        "--message-file",
        str(f),
        "--prefill",
        "Answer:",
        "--yes-no",
        "--floor",
        "0",
        "--json",
    )
    expected = folder_judge.read_yes_no(
        JudgePrompt.chat([{"role": "user", "content": f.read_text()}], prefill="Answer:"), floor=0.0
    )
    assert out["p_yes"] == pytest.approx(expected.p_yes)
    assert out["coverage"] == pytest.approx(expected.coverage)


def test_score_with_a_shipped_pattern_and_with_a_definition_file(
    tmp_path, capsys, tiny_model_folder
):
    entry = tmp_path / "entry.txt"
    entry.write_text("Nobody called. I ate dinner alone again and did not mind, or said I didn't.")
    out = run_json(
        capsys,
        "judge",
        "score",
        "--judge",
        str(tiny_model_folder),
        "--entry-file",
        str(entry),
        "--pattern",
        "social_isolation",
        "--floor",
        "0",
        "--json",
    )
    assert set(out) == {"pattern", "coherence", "realism"}
    assert out["pattern"]["id"] == "social_isolation"
    assert out["coherence"]["template"]["id"] == "entry-coherence"
    definition = tmp_path / "def.txt"
    definition.write_text("Feels owed special treatment.")
    out = run_json(
        capsys,
        "judge",
        "score",
        "--judge",
        str(tiny_model_folder),
        "--entry-file",
        str(entry),
        "--pattern",
        "my_pattern",
        "--definition-file",
        str(definition),
        "--json",
    )
    assert out["pattern"]["id"] == "my_pattern" and len(out["realism"]["distribution"]) == 101


def test_rubric_prints_fifteen_probabilities(tmp_path, capsys, tiny_model_folder):
    conv = tmp_path / "conv.json"
    conv.write_text(
        json.dumps(
            [
                {"role": "user", "content": "Day 1. Quiet."},
                {"role": "assistant", "content": "Okay."},
                {"role": "user", "content": "Day 2. Nobody came."},
                {"role": "assistant", "content": "You should join a club."},
            ]
        )
    )
    out = run_json(
        capsys,
        "judge",
        "rubric",
        "--judge",
        str(tiny_model_folder),
        "--conversation-file",
        str(conv),
        "--floor",
        "0",
        "--json",
    )
    assert len(out["questions"]) == 15 and set(out["person"]) == {"risk", "rigid_view"}
    assert all(0 <= q["p_yes"] <= 1 for q in out["questions"].values())


def test_served_judge_through_the_cli(tmp_path, capsys, tiny_model):
    f = tmp_path / "m.txt"
    f.write_text("Rate the entry from 0 to 100.")
    with serve(judge_handler(tiny_model, mode="openai")) as server:
        out = run_json(
            capsys,
            "judge",
            "read",
            "--judge",
            "litellm:openai/fake-judge",
            "--base-url",
            server.base_url,
            "--message-file",
            str(f),
            "--prefill",
            "Score: ",
            "--floor",
            "0",
            "--json",
        )
    assert len(out["distribution"]) == 101 and out["exact"] is False
    assert server.requests[0]["temperature"] == 0


@pytest.mark.parametrize(
    "argv,match",
    [
        (["read", "--judge", "smollm2", "--prompt-file", "/nonexistent/p.txt"], "not found"),
        (["read", "--judge", "nope nope", "--prompt-file", "{tmp}/p.txt"], "unknown model"),
        (["rubric", "--judge", "smollm2", "--conversation-file", "{tmp}/bad.json"], "JSON"),
        (["read", "--judge", "litellm:", "--prompt-file", "{tmp}/p.txt"], "names no model"),
    ],
)
def test_user_mistakes_exit_2_with_one_message(tmp_path, capsys, argv, match):
    (tmp_path / "p.txt").write_text("Score: ")
    (tmp_path / "bad.json").write_text("{not json")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(["judge", *argv]) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1
