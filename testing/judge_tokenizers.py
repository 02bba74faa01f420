"""Three judge tokenizers built in code, each shaped like one that reads the lab's judges at full
scale, and a tiny random Llama sized to any of them (tiny_judge).

- mistral_style_tokenizer: SentencePiece-like (Mistral / Llama-2): "▁" marks a space, every digit
  is its own token and the space before a number is a lone "▁" ("Score: 85" → Score : ▁ 8 5),
  byte-fallback tokens <0x00>..<0xFF> (so <0x30>..<0x39> also write digits), an [INST] chat
  template that keeps message text as it is.
- thousand_numbers_tokenizer: byte-level (Llama-3): "Ġ" marks a space, digits go in runs of at
  most three and "0".."999" are single tokens (1,000 number-continuing ids, far over vLLM's 128
  explicit ids per request), a header chat template that trims message content.
- harmony_tokenizer: gpt-oss-like: o200k-style byte-level pieces (again "0".."999"), the harmony
  special tokens, and a chat template of our own in the real gpt-oss template's form.

The vocabularies are our own small word lists; anything outside them falls back to single
characters or bytes, so every text encodes and decodes losslessly."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from diarylab.model_access.local import LocalModel
from diarylab.testing.judge_helpers import bias_logits
from diarylab.testing.tiny_models import build_tiny_llama

# Words a judge prompt in the tests is made of (tests/test_judge_*.py and rubric/templates).
WORDS = (
    "Score",
    "Answer",
    "Rate",
    "the",
    "entry",
    "from",
    "to",
    "diary",
    "today",
    "Dear",
    "felt",
    "alone",
    "Is",
    "this",
    "a",
    "reply",
    "kind",
    "Yes",
    "No",
    "yes",
    "no",
    "YES",
    "NO",
)
PUNCTUATION = (".", ":", ",", "?", "!", "'", "-", "/", "(", ")", '"')

# A pre-tokenizer split in the shape of Llama-3's and o200k's (tokenizer.json "pre_tokenizer" of
# meta-llama/Meta-Llama-3-8B and the o200k_base pattern in openai/tiktoken, tiktoken_ext/
# openai_public.py), reduced to what the judges' numbers depend on: letters with at most one
# leading non-letter, digits in runs of at most three, punctuation with an optional leading
# space, newlines, and a space before a digit left on its own.
BYTE_LEVEL_SPLIT = (
    r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# Mistral-Small-3.1's chat template form (mistralai/Mistral-Small-3.1-24B-Instruct-2503,
# tokenizer_config.json, and the tekken layout in mistral-common's docs): an optional
# [SYSTEM_PROMPT] block, [INST]user[/INST], then the assistant's text and </s>. No trimming, so a
# continued final message keeps its trailing space.
MISTRAL_TEMPLATE = (
    "{{- bos_token }}"
    "{%- if messages[0]['role'] == 'system' %}"
    "{{- '[SYSTEM_PROMPT]' + messages[0]['content'] + '[/SYSTEM_PROMPT]' }}"
    "{%- set loop_messages = messages[1:] %}"
    "{%- else %}{%- set loop_messages = messages %}{%- endif %}"
    "{%- for message in loop_messages %}"
    "{%- if message['role'] == 'user' %}{{- '[INST]' + message['content'] + '[/INST]' }}"
    "{%- elif message['role'] == 'assistant' %}{{- message['content'] + eos_token }}"
    "{%- else %}{{- raise_exception('roles after the system message are user/assistant') }}"
    "{%- endif %}{%- endfor %}"
)

# Llama-3-Instruct's form (meta-llama/Meta-Llama-3-8B-Instruct, tokenizer_config.json): a header
# per message and `message['content'] | trim`, which is what drops a prefill's trailing space.
LLAMA3_TEMPLATE = (
    "{{- bos_token }}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'"
    " + message['content'] | trim + '<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)

# The harmony form of openai/gpt-oss-120b's chat_template.jinja (read at llama.cpp
# models/templates/openai-gpt-oss-120b.jinja), without tools: a system message with the
# knowledge cutoff, today's date (strftime_now, as there) and "Reasoning: <effort>" (kwarg,
# default medium); a first system/developer message becomes the developer's "# Instructions";
# user turns are <|start|>user<|message|>…<|end|>; assistant turns are written in the final
# channel, the last one closed by <|return|> when no generation prompt follows; the generation
# prompt is "<|start|>assistant". Nothing here looks at continue_final_message: like the real
# template (and vLLM's harmony renderer), a final assistant message is rendered finished.
HARMONY_TEMPLATE = (
    "{%- if reasoning_effort is not defined %}{%- set reasoning_effort = 'medium' %}{%- endif %}"
    "{{- '<|start|>system<|message|>' }}"
    "{{- 'You are a careful judge model.\\nKnowledge cutoff: 2024-06\\n' }}"
    "{{- 'Current date: ' + strftime_now('%Y-%m-%d') + '\\n\\n' }}"
    "{{- 'Reasoning: ' + reasoning_effort + '\\n\\n' }}"
    "{{- '# Valid channels: analysis, commentary, final. "
    "Channel must be included for every message.<|end|>' }}"
    "{%- if messages[0]['role'] in ('system', 'developer') %}"
    "{{- '<|start|>developer<|message|># Instructions\\n\\n' + messages[0]['content']"
    " + '\\n\\n<|end|>' }}"
    "{%- set loop_messages = messages[1:] %}"
    "{%- else %}{%- set loop_messages = messages %}{%- endif %}"
    "{%- for message in loop_messages %}"
    "{%- if message['role'] == 'assistant' %}"
    "{{- '<|start|>assistant<|channel|>final<|message|>' + message['content'] }}"
    "{%- if loop.last and not add_generation_prompt %}{{- '<|return|>' }}"
    "{%- else %}{{- '<|end|>' }}{%- endif %}"
    "{%- elif message['role'] == 'user' %}"
    "{{- '<|start|>user<|message|>' + message['content'] + '<|end|>' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|start|>assistant' }}{%- endif %}"
)
HARMONY_SPECIALS = (
    "<|startoftext|>",
    "<|endoftext|>",
    "<|start|>",
    "<|message|>",
    "<|end|>",
    "<|channel|>",
    "<|return|>",
    "<|constrain|>",
    "<|call|>",
)
HARMONY_WORDS = ("system", "user", "assistant", "developer", "final", "analysis", "commentary")


def _fast(model: Any, pre: Any, decoder: Any, specials: tuple[str, ...], **roles: str) -> Any:
    from tokenizers import AddedToken, Tokenizer
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(model)
    tok.pre_tokenizer = pre
    tok.decoder = decoder
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    return PreTrainedTokenizerFast(tokenizer_object=tok, **roles)


def _vocab(*groups: tuple[str, ...] | list[str]) -> dict[str, int]:
    vocab: dict[str, int] = {}
    for group in groups:
        for piece in group:
            vocab.setdefault(piece, len(vocab))
    return vocab


def mistral_style_tokenizer() -> Any:
    """SentencePiece-like BPE with byte fallback. Every piece is either in the vocabulary whole
    (ignore_merges) or spelled with single characters, and a character outside the vocabulary
    becomes its UTF-8 bytes <0xNN>, as SentencePiece's byte_fallback does."""
    from tokenizers import decoders, models, pre_tokenizers

    specials = ("<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]")
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    letters += [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    vocab = _vocab(
        specials,
        [f"<0x{b:02X}>" for b in range(256)],
        ["▁"] + [str(d) for d in range(10)],
        letters,
        PUNCTUATION,
        WORDS,
        ["▁" + w for w in WORDS],
    )
    model = models.BPE(
        vocab=vocab, merges=[], unk_token="<unk>", byte_fallback=True, ignore_merges=True
    )
    pre = pre_tokenizers.Sequence(
        [
            # prepend "▁" only at the very start of a text, as Mistral's tokenizer.json does
            pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True),
            pre_tokenizers.Punctuation(behavior="isolated"),
            pre_tokenizers.Split("\n", behavior="isolated"),  # a newline is <0x0A> on its own
            # SentencePiece's split_digits: "▁85" → "▁" "8" "5"
            pre_tokenizers.Digits(individual_digits=True),
        ]
    )
    # Llama-2/Mistral tokenizer.json decoder: ▁ → space, bytes → text, drop the first space.
    decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    tok = _fast(model, pre, decoder, specials, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    tok.chat_template = MISTRAL_TEMPLATE
    return tok


def _byte_level(words: tuple[str, ...], specials: tuple[str, ...], **roles: str) -> Any:
    """Byte-level BPE (GPT-2 alphabet: "Ġ" is a space, "Ċ" a newline) whose vocabulary holds
    every byte, "0".."999", and each word with and without a leading space."""
    from tokenizers import Regex, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    numbers = [str(n) for n in range(1000)]
    spaced = ["Ġ" + w for w in words if w[0].isalpha()]
    vocab = _vocab(alphabet, numbers, words, spaced, ["ĊĊ", "ĠĠ"])
    model = models.BPE(vocab=vocab, merges=[], ignore_merges=True)
    pre = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(BYTE_LEVEL_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    return _fast(model, pre, decoders.ByteLevel(), specials, **roles)


def thousand_numbers_tokenizer() -> Any:
    specials = (
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eot_id|>",
    )
    tok = _byte_level(
        WORDS + PUNCTUATION + ("system", "user", "assistant"),
        specials,
        bos_token="<|begin_of_text|>",
        eos_token="<|eot_id|>",
        pad_token="<|end_of_text|>",
    )
    tok.chat_template = LLAMA3_TEMPLATE
    return tok


def harmony_tokenizer() -> Any:
    tok = _byte_level(
        WORDS + PUNCTUATION + HARMONY_WORDS + ("Reasoning", "low", "medium", "high"),
        HARMONY_SPECIALS,
        bos_token="<|startoftext|>",
        eos_token="<|return|>",
        pad_token="<|endoftext|>",
    )
    tok.chat_template = HARMONY_TEMPLATE
    return tok


# Roughly the share of the next-token mass tiny_judge's bias gives each group (the random model's
# own logits, spread around these, make each position differ).
NUMBER_SHARE, END_SHARE, ANSWER_SHARE = 0.45, 0.25, 0.1
LOGIT_SCALE = 0.4


def tiny_judge(tokenizer: Any, *, seed: int = 0, spec: str | None = None) -> LocalModel:
    """A tiny random Llama over `tokenizer` whose output is shifted toward what a judge writes
    after "Score: " or "Answer:": the number tokens 0..100 (or the digits), "." and the end of a
    turn, and the yes/no words. A random model alone puts nearly no mass on numbers (coverage
    ~0), and one pushed only toward digits never ends a number; with both, coverage sits in
    between and a "." after a number is plausible, so the trie's children and its ends both carry
    weight. The longer number tokens (101..999) keep the random model's small share: they
    continue a number, so they are uncovered mass, as a real judge's would be. Deterministic
    per seed."""
    spec = spec or f"tiny-judge-{len(tokenizer)}-{seed}"
    model = LocalModel(build_tiny_llama(tokenizer, seed=seed), tokenizer, spec=spec)
    # build_tiny_llama's wide init gives logits spread by several units, which would leave any
    # one token (".") anywhere from negligible to dominant; narrower, the shares below hold
    # roughly at every position while the context still moves them.
    with torch.no_grad():
        model.model.lm_head.weight.mul_(LOGIT_SCALE)
    vocab = tokenizer.get_vocab()
    numbers = [vocab[str(n)] for n in range(101) if str(n) in vocab]
    enders = [vocab[p] for p in (".", "Ċ", "<0x0A>") if p in vocab]
    enders += [i for i in {tokenizer.eos_token_id, vocab.get("<|end|>")} if i is not None]
    answers = [
        vocab[m + w] for w in ("Yes", "No", "yes", "no") for m in ("", "▁", "Ġ") if m + w in vocab
    ]
    rest = len(tokenizer) - len(numbers) - len(enders) - len(answers)
    rest_share = 1.0 - NUMBER_SHARE - END_SHARE - ANSWER_SHARE
    bias: dict[int, float] = {}
    # exp(bias) per token so that a group's share is about its target, taking the random logits
    # of every token as alike: n·e^b / (n·e^b + rest) = share.
    for group, share in ((numbers, NUMBER_SHARE), (enders, END_SHARE), (answers, ANSWER_SHARE)):
        for i in group:
            bias[i] = math.log(share / rest_share * rest / len(group))
    bias_logits(model, bias)
    return model


def shipped(smollm2_folder):
    """The embedded default's own tokenizer."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2_folder)


@pytest.fixture(
    scope="module",
    params=["mistral", "thousand", "harmony", "smollm2", "tekken-seed", "harmony-seed"],
)
def tokenizer(request, smollm2_folder):
    """A test fixture: each tokenizer shape the lab reads, built in code or shipped."""
    from diarylab.model_access.seed_tokenizers import seed_tokenizer

    made = {
        "mistral": mistral_style_tokenizer,
        "thousand": thousand_numbers_tokenizer,
        "harmony": harmony_tokenizer,
        "smollm2": lambda: shipped(smollm2_folder),
        "tekken-seed": lambda: seed_tokenizer("mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
        "harmony-seed": lambda: seed_tokenizer("openai/gpt-oss-120b"),
    }[request.param]()
    assert made is not None
    return made
