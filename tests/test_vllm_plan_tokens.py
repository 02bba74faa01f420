"""The plan's tokens against a real vLLM server's own counters (the `vllm` tier): a short diary
run whose chatbot is the tiny Qwen3-shaped model (its thinking kept apart) and whose judge is
the Mistral-format seed shape read exactly (tests/served_tokens.py). For each served model, the
prompt tokens, the part of them its prefix cache held, the tokens generated and the requests —
as `diarylab plan` says before the run — are within ±15 % of what its server counted."""

from __future__ import annotations

import pytest

from tests.served_tokens import CHATBOT, COUNTERS, JUDGE, plan_and_run

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
