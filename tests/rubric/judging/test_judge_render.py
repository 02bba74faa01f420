"""rubric/judging/judge_render.py: the exact text a judge reads before its answer, in raw, chat
(with the
trimmed-space repair) and harmony form."""

from __future__ import annotations

import re

import pytest

from diarylab.foundation.errors import LabError
from diarylab.rubric.judging.judge_render import is_harmony, render_judge_prompt
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.judge_tokenizers import (
    harmony_tokenizer,
    mistral_style_tokenizer,
    thousand_numbers_tokenizer,
    tiny_judge,
)

RATE = [
    {"role": "system", "content": "Rate the diary entry from 0 to 100."},
    {"role": "user", "content": "Dear diary, today I felt alone."},
]
SCORE = JudgePrompt.chat(RATE, prefill="Score: ")
HARMONY_END = "<|start|>assistant<|channel|>final<|message|>"


def test_raw_text_is_read_as_written():
    rendered = render_judge_prompt(harmony_tokenizer(), JudgePrompt.raw("Score: "))
    assert (rendered.text, rendered.form, rendered.reasoning_effort) == ("Score: ", "raw", None)


def test_chat_ends_with_the_prefill_as_an_open_assistant_message():
    rendered = render_judge_prompt(mistral_style_tokenizer(), SCORE)
    assert rendered.form == "chat" and rendered.reasoning_effort is None
    assert rendered.text == (
        "<s>[SYSTEM_PROMPT]Rate the diary entry from 0 to 100.[/SYSTEM_PROMPT]"
        "[INST]Dear diary, today I felt alone.[/INST]Score: "
    )


def test_a_trimming_template_gets_the_prefill_space_back():
    tok = thousand_numbers_tokenizer()
    plain = tok.apply_chat_template(
        SCORE.chat_messages(), tokenize=False, continue_final_message=True
    )
    assert plain.endswith("Score:")  # what transformers gives: the space is gone
    rendered = render_judge_prompt(tok, SCORE)
    assert rendered.text == plain + " "
    assert tok.convert_ids_to_tokens(tok(rendered.text)["input_ids"])[-3:] == ["Score", ":", "Ġ"]


def test_no_prefill_opens_a_fresh_assistant_turn():
    rendered = render_judge_prompt(thousand_numbers_tokenizer(), JudgePrompt.chat(RATE))
    assert rendered.text.endswith("<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")


def test_harmony_answers_in_the_final_channel_with_the_reasoning_effort():
    tok = harmony_tokenizer()
    assert is_harmony(tok)
    assert not is_harmony(thousand_numbers_tokenizer())
    assert not is_harmony(mistral_style_tokenizer())
    rendered = render_judge_prompt(tok, SCORE)
    assert rendered.form == "harmony" and rendered.reasoning_effort == "low"
    assert rendered.text.endswith(HARMONY_END + "Score: ")
    assert rendered.text.count("<|start|>assistant") == 1  # the prefill is not a finished turn
    assert "Reasoning: low\n" in rendered.text and "Reasoning: medium" not in rendered.text
    assert "<|start|>developer<|message|># Instructions\n\nRate the diary entry" in rendered.text
    high = render_judge_prompt(tok, SCORE, reasoning_effort="high")
    assert "Reasoning: high\n" in high.text and high.reasoning_effort == "high"


def test_harmony_history_and_no_prefill():
    tok = harmony_tokenizer()
    history = JudgePrompt.chat(
        [
            {"role": "user", "content": "Dear diary."},
            {"role": "assistant", "content": "That sounds kind."},
            {"role": "user", "content": "Is this reply kind?"},
        ]
    )
    text = render_judge_prompt(tok, history).text
    # Earlier assistant turns are finished final-channel messages; the answer's channel is open.
    assert "<|start|>assistant<|channel|>final<|message|>That sounds kind.<|end|>" in text
    assert text.endswith("<|start|>user<|message|>Is this reply kind?<|end|>" + HARMONY_END)


from diarylab.rubric.judging.judge_render import HARMONY_DATE  # noqa: E402


def test_harmony_matches_continuing_the_final_message_where_transformers_can():
    # transformers' continue_final_message cuts the rendered final message after its content;
    # on a harmony template that is the same text (vLLM's harmony renderer has no such cut).
    tok = harmony_tokenizer()
    continued = tok.apply_chat_template(
        SCORE.chat_messages(), tokenize=False, continue_final_message=True, reasoning_effort="low"
    )
    today = re.search(r"Current date: [0-9-]+", continued).group(0)
    fixed = render_judge_prompt(tok, SCORE).text
    assert fixed == continued.replace(today, f"Current date: {HARMONY_DATE}")


def test_what_cannot_be_rendered_is_a_lab_error():
    tok = mistral_style_tokenizer()
    with pytest.raises(LabError, match="reasoning effort"):
        render_judge_prompt(harmony_tokenizer(), SCORE, reasoning_effort="maximal")
    with pytest.raises(LabError, match="refused the conversation"):
        render_judge_prompt(tok, JudgePrompt.chat([{"role": "tool", "content": "x"}], "Score: "))
    tok.chat_template = (
        "{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}{% endif %}{% endfor %}"
    )
    with pytest.raises(LabError, match="refused the conversation"):  # the prefill vanishes
        render_judge_prompt(tok, SCORE)
    with pytest.raises(LabError, match="does not end the prompt with the prefill"):
        # a trimming template leaves nothing of a prefill that is all space
        render_judge_prompt(thousand_numbers_tokenizer(), JudgePrompt.chat(RATE, prefill=" "))
    tok.chat_template = None
    with pytest.raises(LabError, match="no chat template"):
        render_judge_prompt(tok, SCORE)


def test_a_harmony_template_without_a_generation_prompt_is_refused():
    tok = harmony_tokenizer()
    tok.chat_template = tok.chat_template.replace("{{- '<|start|>assistant' }}", "")
    with pytest.raises(LabError, match="does not end the prompt"):
        render_judge_prompt(tok, SCORE)


def test_local_judge_reads_the_rendered_prompt_and_records_harmony_effort():
    harmony = LocalJudge(tiny_judge(harmony_tokenizer()))
    assert harmony.prompt_text(SCORE) == render_judge_prompt(harmony_tokenizer(), SCORE).text
    assert harmony.identity()["reasoning_effort"] == "low"
    harmony.reasoning_effort = "high"
    assert harmony.identity()["reasoning_effort"] == "high"
    assert "Reasoning: high" in harmony.prompt_text(SCORE)
    for tok in (mistral_style_tokenizer(), thousand_numbers_tokenizer()):
        assert "reasoning_effort" not in LocalJudge(tiny_judge(tok)).identity()


def test_a_harmony_prompt_states_a_fixed_date_not_today():
    from diarylab.rubric.judging.judge_render import HARMONY_DATE, render_judge_prompt
    from diarylab.rubric.prompts import JudgePrompt
    from diarylab.testing.judge_tokenizers import harmony_tokenizer

    prompt = JudgePrompt.chat([{"role": "user", "content": "Rate it."}], prefill="Score: ")
    text = render_judge_prompt(harmony_tokenizer(), prompt).text
    assert f"Current date: {HARMONY_DATE}" in text
    assert text.count("Current date:") == 1
