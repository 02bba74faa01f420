"""Judge prompts encoded a line at a time, each line's ids remembered
(rubric/judging/line_encoding.py), give exactly what encoding each prompt whole gives, for every
tokenizer shape the lab tests (tests/rubric/test_vocab.py's six, the seed judges' own vocabularies
among them): on the lab's own rendered 0–100 and yes/no prompts, on texts made to trip a cut,
and on seeded random texts; and the lines a prompt shares with earlier ones are not encoded
again."""

from __future__ import annotations

import random

import pytest

from diarylab.rubric.entry_scores import EntryTemplates, entry_prompts
from diarylab.rubric.judging import line_encoding
from diarylab.rubric.judging.judge_render import render_judge_prompt
from diarylab.rubric.judging.line_encoding import encode_texts
from diarylab.testing.judge_tokenizers import tokenizer  # noqa: F401  (the fixture: six tokenizer shapes)

LETTER = (
    "Dear Sam,\n\n"
    "I stayed in again today. Nobody called, and I did not call anyone either.\n"
    "  An indented line, then a tab:\tand  double  spaces.\n"
    "3.5 and 1,000 at the start of a line; 42\n"
    "\n\n\n"
    "Ünïcode — “quotes” and an emoji 🙂\r\n"
    "- a list item\n"
    "(brackets) [square] {curly} <angle>\n"
    " leading space, trailing space \n"
    "\t\ttabs first\n"
    "!!!???...\n"
    "https://example.org/a/b?c=d\n"
    "Yours,\nM."
)

EDGES = [
    "a\nb",
    "\n\nstarts with breaks",
    "ends with a break\n",
    "ends with breaks\n\n\n",
    "x\n \ny\n  \n\tz",
    "word\n'quoted\n\"double\n’curly",
    "12\n34\n5.6\n,7",
    "é\n\u0301combining first\n\u200bzero width",
    "CRLF\r\nline\r\n\r\nnext",
    "[INST] special\n[/INST] tokens\n<|start|>user<|message|>x\n<|end|>",
    "  \n  \n  indented after blank lines",
    "long " * 200 + "\n" + "line " * 200,
]


def whole(tok, texts):
    return [list(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]


def score_prompts(tok, text: str) -> list[str]:
    patterns = [
        ("social_isolation", "Social isolation", "Withdrawing from others."),
        ("entitlement", "Entitlement", "Expecting special treatment."),
    ]
    prompts = entry_prompts(text, patterns, EntryTemplates.load())
    return [render_judge_prompt(tok, p).text for p in prompts.values()]


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    from weakref import WeakKeyDictionary

    monkeypatch.setattr(line_encoding, "_KNOWN", WeakKeyDictionary())


def test_a_letters_score_prompts_encode_as_each_whole(tokenizer):  # noqa: F811
    texts = score_prompts(tokenizer, LETTER)
    assert len(texts) == 4
    assert encode_texts(tokenizer, texts) == whole(tokenizer, texts)
    # ... again, now from what is remembered, and one at a time
    assert [encode_texts(tokenizer, [t])[0] for t in texts] == whole(tokenizer, texts)


@pytest.mark.parametrize("text", EDGES)
def test_texts_made_to_trip_a_cut_encode_as_whole(tokenizer, text):  # noqa: F811
    texts = [text, *score_prompts(tokenizer, text)]
    assert encode_texts(tokenizer, texts) == whole(tokenizer, texts)


def test_seeded_random_texts_encode_as_whole(tokenizer):  # noqa: F811
    rng = random.Random(20261205)
    parts = ["\n", "\n\n", " ", "  ", "\t", "\r\n", "a", "The", "word", "1", "23", ".", ",", "'",
             "é", "🙂", "—", "Score:", "[INST]", "<|end|>", "-", "(", ")"]  # fmt: skip
    texts = ["".join(rng.choice(parts) for _ in range(rng.randint(1, 60))) for _ in range(300)]
    assert encode_texts(tokenizer, texts) == whole(tokenizer, texts)
    # shared lines read back from what was remembered: still each text whole
    rng.shuffle(texts)
    assert encode_texts(tokenizer, texts) == whole(tokenizer, texts)


def test_a_letters_lines_are_encoded_once_across_its_prompts(
    tokenizer,  # noqa: F811
    monkeypatch,
    request,
):
    encoded: list[str] = []
    real = line_encoding.encode_whole
    monkeypatch.setattr(
        line_encoding, "encode_whole", lambda t, xs: encoded.extend(xs) or real(t, xs)
    )
    line = "I stayed in again today. Nobody called, and I did not call anyone either."
    first, *rest = score_prompts(tokenizer, LETTER)
    assert encode_texts(tokenizer, [first]) == whole(tokenizer, [first])
    assert any(line in text for text in encoded)
    encoded.clear()
    assert encode_texts(tokenizer, rest) == whole(tokenizer, rest)
    if request.node.callspec.params["tokenizer"] == "mistral":
        return  # SentencePiece-style: a line alone starts with a word mark; no cut holds
    # what was encoded: the lines not seen before (the other templates' own) and the text
    # around their cuts, never the letter's lines again
    assert encoded and not any(line in text for text in encoded)


def test_a_tokenizer_with_a_normalizer_encodes_whole(tokenizer, monkeypatch):  # noqa: F811
    from tokenizers import normalizers

    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        pytest.skip("no fast backend: encoded whole anyway")
    before = backend.normalizer
    backend.normalizer = normalizers.NFKC()
    try:
        calls: list[list[str]] = []
        real = line_encoding.encode_whole
        monkeypatch.setattr(
            line_encoding, "encode_whole", lambda t, xs: calls.append(list(xs)) or real(t, xs)
        )
        texts = score_prompts(tokenizer, LETTER)
        assert encode_texts(tokenizer, texts) == whole(tokenizer, texts)
        assert calls == [texts]
    finally:
        backend.normalizer = before
