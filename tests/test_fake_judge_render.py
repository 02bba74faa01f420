"""The stand-in's chat renderers and token printing (testing/fake_judge_render.py,
testing/fake_judge_engine.py): what a vLLM server reads from a prefilled chat, by renderer, and how
vLLM and llama.cpp print a token."""

from __future__ import annotations

import pytest

from diarylab.testing.fake_judge_engine import llamacpp_piece, vllm_token_strings, whole_utf8_prefix
from diarylab.testing.fake_judge_llamacpp import entry
from diarylab.testing.fake_judge_render import trimming_template
from diarylab.testing.fake_judge_server import judge_handler

MSGS = [
    {"role": "system", "content": "You judge diaries."},
    {"role": "user", "content": "Rate the entry, 0 to 100."},
    {"role": "assistant", "content": "Score: "},
]
PREFILL = {
    "messages": MSGS,
    "continue_final_message": True,
    "add_generation_prompt": False,
    "max_tokens": 1,
    "logprobs": True,
    "return_token_ids": True,
}
CHAT = "/v1/chat/completions"


def read(handler, body: dict) -> tuple[str, dict]:
    status, answer = handler.answer(CHAT, body)
    assert status == 200, answer
    return handler.engine.tokenizer.decode(answer["prompt_token_ids"]), answer


@pytest.fixture(scope="module")
def handlers(tiny_model):
    return {
        r: judge_handler(tiny_model, renderer=r, start_date="2026-12-01")
        for r in ("template", "trim", "mistral", "harmony")
    }


def test_the_prefills_trailing_space_by_renderer(handlers, tiny_model):
    template, answer = read(handlers["template"], PREFILL)
    assert template == tiny_model.render_chat(MSGS, continue_final_message=True)
    assert template.endswith("<|im_start|>assistant\nScore: ")
    # A trimming template and mistral_common both lose the space, and nothing else here.
    assert read(handlers["trim"], PREFILL)[0] == template[:-1]
    assert read(handlers["mistral"], PREFILL)[0] == template[:-1]
    # What the judge then reads is the model's own next-token row after that prompt.
    row = tiny_model.next_token_logprobs(tiny_model.encode(template[:-1]))[0]
    trimmed = read(handlers["trim"], PREFILL | {"top_logprobs": 3})[1]
    tops = trimmed["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    assert [t["logprob"] for t in tops] == pytest.approx([float(v) for v in row.topk(3).values])


def test_harmony_ignores_the_prefill_flags_and_opens_a_new_turn(handlers):
    expected = (
        "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
        "Knowledge cutoff: 2024-06\nCurrent date: 2026-12-01\n\nReasoning: low\n\n"
        "# Valid channels: analysis, commentary, final. Channel must be included for every "
        "message.<|end|>"
        "<|start|>developer<|message|># Instructions\n\nYou judge diaries.<|end|>"
        "<|start|>user<|message|>Rate the entry, 0 to 100.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Score: <|end|>"
        "<|start|>assistant"
    )
    text, answer = read(handlers["harmony"], PREFILL | {"reasoning_effort": "low"})
    assert text == expected
    # continue_final_message alone (add_generation_prompt left at its default) is no error here.
    alone = {k: v for k, v in PREFILL.items() if k != "add_generation_prompt"}
    assert read(handlers["harmony"], alone | {"reasoning_effort": "low"})[0] == expected
    assert "Reasoning: medium" in read(handlers["harmony"], PREFILL)[0]
    # The tiny model writes no channel header, so no final-channel content comes back.
    assert answer["choices"][0]["message"]["content"] is None
    assert answer["choices"][0]["logprobs"]["content"]


@pytest.mark.parametrize(
    ("renderer", "change", "message"),
    [
        ("harmony", {"reasoning_effort": "none"}, "Harmony does not support"),
        ("harmony", {"reasoning_effort": "minimal"}, "Supported values are: high, medium, low"),
        ("harmony", {"add_generation_prompt": True}, "Cannot set both `continue_final_message`"),
        ("mistral", {"add_generation_prompt": None}, "Cannot set both `add_generation_prompt`"),
        ("mistral", {"chat_template": "{{ x }}"}, "not supported for Mistral tokenizers"),
        (
            "mistral",
            {"continue_final_message": False, "add_generation_prompt": True},
            "from the assistant",
        ),
    ],
)
def test_renderer_refusals(handlers, renderer, change, message):
    body = {k: v for k, v in (PREFILL | change).items() if v is not None}
    status, answer = handlers[renderer].answer(CHAT, body)
    assert status == 400 and message in answer["error"]["message"]


def test_a_template_closes_a_final_assistant_message_when_asked_for_a_new_turn(handlers):
    body = PREFILL | {"continue_final_message": False, "add_generation_prompt": True}
    text, _ = read(handlers["template"], body)
    assert text.endswith("Score: <|im_end|>\n<|im_start|>assistant\n")


def test_trimming_needs_a_template_that_prints_content():
    assert "| trim" in trimming_template("{{ message['content'] }}")
    with pytest.raises(ValueError):
        trimming_template("{{ 'nothing' }}")


@pytest.fixture(scope="module")
def piece_tokenizer():
    """A SentencePiece-style vocabulary: "▁" for a space, bytes as <0xNN> pieces."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "▁5": 1, "5": 2, "<0xC3>": 3, "<0xA9>": 4, "</s>": 5}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>", byte_fallback=True))
    core.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    core.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    return PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", eos_token="</s>")


def test_vllm_prints_the_root_space_and_completes_split_characters(piece_tokenizer):
    assert piece_tokenizer.decode([1]) == "5"  # decode() alone drops the space
    assert vllm_token_strings(piece_tokenizer, [1, 2], []) == [" 5", "5"]
    # Half of "é": nothing before it at the first position, the whole character after its lead.
    assert vllm_token_strings(piece_tokenizer, [3, 4], []) == ["", ""]
    assert vllm_token_strings(piece_tokenizer, [4], [3]) == ["é"]


def test_llamacpp_prints_raw_pieces(piece_tokenizer, shipped_tokenizer):
    assert llamacpp_piece(piece_tokenizer, 1) == b" 5"
    assert llamacpp_piece(piece_tokenizer, 3) == b"\xc3"
    assert whole_utf8_prefix(b"a\xc3") == 1 and whole_utf8_prefix("é".encode()) == 2
    eos = shipped_tokenizer.eos_token_id
    assert llamacpp_piece(shipped_tokenizer, eos) == b""  # a control token prints nothing
    assert llamacpp_piece(shipped_tokenizer, eos, special=True) == b"<|im_end|>"
    space_the = shipped_tokenizer.convert_tokens_to_ids("Ġthe")
    assert space_the != shipped_tokenizer.unk_token_id
    assert llamacpp_piece(shipped_tokenizer, space_the) == b" the"
    lead = shipped_tokenizer.convert_tokens_to_ids("Ã")  # the byte 0xC3 alone
    # `token` is cut back to whole characters, `bytes` keeps the byte.
    assert entry_text(shipped_tokenizer, lead) == ("", [0xC3])


def entry_text(tokenizer, token_id: int) -> tuple[str, list[int]]:
    class Engine:  # entry() reads only the tokenizer
        pass

    engine = Engine()
    engine.tokenizer = tokenizer
    printed = entry(engine, token_id, -1.0)  # type: ignore[arg-type]
    assert printed["id"] == token_id and printed["logprob"] == pytest.approx(-1.0)
    return printed["token"], printed["bytes"]
