"""The benchmark design's settings act where they should: the grader's generation settings and
template (design field or `run --grader-template`, kept on resume) reach the judge's requests;
retries sample at retry_temperature; the scoring convention chosen in the design is the one
the report scores by."""

from __future__ import annotations

import dataclasses
import json
import os

import pandas as pd
import pytest

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design, open_run_folder
from diarylab.experiments.kinds.benchmark.scoring import per_conversation, score
from diarylab.experiments.running.runner import run_design
from diarylab.foundation.datafiles import file_sha256
from diarylab.testing.benchmark_runs import DATA, design, servers  # noqa: F401 - the fixture
from diarylab.testing.stores import opened, requests

PUBLISHED = "GRADE THIS.\n<<conversation>>\nRUBRIC ITEM: <<rubric_item>>\nReply in JSON."


def writing_requests(server):
    """The grader's written answers: chat requests without log-probabilities (exact readings go
    to /v1/completions by token ids)."""
    return [r for r in server.requests if "messages" in r and not r.get("logprobs")]


def test_the_grader_template_and_generation_reach_the_judge(
    tmp_path,
    tiny_model_folder,
    servers,  # noqa: F811
):
    chat, judge = servers
    template = tmp_path / "published.txt"
    template.write_text(PUBLISHED)
    path = design(tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=1)
    path.write_text(
        path.read_text().replace("retries = 1 }", 'retries = 1, template = "published.txt" }')
    )
    run_design(load_design(path), tmp_path / "run", progress=False)
    assert main(["report", str(tmp_path / "run")]) == 0  # the run folder finds both files
    written = writing_requests(judge)
    assert written and all(r["max_tokens"] == 3 and r["temperature"] == 0 for r in written)
    assert all(r["messages"][-1]["content"].startswith("GRADE THIS.\n") for r in written)
    assert all("\n\nassistant: " in r["messages"][-1]["content"] for r in written)
    assert all("RUBRIC ITEM: [" in r["messages"][-1]["content"] for r in written)
    # grader.defaults = "reference" (the default): HealthBench's reference grader's system
    # message goes with a template that has none.
    assert all(
        r["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
        and len(r["messages"]) == 2
        for r in written
    )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["grader_template"]["sha256"] == file_sha256(template)
    assert manifest["grader_template"]["user_supplied"] is True
    assert manifest["grader_template"]["defaults"] == "reference"


def test_the_grader_defaults_are_the_reference_graders_and_the_labs_stay_an_option(
    tmp_path,
    tiny_model_folder,
    servers,  # noqa: F811
):
    """Without grader.generation: "reference" sends HealthBench's reference grader's system
    message at temperature 0.5 with its 2,048-token cap; "lab" sends no system message at
    temperature 0. The choice is in the manifest and the report."""
    chat, judge = servers
    for defaults, system, temperature in (("reference", True, 0.5), ("lab", False, 0.0)):
        judge.requests.clear()
        folder = tmp_path / defaults
        folder.mkdir()
        path = design(folder, tiny_model_folder, chat.base_url, judge.base_url, sample=1)
        path.write_text(
            path.read_text().replace(
                "grader = { generation = { max_new_tokens = 3 }, retries = 1 }",
                f'grader = {{ retries = 1, defaults = "{defaults}" }}',
            )
        )
        run_design(load_design(path), folder / "run", progress=False)
        written = writing_requests(judge)
        assert written
        for r in written:
            assert r["temperature"] == temperature and r["max_tokens"] == 2048
            assert (r["messages"][0]["role"] == "system") is system
            if system:
                assert r["messages"][0]["content"] == "You are a helpful assistant."
        manifest = json.loads((folder / "run" / "manifest.json").read_text())
        assert manifest["grader_template"]["defaults"] == defaults
        assert manifest["grader_template"]["generation"]["temperature"] == temperature
        assert main(["report", str(folder / "run")]) == 0
        findings = (folder / "run" / "report" / "findings.md").read_text()
        label = "HealthBench's reference grader" if system else "not the reference grader's"
        assert label in findings


def test_run_grader_template_option_is_kept_on_resume(
    tmp_path,
    tiny_model_folder,
    servers,  # noqa: F811
    capsys,
):
    chat, judge = servers
    template = tmp_path / "published.txt"
    template.write_text(PUBLISHED)
    path = design(tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=1)
    out = str(tmp_path / "run")
    args = ["run", str(path), "--out", out, "--no-progress"]
    assert main([*args, "--grader-template", str(template)]) == 0
    assert all(r["messages"][-1]["content"].startswith("GRADE") for r in writing_requests(judge))
    capsys.readouterr()
    assert main(args) == 2  # resuming without it would grade with another template
    assert "graded with another template" in capsys.readouterr().err
    assert main([*args, "--grader-template", str(template)]) == 0
    bad = tmp_path / "bad.txt"
    bad.write_text("nothing to fill in")
    assert main([*args, "--grader-template", str(bad)]) == 2
    assert "<<conversation>>" in capsys.readouterr().err


def test_retries_sample_at_the_retry_temperature(tmp_path, tiny_model_folder, servers):  # noqa: F811
    chat, judge = servers
    path = design(
        tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=1, local_judge=True
    )
    path.write_text(
        path.read_text().replace("retries = 1 }", "retries = 1, retry_temperature = 0.3 }")
    )
    run_design(load_design(path), tmp_path / "run", progress=False)
    with opened(tmp_path / "run") as store:
        asked = requests(store, "grader")
    temperature = {r["attempt"]: r["generation"]["temperature"] for r in asked}
    assert temperature == {0: 0.0, 1: 0.3}


@pytest.mark.parametrize("convention", ["mentalhealthbench", "healthbench"])
def test_the_design_chooses_the_scoring_convention(
    tmp_path,
    tiny_model_folder,
    servers,  # noqa: F811
    convention,
):
    chat, judge = servers
    path = design(tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=4)
    path.write_text(
        path.read_text().replace(
            'format = "mentalhealthbench"',
            f'format = "mentalhealthbench"\nconvention = "{convention}"',
        )
    )
    out = tmp_path / "run"
    run_design(load_design(path), out, progress=False)
    assert main(["report", str(out)]) == 0
    graded = pd.read_csv(out / "report" / "tables" / "graded_criteria.csv")
    board = pd.read_csv(out / "report" / "tables" / "leaderboard_met.csv")
    for row in board.itertuples():
        mine = graded[(graded.chatbot == row.chatbot) & (graded.judge == row.judge)]
        values = per_conversation(mine, "met").score
        assert row.score == pytest.approx(score(values, convention), nan_ok=True)
    findings = (out / "report" / "findings.md").read_text()
    assert f"({convention} convention)" in findings
    run = open_run_folder(out)
    assert run.design.spec.benchmark.scoring == convention
    run.store.close()
    assert dataclasses.is_dataclass(run.design)


def test_the_format_picks_the_schema(tmp_path, tiny_model_folder, capsys):
    hb = DATA.parent / "healthbench_synthetic.jsonl"
    path = design(tmp_path, tiny_model_folder, "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1")
    text = path.read_text().replace(os.path.relpath(DATA, tmp_path), str(hb))
    path.write_text(text.replace('format = "mentalhealthbench"', 'format = "healthbench"'))
    assert main(["design", "check", "--offline", str(path)]) == 0
    assert "6 of 20 conversations (communication 6)" in capsys.readouterr().out
    path.write_text(text)  # the HealthBench file read as MentalHealthBench rows
    assert main(["design", "check", "--offline", str(path)]) == 2
    assert f"{hb} line 1 id: missing" in capsys.readouterr().err


def test_benchmark_designs_refuse_what_they_cannot_use(tmp_path, tiny_model_folder, capsys):
    path = design(tmp_path, tiny_model_folder, "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1")
    base = path.read_text()
    cases = [
        (
            base.replace('model = "openai/fake-chat"', 'model = "openai/fake-chat"\nsystem = "Hi"'),
            "chatbots[2].system",
        ),
        (base.replace("seed = 5", "seed = 5\nentries = 2"), "design.entries"),
        (base.replace('tokenizer = "', 'prefill = false\ntokenizer = "'), "judges[0].prefill"),
        (base.replace('chatbot = "api"', 'chatbot = "ghost"'), "anchors[1].chatbot"),
        (base.replace(os.path.relpath(DATA, tmp_path), "absent.jsonl"), "benchmark.data"),
        (
            base.replace("[benchmark]", '[diarist_model]\nmodel = "smollm2"\n\n[benchmark]'),
            "diarist_model",
        ),
        (  # a benchmark steers nothing: [[profiles]] belong to kinds that write
            base.replace(
                "[benchmark]",
                '[[profiles]]\nid = "x"\npattern = "social_isolation"\n'
                "steer = { layers = [1], strength = 0.1 }\n\n[benchmark]",
            ),
            "profiles: unknown field",
        ),
    ]
    for text, where in cases:
        path.write_text(text)
        assert main(["design", "check", "--offline", str(path)]) == 2
        assert where in capsys.readouterr().err, where


def test_transport_failures_are_asked_again_and_never_stored(
    tmp_path, tiny_model_folder, tiny_model, monkeypatch, capsys
):
    """A chatbot server that fails: nothing of it is stored, and the next run asks again."""
    from diarylab.testing.benchmark_runs import scripted_judge
    from diarylab.testing.fake_openai import chat_response, serve

    monkeypatch.setenv("DIARYLAB_TEST_KEY", "sk-test")
    state = {"down": True}

    def flaky(body):
        if state["down"]:
            return 500, {"error": {"message": "overloaded", "type": "server_error"}}
        return 200, chat_response("I'm here. What happened today?")

    with serve(flaky) as chat, serve(scripted_judge(tiny_model)) as judge:
        path = design(tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=1)
        path.write_text(
            path.read_text().replace(
                'api_key_env = "DIARYLAB_TEST_KEY" }',
                'api_key_env = "DIARYLAB_TEST_KEY", max_retries = 1, backoff_s = 0.0 }',
                1,
            )
        )
        out = tmp_path / "run"
        args = ["run", str(path), "--out", str(out), "--no-progress"]
        assert main(args) == 2
        assert "no answer after 2 attempts" in capsys.readouterr().err
        with opened(out) as store:
            assert store.count("bench_replies", where={"chatbot": "api"}) == 0
        state["down"] = False
        assert main(args) == 0
    with opened(out) as store:
        [(text, flag)] = store.select("bench_replies", ["text", "flag"], where={"chatbot": "api"})
    assert text == "I'm here. What happened today?" and flag is None


GRADER_TOML = '''
[grader]
id = "published-grader"
version = 3
exact = true
max_tokens = 7
system = "You are a careful grader. {not a placeholder}"
user = """GRADE {this}.
<<conversation>>
RUBRIC ITEM: <<rubric_item>>
Return {"criteria_met": ...}."""
'''


def test_a_toml_template_carries_its_system_message_and_token_cap(
    tmp_path,
    tiny_model_folder,
    servers,  # noqa: F811
):
    """A published grader written in the lab's format with exact = true: its system message
    and max_tokens reach the judge, its text verbatim (braces untouched), when the design sets
    no grader.generation; the lab's own template caps at 2,048 like HealthBench's reference."""
    from diarylab.experiments.kinds.benchmark.grader import load_grader
    from diarylab.experiments.kinds.benchmark.schema import GraderSettings

    chat, judge = servers
    (tmp_path / "published.toml").write_text(GRADER_TOML)
    path = design(tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=1)
    path.write_text(
        path.read_text().replace(
            "grader = { generation = { max_new_tokens = 3 }, retries = 1 }",
            'grader = { retries = 1, template = "published.toml" }',
        )
    )
    run_design(load_design(path), tmp_path / "run", progress=False)
    written = writing_requests(judge)
    # The template's cap, at the reference grader's temperature (grader.defaults).
    assert written and all(r["max_tokens"] == 7 and r["temperature"] == 0.5 for r in written)
    for r in written:
        system, user = r["messages"]
        assert system == {
            "role": "system",
            "content": "You are a careful grader. {not a placeholder}",
        }
        assert user["content"].startswith("GRADE {this}.\n")  # then the role-labelled blocks
        assert "\n\nassistant: " in user["content"] and "RUBRIC ITEM: [" in user["content"]
        assert user["content"].endswith('Return {"criteria_met": ...}.')
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["grader_template"]["system_message"] is True
    assert manifest["grader_template"]["generation"]["max_new_tokens"] == 7
    assert manifest["grader_template"]["exact_text"] is True
    assert main(["report", str(tmp_path / "run")]) == 0
    findings = (tmp_path / "run" / "report" / "findings.md").read_text()
    assert "| grader system message | yes |" in findings
    lab = load_grader()
    assert lab.template.max_tokens == 2048 and not lab.exact_text
    assert GraderSettings().generation_for(lab.template.max_tokens).max_new_tokens == 2048
    (tmp_path / "unmarked.toml").write_text(GRADER_TOML.replace("<<rubric_item>>", "ITEM"))
    unmarked = ["run", str(path), "--out", str(tmp_path / "r2"), "--no-progress"]
    assert main([*unmarked, "--grader-template", str(tmp_path / "unmarked.toml")]) == 2
    assert not (tmp_path / "r2" / "store.sqlite").exists()


def test_anchors_need_a_standard_error_and_a_source_and_placeholders_are_flagged(
    tmp_path,
    tiny_model_folder,
    servers,  # noqa: F811
    capsys,
):
    chat, judge = servers
    path = design(tmp_path, tiny_model_folder, chat.base_url, judge.base_url, sample=1)
    base = path.read_text()
    first = '{ chatbot = "thanks", published = 0.05, se = 0.02, source = "test table 1" }'
    cases = [
        (first.replace(" se = 0.02,", ""), "anchors[0].se", "no standard error"),
        (first.replace(', source = "test table 1"', ""), "anchors[0].source", "names no source"),
        (first.replace("test table 1", "TODO fill in"), "anchors[0].source", "placeholder = true"),
        (first.replace("se = 0.02", "se = 0.0"), "anchors[0].se", ""),
    ]
    for anchor, where, says in cases:
        path.write_text(base.replace(first, anchor))
        assert main(["design", "check", "--offline", str(path)]) == 2, where
        err = capsys.readouterr().err
        assert where in err and says in err, err
    marked = first.replace("test table 1", "placeholder: to be looked up").replace(
        " }", ", placeholder = true }"
    )
    path.write_text(base.replace(first, marked))
    assert main(["design", "check", "--offline", str(path)]) == 0
    assert "anchors thanks have PLACEHOLDER published scores" in capsys.readouterr().out
    out = tmp_path / "run"
    run_design(load_design(path), out, progress=False)
    assert main(["report", str(out)]) == 0
    findings = (out / "report" / "findings.md").read_text()
    assert "published scale (PLACEHOLDER anchors)" in findings
    assert "**The anchors' published scores are placeholders**" in findings
    assert "| thanks | 0.050 | 0.020 | placeholder: to be looked up | yes |" in findings
