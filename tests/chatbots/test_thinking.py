"""A thinking chatbot's replies: the diarist reads the answer alone, the thinking is kept beside
it in the stored result, a reply cut inside its thinking is a failed reply, and "off" asks the
chat template not to think (chatbots/thinking.py). Against a loopback OpenAI-compatible server
answering in each shape vLLM does: a <think> block in the content (no reasoning parser), the
block opened by the template (content starts inside it), and vLLM's `reasoning` field (with
--reasoning-parser; vllm/entrypoints/openai/chat_completion/protocol.py, ChatMessage)."""

from __future__ import annotations

from typing import Any

import pytest

from diarylab.chatbots.served import ServedChatbot
from diarylab.chatbots.thinking import split_thinking
from diarylab.model_access.served import ServedClient
from diarylab.model_access.settings import EndpointSettings, GenerationSettings
from diarylab.testing.fake_openai import chat_response, serve


@pytest.mark.parametrize(
    ("content", "reasoning", "finish", "thinking", "answer", "kept", "cut"),
    [
        (
            "<think>\nweigh it\n</think>\n\nI hear you.",
            "",
            "stop",
            "none",
            "I hear you.",
            "weigh it",
            False,
        ),
        (
            "weigh it\n</think>\n\nI hear you.",
            "",
            "stop",
            "apart",
            "I hear you.",
            "weigh it",
            False,
        ),
        ("I hear you.", "weigh it", "stop", "apart", "I hear you.", "weigh it", False),
        ("<think>\nweigh it, then", "", "length", "none", "", "weigh it, then", True),
        ("", "weigh it, then", "length", "apart", "", "weigh it, then", True),
        ("weigh it, then", "", "length", "apart", "", "weigh it, then", True),
        ("I hear you, and", "", "length", "none", "I hear you, and", "", False),
        ("I hear you.", "", "stop", "off", "I hear you.", "", False),
        ("weigh it\n</think>\n\n", "", "length", "apart", "", "weigh it", True),
    ],
)
def test_the_answer_is_split_from_the_thinking(
    content, reasoning, finish, thinking, answer, kept, cut
):
    split = split_thinking(content, reasoning, finish, thinking)
    assert (split.answer, split.thinking, split.cut) == (answer, kept, cut)


def _bot(url: str, thinking: str = "none", tokens: int = 30) -> ServedChatbot:
    settings = EndpointSettings(base_url=url, max_retries=0)
    client = ServedClient("hosted_vllm/qwen-like", settings)
    generation = GenerationSettings(max_new_tokens=tokens, temperature=0.0)
    return ServedChatbot("qwen", client, generation, thinking=thinking)  # type: ignore[arg-type]


def _with_reasoning(text: str | None, reasoning: str, finish: str = "stop") -> dict[str, Any]:
    body = chat_response(text, finish_reason=finish)
    body["choices"][0]["message"]["reasoning"] = reasoning
    return body


@pytest.mark.parametrize(
    "body",
    [
        chat_response("<think>\nShe sounds tired.\n</think>\n\nThat sounds heavy."),
        chat_response("She sounds tired.\n</think>\n\nThat sounds heavy."),
        _with_reasoning("That sounds heavy.", "She sounds tired."),
    ],
    ids=["block in content", "template opened the block", "reasoning parser"],
)
def test_a_reply_keeps_its_thinking_apart(body):
    with serve(lambda request: (200, body)) as server:
        [reply] = _bot(server.base_url).reply_many([[{"role": "user", "content": "hi"}]], [1])
    assert reply.text == "That sounds heavy." and reply.flag is None
    assert reply.record["thinking"] == "She sounds tired."
    assert "She sounds tired." not in reply.text


@pytest.mark.parametrize(
    "body",
    [
        chat_response("<think>\nShe sounds tired, and I", finish_reason="length"),
        _with_reasoning(None, "She sounds tired, and I", finish="length"),
    ],
    ids=["no parser", "reasoning parser"],
)
def test_a_reply_cut_inside_its_thinking_is_a_failed_reply(body):
    with serve(lambda request: (200, body)) as server:
        [reply] = _bot(server.base_url, "apart").reply_many(
            [[{"role": "user", "content": "hi"}]], [1]
        )
    assert reply.text == "" and reply.flag == "thinking_cut"
    assert reply.record["thinking"] == "She sounds tired, and I"


def test_off_asks_the_template_not_to_think_and_is_part_of_the_request():
    with serve(lambda request: (200, chat_response("That sounds heavy."))) as server:
        off, none = _bot(server.base_url, "off"), _bot(server.base_url, "none")
        off.reply_many([[{"role": "user", "content": "hi"}]], [1])
        none.reply_many([[{"role": "user", "content": "hi"}]], [1])
    sent_off, sent_none = server.requests
    assert sent_off["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in sent_none
    conversation = [{"role": "user", "content": "hi"}]
    assert off.request(conversation, 1) != none.request(conversation, 1)  # a cache key apart
