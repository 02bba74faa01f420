"""What a tokenizer's vocabulary holds for reading judges: which tokens continue a number (text
starting with an ASCII digit), which are yes/no variants, and how each 0..100 is tokenized right
after a given prompt (checked to be prefix-stable)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from foundation.errors import LabError
from rubric.expected import NUMBERS, continues_number
from rubric.yes_no import answer_of

# SentencePiece byte-fallback tokens for the digits ("<0x30>".."<0x39>") write digits too.
_BYTE_DIGIT = re.compile(r"^<0x3[0-9]>$")


@dataclass(frozen=True)
class VocabFacts:
    continuation_ids: tuple[int, ...]
    yes_ids: tuple[int, ...]
    no_ids: tuple[int, ...]
    raw_tokens: tuple[str, ...]  # index = id; for records and messages


def vocab_facts(tokenizer: Any) -> VocabFacts:
    """Read from the raw vocabulary strings, not from decoding single tokens: decoding drops a
    SentencePiece token's leading space marker, which would make "▁5" look like a digit."""
    size = len(tokenizer)
    tokens = tokenizer.convert_ids_to_tokens(list(range(size)))
    raw = [str(t) if t is not None else "" for t in tokens]
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    cont, yes, no = [], [], []
    for i, token in enumerate(raw):
        if i in special:
            continue
        if continues_number(token) or _BYTE_DIGIT.match(token):
            cont.append(i)
        answer = answer_of(token)
        if answer == "yes":
            yes.append(i)
        elif answer == "no":
            no.append(i)
    return VocabFacts(tuple(cont), tuple(yes), tuple(no), tuple(raw))


def answer_ids(facts: VocabFacts, words: tuple[str, str]) -> tuple[tuple[int, ...], ...]:
    """The token ids of each answer's variants: yes/no from the facts, other words (a JSON
    answer's true/false) found the same way in the raw vocabulary."""
    if words == ("yes", "no"):
        return facts.yes_ids, facts.no_ids
    first: list[int] = []
    second: list[int] = []
    for i, token in enumerate(facts.raw_tokens):
        answer = answer_of(token, words)
        if answer is not None:
            (first if answer == "yes" else second).append(i)
    return tuple(first), tuple(second)


@dataclass(frozen=True)
class NumberTokens:
    """Each number's tokens right after a prompt, and the text each token writes."""

    prompt_ids: tuple[int, ...]
    tokens: tuple[tuple[int, ...], ...]  # index = number
    pieces: tuple[tuple[str, ...], ...]


def number_tokens(tokenizer: Any, prompt_text: str) -> NumberTokens:
    """Tokenize prompt + str(n) for every n and check that the prompt's tokens are unchanged (the
    number starts a new token). If a number merged with the prompt's last token, reading the
    next-token distribution after the prompt would not be reading that number."""

    def encode(text: str) -> list[int]:
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])

    prompt = encode(prompt_text)
    if not prompt:
        raise LabError("the judge prompt encodes to no tokens", where="judge prompt")
    tokens, pieces = [], []
    for n in NUMBERS:
        full = encode(prompt_text + str(n))
        if full[: len(prompt)] != prompt or len(full) == len(prompt):
            tail = tokenizer.convert_ids_to_tokens(prompt[-3:])
            raise LabError(
                f"the number {n} is not tokenized separately from the end of the prompt "
                f"(prompt ends with tokens {tail}, prompt+'{n}' ends with "
                f"{tokenizer.convert_ids_to_tokens(full[-4:])})",
                where="judge prompt",
                fix="end the prompt so the number starts a new token, e.g. with 'Score: ' "
                "(a space before digits is its own token in the lab's judge tokenizers)",
            )
        ids = tuple(full[len(prompt) :])
        texts = tuple(str(tokenizer.decode([t])) for t in ids)
        if "".join(texts) != str(n):
            raise LabError(
                f"the tokens of {n} after the prompt decode to {texts}, not {str(n)!r}",
                where="judge tokenizer",
                fix="this tokenizer writes numbers in a way the reader does not support",
            )
        tokens.append(ids)
        pieces.append(texts)
    return NumberTokens(tuple(prompt), tuple(tokens), tuple(pieces))
