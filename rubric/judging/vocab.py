"""What a tokenizer's vocabulary holds for reading judges: which tokens continue a number (text
starting with an ASCII digit), which are yes/no variants, and how each 0..100 is tokenized right
after a given prompt (checked to be prefix-stable)."""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from diarylab.foundation.atomic import read_kept_json, write_atomic
from diarylab.foundation.errors import LabError
from diarylab.rubric.judging.expected import NUMBERS, continues_number, is_decimal, is_point
from diarylab.rubric.judging.line_encoding import encode_texts
from diarylab.rubric.judging.yes_no import answer_of

# SentencePiece byte-fallback tokens ("<0x30>" is the byte of "0").
_BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
SENTENCEPIECE_SPACE = "\u2581"  # "▁"


@dataclass(frozen=True)
class VocabFacts:
    continuation_ids: tuple[int, ...]
    yes_ids: tuple[int, ...]
    no_ids: tuple[int, ...]
    raw_tokens: tuple[str, ...]  # index = id; for records and messages
    point_ids: tuple[int, ...] = ()  # a bare decimal mark ("." or ",")
    decimal_ids: tuple[int, ...] = ()  # a mark and a digit at once (".5")

    @cached_property
    def leaving_ids(self) -> tuple[int, ...]:
        """Every token that, after a number, keeps it from ending there (trie-v2). Worked out
        once: o200k has over a thousand, and every read of a number node asks for them."""
        return tuple(sorted({*self.continuation_ids, *self.point_ids, *self.decimal_ids}))

    @cached_property
    def leaving_set(self) -> frozenset[int]:
        return frozenset(self.leaving_ids)

    @cached_property
    def needed_by_node(self) -> dict[Any, tuple[int, ...]]:
        """A number trie node → the ids that read it (rubric/judging/number_trie.py)."""
        return {}


def _byte_decoder() -> dict[str, int]:
    """The inverse of byte-level BPE's byte→printable-character table (GPT-2's scheme, which
    Llama-3, gpt-oss and SmolLM2 vocabularies use): printable ASCII and Latin-1 stand for
    themselves, the other bytes for characters from U+0100 on, in order."""
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return {c: b for b, c in table.items()}


_BYTES_OF = _byte_decoder()


def is_byte_level(raw_tokens: tuple[str, ...] | list[str]) -> bool:
    return "\u0120" in raw_tokens or any(t.startswith("\u0120") for t in raw_tokens[:5000])


def token_text(raw: str, *, byte_level: bool) -> str:
    """The text a vocabulary entry writes, read from the raw entry (never from decode([id]),
    which drops a SentencePiece token's leading space): "▁5" writes " 5", byte-level "Ġ5" writes
    " 5", byte fallback "<0x2E>" writes "."."""
    byte = _BYTE_TOKEN.match(raw)
    if byte:
        value = int(byte.group(1), 16)
        return chr(value) if value < 0x80 else "\ufffd"
    if byte_level and raw and all(c in _BYTES_OF for c in raw):
        return bytes(_BYTES_OF[c] for c in raw).decode("utf-8", errors="replace")
    return raw.replace(SENTENCEPIECE_SPACE, " ")


# Facts worked out once per tokenizer and process; a tokenizer that names a file to keep them
# in (`vocab_facts_file`: the seed judges' converted tokenizers) reads them from it next time.
_FACTS: WeakKeyDictionary[Any, VocabFacts] = WeakKeyDictionary()
_FACT_FIELDS = ("continuation_ids", "yes_ids", "no_ids", "raw_tokens", "point_ids", "decimal_ids")


def _facts_key() -> str:
    """The code the facts come from: this module and the tests it applies to each token. A
    kept file made by other code is not read."""
    import hashlib

    from diarylab.rubric.judging import expected, yes_no

    digest = hashlib.sha256()
    for module_file in (__file__, expected.__file__, yes_no.__file__):
        digest.update(Path(str(module_file)).read_bytes())
    return digest.hexdigest()


def vocab_facts(tokenizer: Any) -> VocabFacts:
    """Read from the raw vocabulary strings (token_text), not from decoding single tokens."""
    try:
        return _FACTS[tokenizer]
    except (KeyError, TypeError):
        pass
    kept = getattr(tokenizer, "vocab_facts_file", None)
    facts = _read_kept(Path(kept)) if kept else None
    if facts is None:
        facts = _work_out_facts(tokenizer)
        if kept:
            record = {"key": _facts_key(), **{f: getattr(facts, f) for f in _FACT_FIELDS}}
            write_atomic(Path(kept), json.dumps(record))
    # a tokenizer that cannot be weakly referenced is worked out each time
    with contextlib.suppress(TypeError):
        _FACTS[tokenizer] = facts
    return facts


def _read_kept(path: Path) -> VocabFacts | None:
    record = read_kept_json(path)
    if record is None or record.get("key") != _facts_key():
        return None
    return VocabFacts(*(tuple(record[f]) for f in _FACT_FIELDS))


def _work_out_facts(tokenizer: Any) -> VocabFacts:
    size = len(tokenizer)
    tokens = tokenizer.convert_ids_to_tokens(list(range(size)))
    raw = [str(t) if t is not None else "" for t in tokens]
    byte_level = is_byte_level(raw)
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    cont, yes, no, points, decimals = [], [], [], [], []
    for i, token in enumerate(raw):
        if i in special:
            continue
        text = token_text(token, byte_level=byte_level)
        if continues_number(text):
            cont.append(i)
        elif is_point(text):
            points.append(i)
        elif is_decimal(text):
            decimals.append(i)
        answer = answer_of(token)
        if answer == "yes":
            yes.append(i)
        elif answer == "no":
            no.append(i)
    return VocabFacts(
        tuple(cont), tuple(yes), tuple(no), tuple(raw), tuple(points), tuple(decimals)
    )


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


def number_tokens(
    tokenizer: Any, prompt_text: str, prompt_ids: tuple[int, ...] | None = None
) -> NumberTokens:
    """Tokenize prompt + str(n) for every n and check that the prompt's tokens are unchanged (the
    number starts a new token). If a number merged with the prompt's last token, reading the
    next-token distribution after the prompt would not be reading that number.

    A tokenizer splits its text at special tokens before anything else, and what follows one is
    tokenized alone; so the numbers after a prompt depend only on its tail from the last special
    token on. That tail is checked to tokenize to the prompt's own last tokens, and its numbers
    are worked out once per tokenizer and tail: a study's thousands of judge prompts end alike,
    and tokenizing each whole prompt 101 times was most of a served judge's client time
    (bench/rehearsal.py). A prompt with no special token is checked whole."""
    prompt = list(prompt_ids) if prompt_ids is not None else _encode(tokenizer, prompt_text)
    if not prompt:
        raise LabError("the judge prompt encodes to no tokens", where="judge prompt")
    cut = _tail_start(tokenizer, prompt_text, prompt)
    if cut is None:
        return _numbers_after(tokenizer, prompt_text, prompt)
    start, tail_text = cut
    known = _TAILS.setdefault(tokenizer, {})
    tail = known.get(tail_text)
    if tail is None:
        tail = known[tail_text] = _numbers_after(tokenizer, tail_text, prompt[start:])
    return NumberTokens(tuple(prompt), tail.tokens, tail.pieces)


# tokenizer → tail text → its numbers (weakly held: a judge's tokenizer lives as long as it).
_TAILS: WeakKeyDictionary[Any, dict[str, NumberTokens]] = WeakKeyDictionary()


_SPECIAL: WeakKeyDictionary[Any, frozenset[int]] = WeakKeyDictionary()


def _special_ids(tokenizer: Any) -> frozenset[int]:
    """The tokenizer's special token ids (its added special tokens and the named ones), read
    once: a served judge asks for every prompt it reads."""
    known = _SPECIAL.get(tokenizer)
    if known is None:
        added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
        ids = {i for i, t in added.items() if getattr(t, "special", False)}
        ids.update(getattr(tokenizer, "all_special_ids", []) or [])
        known = _SPECIAL[tokenizer] = frozenset(ids)
    return known


def _encode(tokenizer: Any, text: str) -> list[int]:
    # a line at a time, each line's ids remembered (line_encoding.py): as encoded whole
    return encode_texts(tokenizer, [text])[0]


def _tail_start(tokenizer: Any, text: str, prompt: list[int]) -> tuple[int, str] | None:
    """Where the prompt's last special token starts (its index in the ids) and the text from it
    on, when that text tokenizes alone to exactly the prompt's ids from there; else None."""
    special = _special_ids(tokenizer)
    index = next((i for i in range(len(prompt) - 1, -1, -1) if prompt[i] in special), None)
    if index is None:
        return None
    content = str(tokenizer.convert_ids_to_tokens(prompt[index]))
    at = text.rfind(content)
    if at < 0:
        return None
    tail = text[at:]
    return (index, tail) if _encode(tokenizer, tail) == prompt[index:] else None


def _numbers_after(tokenizer: Any, prompt_text: str, prompt: list[int]) -> NumberTokens:
    """Each number's tokens after `prompt_text` (whose ids are `prompt`), from tokenizing
    prompt + number whole."""
    tokens, pieces = [], []
    # One batch call: the tokenizer encodes the 101 texts together (each still whole, so the
    # check below sees exactly what encoding prompt + number alone gives).
    fulls = tokenizer([prompt_text + str(n) for n in NUMBERS], add_special_tokens=False)
    for n, full in zip(NUMBERS, fulls["input_ids"], strict=True):
        full = list(full)
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
