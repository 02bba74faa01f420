"""The plan's tokens against a real vLLM server's own counters (the `vllm` tier): a short diary
run whose chatbot is the tiny Qwen3-shaped model (its thinking kept apart) and whose judge is
the Mistral-format seed shape read exactly (testing/served_tokens.py). For each served model, the
prompt tokens, the part of them its prefix cache held, the tokens generated and the requests —
as `diarylab plan` says before the run — are within ±15 % of what its server counted."""

from __future__ import annotations

import pytest

from diarylab.testing.served_tokens import CHATBOT, COUNTERS, JUDGE, plan_and_run

pytestmark = pytest.mark.vllm

TOLERANCE = 0.15


@pytest.fixture(scope="module")
def counted(shape_servers, tiny_model_folder, tmp_path_factory):
    servers = shape_servers["servers"]
    return plan_and_run(
        tmp_path_factory.mktemp("plan-tokens"),
        tiny_model_folder,
        servers["no parser"],
        servers["mistral"],
        shape_servers["mistral_hf"],
    )


@pytest.mark.parametrize("model", [CHATBOT, JUDGE])
@pytest.mark.parametrize("counter", list(COUNTERS))
def test_planned_tokens_are_within_15_percent_of_the_servers_counters(counted, model, counter):
    c = counted[model]
    assert c.server[counter] > 0, c
    assert c.planned[counter] == pytest.approx(c.server[counter], rel=TOLERANCE), c


def test_design_check_names_a_context_too_short_and_too_few_logprobs(
    shape_servers, tiny_model_folder, tmp_path, capsys
):
    """The servers hold 2,048 tokens a sequence and vLLM's default 20 log-probabilities:
    replies that may run to 3,000 tokens are too long for the chatbot's server (and for the
    judge's, which reads them), each one line naming the entry and the flag that fixes it; a
    top-k judge asking 50 log-probabilities is one line too."""
    from diarylab.experiments.cli import main
    from diarylab.testing.served_tokens import design

    servers = shape_servers["servers"]
    text = design(tiny_model_folder, servers["no parser"], servers["mistral"],
                  shape_servers["mistral_hf"])  # fmt: skip
    path = tmp_path / "design.toml"
    path.write_text(text.replace("max_new_tokens = 32,", "max_new_tokens = 3000,"))
    assert main(["design", "check", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    context = [x for x in err if "chatbots[1].endpoint.base_url" in x]
    assert len(context) == 1 and "holds 2048 tokens" in context[0], err
    assert "--max-model-len" in context[0]
    assert any("judges[0].endpoint.base_url" in x and "holds 2048" in x for x in err), err
    path.write_text(text.replace("max_error = 0.0", 'mode = "top-k"\ntop_logprobs = 50'))
    assert main(["design", "check", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "judges[0].endpoint.base_url" in err[0], err
    assert "refuses 50 log-probabilities" in err[0] and "--max-logprobs 50" in err[0]
