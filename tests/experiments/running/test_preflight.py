"""`design check` and the start of `run` make the same complete check before anything is
claimed: models resolvable, key variables set, served judges passing their probe. A design that
fails leaves nothing behind."""

from __future__ import annotations

from diarylab.experiments.cli import main
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import chat_response, closed_port_url, serve
from diarylab.testing.lab_fixtures import design_text

SERVED_JUDGE = """
[[judges]]
id = "served"
kind = "openai-compatible"
model = "openai/fake-judge"
mode = "top-k"
endpoint = {{ base_url = "{url}", max_retries = 0, timeout_s = 5 }}
"""
KEYED_CHATBOT = """
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "api"
kind = "litellm"
model = "openai/x"
endpoint = { api_key_env = "DIARYLAB_UNSET_KEY_FOR_TESTS" }
"""


def both_refuse(tmp_path, text, capsys, message, *, check_args=()):
    design = tmp_path / "design.toml"
    design.write_text(text)
    out = tmp_path / "run"
    assert main(["design", "check", str(design), *check_args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert main(["run", str(design), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert not out.exists()  # nothing claimed, nothing written


def test_a_judge_whose_server_is_down_fails_its_probe(tmp_path, tiny_model_folder, capsys):
    judges = SERVED_JUDGE.format(url=closed_port_url())
    text = design_text(tiny_model_folder, None, judges=judges)
    both_refuse(tmp_path, text, capsys, "judges[0].endpoint.base_url: no answer from the server")


def test_a_judge_without_log_probabilities_fails_its_probe(tmp_path, tiny_model_folder, capsys):
    with serve(lambda body: (200, chat_response("yes"))) as server:
        judges = SERVED_JUDGE.format(url=server.base_url)
        text = design_text(tiny_model_folder, None, judges=judges)
        both_refuse(tmp_path, text, capsys, "log-probabilities")


def test_a_judge_that_answers_passes_and_offline_skips_the_probe(
    tmp_path, tiny_model, tiny_model_folder
):
    with serve(judge_handler(tiny_model)) as server:
        design = tmp_path / "design.toml"
        # A tiny random model starts a number with low probability: the floor is lowered here.
        judges = SERVED_JUDGE.format(url=server.base_url) + "probe_floor = 0.0\n"
        design.write_text(design_text(tiny_model_folder, None, judges=judges))
        assert main(["design", "check", str(design)]) == 0
        probed = len(server.requests)
        # the check asks once for the log-probabilities the readings need, then probes
        assert probed >= 2 and server.requests[-1]["logprobs"] is True
        assert server.requests[0]["logprobs"] == 20 and "prompt" in server.requests[0]
        assert server.requests[1]["messages"][-1]["content"] == "Score:"  # the probe prompt
        assert main(["design", "check", str(design), "--offline"]) == 0
        assert len(server.requests) == probed


def test_a_judge_that_rarely_starts_a_number_on_the_probe_is_refused(
    tmp_path, tiny_model, tiny_model_folder, capsys
):
    with serve(judge_handler(tiny_model)) as server:
        judges = SERVED_JUDGE.format(url=server.base_url)
        text = design_text(tiny_model_folder, None, judges=judges)
        both_refuse(tmp_path, text, capsys, "is under probe_floor 0.9")


def test_an_exact_judge_whose_server_ignores_the_ids_is_refused(
    tmp_path, tiny_model, tiny_model_folder, capsys
):
    # mode "openai": a server without logprob_token_ids answers its top-k instead, so the probe
    # reads top-k where the design asked for exact.
    with serve(judge_handler(tiny_model, mode="openai")) as server:
        judges = SERVED_JUDGE.format(url=server.base_url).replace('mode = "top-k"\n', "") + (
            f'tokenizer = "{tiny_model_folder}"\ntop_logprobs = 5\nprobe_floor = 0.0\n'
        )
        text = design_text(tiny_model_folder, None, judges=judges)
        both_refuse(tmp_path, text, capsys, "read top-k, the judge asks for exact")


def test_an_unset_key_variable_is_refused(tmp_path, tiny_model_folder, capsys, monkeypatch):
    monkeypatch.delenv("DIARYLAB_UNSET_KEY_FOR_TESTS", raising=False)
    text = design_text(tiny_model_folder, None, chatbots=KEYED_CHATBOT)
    both_refuse(tmp_path, text, capsys, "DIARYLAB_UNSET_KEY_FOR_TESTS is not set")


def test_a_model_that_cannot_be_found_is_refused(tmp_path, tiny_model_folder, capsys):
    text = design_text(tiny_model_folder, None).replace(
        f'[diarist_model]\nmodel = "{tiny_model_folder}"',
        f'[diarist_model]\nmodel = "{tmp_path}/gone"',
    )
    both_refuse(tmp_path, text, capsys, "diarist_model.model")
