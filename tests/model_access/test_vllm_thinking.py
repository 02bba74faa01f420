"""A thinking chatbot on a real vLLM server (the `vllm` tier): the tiny Qwen3-shaped model of
testing/thinking_model.py, whose template opens a <think> block unless enable_thinking is false,
served once without a reasoning parser and once with `--reasoning-parser qwen3`. Through the
lab's served door, every reply's answer comes without its thinking, the thinking is kept beside
it, a reply cut inside its thinking is a failed reply, "off" reaches the server's template, and
`design check` names a chatbot that thinks where its design says it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from diarylab.chatbots.served import ServedChatbot
from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings, GenerationSettings
from diarylab.testing.lab_fixtures import design_text

pytestmark = pytest.mark.vllm

PARSERS = {"no parser": (), "qwen3 parser": ("--reasoning-parser", "qwen3")}
CONVERSATIONS = 16


@pytest.fixture(scope="module")
def thinking_folder(shape_servers) -> Path:
    return Path(shape_servers["thinking"])


@pytest.fixture(params=list(PARSERS))
def thinking_server(request, shape_servers):
    """The model served without and with the reasoning parser (tests/conftest.py
    `shape_servers`, which launches them with the seed judges' servers)."""
    return request.param, shape_servers["servers"][request.param]


def _chatbot(server, thinking: str, tokens: int = 6) -> ServedChatbot:
    client = ServedClient(
        server.litellm_model, EndpointSettings(base_url=server.base_url, concurrency=4)
    )
    generation = GenerationSettings(max_new_tokens=tokens, temperature=0.7)
    return ServedChatbot("open-qwen-like", client, generation, thinking=thinking)  # type: ignore[arg-type]


def _ask(bot: ServedChatbot, count: int = CONVERSATIONS):
    conversations = [[{"role": "user", "content": f"Today was day {i}."}] for i in range(count)]
    return bot.reply_many(conversations, list(range(count)))


def test_the_diarist_reads_the_answer_alone(thinking_server):
    parser, server = thinking_server
    replies = _ask(_chatbot(server, "apart"))
    cut = [r for r in replies if r.flag == "thinking_cut"]
    answered = [r for r in replies if r.flag != "thinking_cut"]
    assert cut and answered, [r.record for r in replies]  # both happen at 6 new tokens
    for reply in replies:
        assert "<think>" not in reply.text and "</think>" not in reply.text
        assert "thinking" in reply.record  # every reply of this model shows its thinking mode
    for reply in cut:
        assert reply.text == ""
    for reply in answered:
        assert reply.text.strip()
    if parser == "qwen3 parser":
        # The server's own split arrives through litellm: its reasoning field is what is kept.
        with_reasoning = [r for r in replies if r.record.get("reasoning")]
        assert with_reasoning
        for reply in with_reasoning:
            assert reply.record["thinking"] == reply.record["reasoning"].strip()
            assert "</think>" not in reply.record["content"]


def test_off_reaches_the_servers_chat_template(thinking_server, thinking_folder):
    """The prompt the server rendered for "off" is the template's enable_thinking = false
    branch: as many tokens more than the default as the local template gives."""
    from transformers import AutoTokenizer

    _, server = thinking_server
    tokenizer = AutoTokenizer.from_pretrained(thinking_folder)
    messages = [{"role": "user", "content": "Today was day 0."}]
    local = {
        off: len(
            tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, enable_thinking=not off, tokenize=True
            )["input_ids"]
        )
        for off in (True, False)
    }
    served = {
        off: _ask(_chatbot(server, "off" if off else "apart"), 1)[0].record["usage"]
        for off in (True, False)
    }
    assert (
        served[True]["prompt_tokens"] - served[False]["prompt_tokens"]
        == local[True] - local[False]
        > 0
    )


def _chatbots(server, settings: str = "") -> str:
    """The fixed baseline and the thinking chatbot on `server`, with further settings."""
    return f"""
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "open-qwen-like"
kind = "litellm"
model = "{server.litellm_model}"
endpoint = {{ base_url = "{server.base_url}", concurrency = 4 }}
{settings}"""


def test_design_check_names_the_chatbot_that_thinks(
    shape_servers, tmp_path, tiny_model_folder, capsys
):
    """On the server without a reasoning parser: the probe's greedy reply closes the block the
    template opened (behind the parser, this random model's greedy reply leaves nothing to
    see, so the check cannot be shown there)."""
    from diarylab.experiments.cli import main

    server = shape_servers["servers"]["no parser"]
    chatbot = _chatbots(server)
    design = tmp_path / "design.toml"
    design.write_text(design_text(tiny_model_folder, None, chatbots=chatbot))
    assert main(["design", "check", str(design)]) == 2
    err = capsys.readouterr().err
    assert "chatbots[1].thinking: chatbot 'open-qwen-like' thinks" in err
    design.write_text(
        design_text(tiny_model_folder, None, chatbots=chatbot + 'thinking = "apart"\n')
    )
    assert main(["design", "check", str(design)]) == 0, capsys.readouterr().err


def test_a_diary_run_stores_replies_without_thinking(
    thinking_server, tmp_path, tiny_model_folder, capsys
):
    from diarylab.experiments.cli import main
    from diarylab.testing.stores import snapshot

    parser, server = thinking_server
    chatbot = _chatbots(
        server, 'generation = { max_new_tokens = 6, temperature = 0.7 }\nthinking = "apart"\n'
    )
    design = tmp_path / "design.toml"
    text = design_text(tiny_model_folder, None, entries=2, chatbots=chatbot)
    design.write_text(
        text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    )
    out = tmp_path / "run"
    assert main(["run", str(design), "--out", str(out), "--no-progress"]) == 0, (
        capsys.readouterr().err
    )
    replies = [r for r in snapshot(out, ("replies",))["replies"] if "open-qwen-like" in r]
    assert replies
    for row in replies:
        assert not any("think>" in str(v) for v in row), row
