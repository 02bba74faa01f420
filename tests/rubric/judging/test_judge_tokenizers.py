"""The judge tokenizers built in code (testing/judge_tokenizers.py) have the shapes the served
judges' tokenizers have, and the local judge reads each of them exactly: its trie/KV-cache
reading equals scoring every number with its own full forward pass."""

from __future__ import annotations

import pytest

from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.judging.local_judge import LocalJudge
from diarylab.rubric.judging.vocab import number_tokens, vocab_facts
from diarylab.rubric.judging.yes_no import YesNoReading
from diarylab.rubric.prompts import JudgePrompt
from diarylab.testing.judge_helpers import brute_force_distribution
from diarylab.testing.judge_tokenizers import (
    harmony_tokenizer,
    mistral_style_tokenizer,
    thousand_numbers_tokenizer,
    tiny_judge,
)

TOKENIZERS = {
    "mistral": mistral_style_tokenizer,
    "thousand": thousand_numbers_tokenizer,
    "harmony": harmony_tokenizer,
}
SCORE = JudgePrompt.chat(
    [
        {"role": "system", "content": "Rate the diary entry from 0 to 100."},
        {"role": "user", "content": "Dear diary, today I felt alone."},
    ],
    prefill="Score: ",
)
QUESTION = JudgePrompt.chat([{"role": "user", "content": "Is this reply kind?"}], prefill="Answer:")


def pieces(tokenizer, text: str) -> list[str]:
    return tokenizer.convert_ids_to_tokens(tokenizer(text, add_special_tokens=False)["input_ids"])


@pytest.fixture(scope="module", params=list(TOKENIZERS))
def judge(request) -> LocalJudge:
    return LocalJudge(tiny_judge(TOKENIZERS[request.param]()))


def test_mistral_style_writes_one_digit_per_token_after_a_lone_space_marker():
    tok = mistral_style_tokenizer()
    assert pieces(tok, "Score: 85")[-5:] == ["▁Score", ":", "▁", "8", "5"]
    assert pieces(tok, "Score: 100")[-4:] == ["▁", "1", "0", "0"]
    facts = vocab_facts(tok)
    # Byte-fallback digits write digits too, and decoding "▁" alone gives "" (the reason ids
    # must never be classified by decode([id])).
    assert tok.convert_tokens_to_ids("<0x35>") in facts.continuation_ids
    assert tok.decode([tok.convert_tokens_to_ids("▁")]) == ""
    assert len(facts.continuation_ids) == 20
    yes = {facts.raw_tokens[i] for i in facts.yes_ids}
    assert {"Yes", "▁Yes", "yes", "▁yes"} <= yes
    text = "Dear diary, naïve 7.5 — well"  # characters outside the vocabulary: bytes
    assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text


def test_thousand_numbers_are_single_tokens_far_over_128_ids():
    tok = thousand_numbers_tokenizer()
    for n in (0, 7, 85, 100, 250, 999):
        assert pieces(tok, f"Score: {n}")[-2:] == ["Ġ", str(n)]
    assert pieces(tok, "Score: 1000")[-2:] == ["100", "0"]
    assert len(vocab_facts(tok).continuation_ids) >= 1000


def test_templates_keep_or_trim_the_prefill_space_like_their_originals():
    messages = [
        {"role": "user", "content": "Rate it."},
        {"role": "assistant", "content": "Score: "},
    ]
    kept = mistral_style_tokenizer().apply_chat_template(
        messages, tokenize=False, continue_final_message=True
    )
    assert kept.endswith("[INST]Rate it.[/INST]Score: ")
    trimmed = thousand_numbers_tokenizer().apply_chat_template(
        messages, tokenize=False, continue_final_message=True
    )
    assert trimmed.endswith("<|start_header_id|>assistant<|end_header_id|>\n\nScore:")


def test_harmony_tokenizer_has_the_special_tokens_and_a_finished_final_message():
    tok = harmony_tokenizer()
    ids = tok("<|start|>assistant<|channel|>final<|message|>Score: 85", add_special_tokens=False)[
        "input_ids"
    ]
    assert tok.convert_ids_to_tokens(ids) == [
        "<|start|>",
        "assistant",
        "<|channel|>",
        "final",
        "<|message|>",
        "Score",
        ":",
        "Ġ",
        "85",
    ]
    special = {t.content for t in tok.added_tokens_decoder.values() if t.special}
    assert {"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>"} <= special
    messages = [
        {"role": "user", "content": "Rate it."},
        {"role": "assistant", "content": "Score: "},
    ]
    text = tok.apply_chat_template(messages, tokenize=False)
    assert "Reasoning: medium\n" in text  # the template's own default
    assert text.endswith("<|start|>assistant<|channel|>final<|message|>Score: <|return|>")
    assert len(vocab_facts(tok).continuation_ids) >= 1000


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_a_tokenizer_only_folder_reads_back_the_same(name, tmp_path):
    """A served judge's client loads just the tokenizer (no weights) from a folder or hub id."""
    from transformers import AutoTokenizer

    tok = TOKENIZERS[name]()
    tok.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    text = render_judge_prompt(tok, SCORE).text
    assert render_judge_prompt(loaded, SCORE).text == text
    assert loaded(text + "85")["input_ids"] == tok(text + "85")["input_ids"]
    assert loaded.get_vocab() == tok.get_vocab()


def test_numbers_are_prefix_stable_after_the_rendered_prompt(judge):
    text = render_judge_prompt(judge.model.tokenizer, SCORE).text
    numbers = number_tokens(judge.model.tokenizer, text)
    assert numbers.prompt_ids == tuple(judge.model.encode(text))
    assert "".join(numbers.pieces[85]) == "85"


def test_local_reading_equals_brute_force(judge):
    reading = judge.read_number(SCORE, floor=0.0)
    brute = brute_force_distribution(judge.model, judge.prompt_text(SCORE))
    for a, b in zip(reading.distribution, brute, strict=True):
        assert abs(a - b) <= 1e-5
    assert reading.coverage == pytest.approx(sum(brute), abs=1e-5)
    mean = sum(n * p for n, p in enumerate(brute)) / sum(brute)
    assert reading.mean == pytest.approx(mean, abs=1e-5)
    # The tiny judge is judge-like: a fair share of its mass writes a number, not all of it.
    assert 0.05 < reading.coverage < 0.95


def test_a_full_stop_after_a_number_is_plausible(judge):
    text = judge.prompt_text(SCORE) + "8"
    row = judge.model.full_pass_logprobs(judge.model.encode(text))[-1].exp()
    assert float(row[judge.model.tokenizer.convert_tokens_to_ids(".")]) > 0.01


def test_yes_no_reading_equals_a_plain_forward_pass(judge):
    record = judge.yes_no_record(QUESTION)
    reading = YesNoReading.from_record(record, floor=0.0)
    row = judge.model.full_pass_logprobs(judge.model.encode(judge.prompt_text(QUESTION)))[-1]
    facts = judge.facts
    yes = float(row[list(facts.yes_ids)].exp().sum())
    no = float(row[list(facts.no_ids)].exp().sum())
    assert reading.coverage == pytest.approx(yes + no, abs=1e-5)
    assert reading.p_yes == pytest.approx(yes / (yes + no), abs=1e-5)
    assert 0.01 < reading.coverage < 0.99


def test_tiny_judge_is_deterministic_per_seed():
    tok = mistral_style_tokenizer()
    first = LocalJudge(tiny_judge(tok, seed=1)).read_number(SCORE, floor=0.0)
    again = LocalJudge(tiny_judge(tok, seed=1)).read_number(SCORE, floor=0.0)
    other = LocalJudge(tiny_judge(tok, seed=2)).read_number(SCORE, floor=0.0)
    assert first.distribution == again.distribution
    assert first.distribution != other.distribution
