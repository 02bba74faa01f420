"""`generation = { end_at_sentence = true }`: a text the token cap cut is used up to its last
full sentence — an entry, a letter, a local or a served chatbot's reply — still flagged
truncated, with every word written kept in the store's record; unset, texts are used whole and
the calls' cache keys are those made before the setting existed."""

from __future__ import annotations

import pytest

from diarylab.chatbots.specs import LocalChatbotSpec, ServedChatbotSpec, build_chatbot
from diarylab.experiments.kinds.benchmark.schema import GraderSettings
from diarylab.foundation.datafiles import validate
from diarylab.foundation.errors import LabError
from diarylab.model_access.settings import EndpointSettings, GenerationSettings
from diarylab.model_access.shared_models import LocalModels
from diarylab.steering.settings import CalibrationRule, ExtractionSettings
from diarylab.testing.fake_openai import chat_response, serve

ENDED = GenerationSettings(end_at_sentence=True)


@pytest.mark.parametrize(
    ("written", "used"),
    [
        ("I walked home. The rain had", "I walked home."),
        ('She asked "why?" and I', 'She asked "why?"'),
        ("Nothing ended here at all", "Nothing ended here at all"),
        ("Was it worth it? I think… maybe", "Was it worth it? I think…"),
        ("A line (an aside.) then more", "A line (an aside.)"),
    ],
)
def test_a_cut_text_ends_at_its_last_full_sentence(written, used):
    assert ENDED.ended(written, cut=True) == used
    assert ENDED.ended(written, cut=False) == written  # the writer ended it: used whole
    assert GenerationSettings().ended(written, cut=True) == written  # unset: used whole


def test_unset_leaves_the_cache_key_as_it_was():
    assert "end_at_sentence" not in GenerationSettings().key()
    assert ENDED.key()["end_at_sentence"] is True


@pytest.mark.parametrize("end_at_sentence", [True, False])
def test_a_served_chatbots_cut_reply_is_ended_and_kept_whole_in_its_record(end_at_sentence):
    written = "That sounds lonely. Have you told anyone how"
    spec = validate(
        ServedChatbotSpec,
        {
            "id": "api",
            "kind": "litellm",
            "model": "openai/fake-chat",
            "generation": {"max_new_tokens": 9, "end_at_sentence": end_at_sentence},
            "endpoint": {},
        },
        "t",
    )
    with serve(lambda body: (200, chat_response(written, finish_reason="length"))) as server:
        endpoint = EndpointSettings(base_url=server.base_url, max_retries=0)
        bot = build_chatbot(spec.model_copy(update={"endpoint": endpoint}), LocalModels())
        (reply,) = bot.reply_many([[{"role": "user", "content": "a day"}]], [1])
    assert reply.flag == "truncated"
    if end_at_sentence:
        assert reply.text == "That sounds lonely."
        assert reply.record["as_written"] == written
    else:
        assert reply.text == written and "as_written" not in reply.record


def test_a_local_chatbots_cut_reply_ends_at_a_sentence(tiny_model_folder, monkeypatch):
    spec = validate(
        LocalChatbotSpec,
        {
            "id": "tiny",
            "kind": "local",
            "model": str(tiny_model_folder),
            "generation": {"max_new_tokens": 4, "end_at_sentence": True},
        },
        "t",
    )
    bot = build_chatbot(spec, LocalModels())
    model = bot.model
    real = model.generate

    def written(prompts, generation, seeds):
        return [g.__class__(**{**g.__dict__, "text": "Fine. And you"})
                for g in real(prompts, generation, seeds=seeds)]  # fmt: skip

    monkeypatch.setattr(model, "generate", written)
    (reply,) = bot.reply_many([[{"role": "user", "content": "a day"}]], [1])
    assert (reply.text, reply.flag) == ("Fine.", "truncated")
    assert reply.record["as_written"] == "Fine. And you"


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (ExtractionSettings, {}),
        (CalibrationRule, {"judge": "j", "layers": [1], "strengths": [0.1]}),
        (GraderSettings, {}),
    ],
)
def test_texts_used_whole_refuse_the_setting_with_its_fix(model, data):
    """A vector's contrast texts, a calibration's samples and a grader's answer are used whole:
    the setting there would do nothing, so it is refused."""
    with pytest.raises(LabError) as refused:
        validate(model, {**data, "generation": {"end_at_sentence": True}}, "design.toml")
    assert "design.toml generation" in str(refused.value)
    assert "fix: remove end_at_sentence" in str(refused.value)
