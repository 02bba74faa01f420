"""The seed judges' tokenizers with no hub access (model_access/seed_tokenizers.py), checked as
far as this machine allows against the packages that define them: the Tekken stand-in encodes
chats exactly as mistral-common's own v7 tokenizer does, and its digit and control ids are the
ones Mistral Small 3's published tokenizer files give; the o200k-harmony stand-in encodes what
openai-harmony renders to openai-harmony's own ids, and text to tiktoken's o200k_base ids. The
shipped designs then plan with numbers for both judges, naming the stand-ins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diarylab.model_access.loading import load_tokenizer
from diarylab.model_access.seed_tokenizers import seed_tokenizer, stand_in_for
from diarylab.rubric.judging.judge_render import HARMONY_DATE, render_judge_prompt
from diarylab.rubric.prompts import JudgePrompt

MISTRAL = "mistralai/Mistral-Small-3.1-24B-Instruct-2503"
GPT_OSS = "openai/gpt-oss-120b"
TEXTS = (
    "Score: 85",
    "Rate the entry from 0 to 100.\n\nEntry: Today I stayed in again; nobody called.",
    "Ünïcode, emoji 🙂, tabs\tand  double  spaces, 3.5 and 1,000 and 007.",
    "   leading spaces and a trailing newline\n",
)
CHATS = (
    [("system", "You judge diary entries."), ("user", "Score it from 0 to 100: 85")],
    [("user", "Did the reply ask a question? Answer yes or no.")],
    [
        ("system", "You read letters.\nBe brief."),
        ("user", "First letter."),
        ("assistant", "Noted."),
        ("user", "How warm is it, 0–100?"),
    ],
)


@pytest.fixture(scope="module")
def tekken():
    return seed_tokenizer(MISTRAL)


@pytest.fixture(scope="module")
def harmony():
    return seed_tokenizer(GPT_OSS)


def test_only_the_seed_judges_have_stand_ins():
    assert stand_in_for(MISTRAL) is not None and stand_in_for(GPT_OSS) is not None
    assert seed_tokenizer("meta-llama/Llama-3.1-8B-Instruct") is None


def test_tekken_chats_encode_as_mistral_commons_own_v7_tokenizer(tekken):
    from mistral_common.protocol.instruct.messages import (
        AssistantMessage,
        SystemMessage,
        UserMessage,
    )
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    from diarylab.model_access.seed_tokenizers import cache_dir

    reference = MistralTokenizer.from_file(str(cache_dir() / "tekken-v7" / "tekken.json"))
    kinds = {"system": SystemMessage, "user": UserMessage, "assistant": AssistantMessage}
    for chat in CHATS:
        request = ChatCompletionRequest(messages=[kinds[r](content=c) for r, c in chat])
        want = reference.encode_chat_completion(request).tokens
        text = tekken.apply_chat_template(
            [{"role": r, "content": c} for r, c in chat], tokenize=False, add_generation_prompt=True
        )
        assert tekken.encode(text, add_special_tokens=False) == want, text
    assert reference.instruct_tokenizer.tokenizer.version.value == "v7"


def test_tekken_ids_are_mistral_small_3s(tekken):
    # Mistral Small 3's published tokenizer files (tekken.json, tokenizer_config.json, read in a
    # public copy): ids 0–19 are these control tokens, then 1,000 special ids, then the byte-level
    # ranks, where "0".."9" are ranks 48–57, so ids 1048–1057; every digit is its own token.
    controls = [
        "<unk>",
        "<s>",
        "</s>",
        "[INST]",
        "[/INST]",
        "[AVAILABLE_TOOLS]",
        "[/AVAILABLE_TOOLS]",
        "[TOOL_RESULTS]",
        "[/TOOL_RESULTS]",
        "[TOOL_CALLS]",
        "[IMG]",
        "<pad>",
        "[IMG_BREAK]",
        "[IMG_END]",
        "[PREFIX]",
        "[MIDDLE]",
        "[SUFFIX]",
        "[SYSTEM_PROMPT]",
        "[/SYSTEM_PROMPT]",
        "[TOOL_CONTENT]",
    ]
    assert tekken.convert_ids_to_tokens(list(range(20))) == controls
    assert len(tekken) == 131072
    assert [tekken.convert_tokens_to_ids(str(d)) for d in range(10)] == list(range(1048, 1058))
    assert tekken.encode("Score: 85", add_special_tokens=False)[-2:] == [1056, 1053]
    for text in TEXTS:
        ids = tekken.encode(text, add_special_tokens=False)
        assert tekken.decode(ids) == text


def test_o200k_harmony_matches_openai_harmony_and_tiktoken(harmony):
    import tiktoken.load  # the submodule itself: a kept conversion never imports it

    from diarylab.model_access.seed_tokenizers import cache_dir

    encoding = harmony.harmony_encoding
    for token in ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>"):
        want = encoding.encode(token, allowed_special="all")
        assert [harmony.convert_tokens_to_ids(token)] == want
    assert harmony.convert_tokens_to_ids("<|start|>") == 200006
    ranks = tiktoken.load.load_tiktoken_bpe(str(cache_dir() / "o200k" / "o200k_base.tiktoken"))
    assert min(harmony.convert_tokens_to_ids(["<|startoftext|>"])) == len(ranks)
    for text in TEXTS:
        ids = harmony.encode(text, add_special_tokens=False)
        assert ids == encoding.encode(text, allowed_special=set())
        assert harmony.decode(ids) == text


def test_harmony_prompts_are_rendered_by_openai_harmony_and_encode_to_its_ids(harmony):
    for chat in CHATS:
        prompt = JudgePrompt.chat([{"role": r, "content": c} for r, c in chat], prefill="Score: ")
        rendered = render_judge_prompt(harmony, prompt, reasoning_effort="low")
        assert rendered.form == "harmony" and rendered.reasoning_effort == "low"
        assert rendered.text.startswith("<|start|>system<|message|>")
        assert f"Current date: {HARMONY_DATE}" in rendered.text
        assert "Reasoning: low" in rendered.text
        assert rendered.text.endswith("<|start|>assistant<|channel|>final<|message|>Score: ")
        if chat[0][0] == "system":
            assert f"<|start|>developer<|message|># Instructions\n\n{chat[0][1]}<|end|>" in (
                rendered.text
            )
        head = rendered.text.removesuffix("<|channel|>final<|message|>Score: ")
        ids = harmony.encode(head, add_special_tokens=False)
        assert harmony.harmony_encoding.decode(ids) == head


def test_harmony_renderings_carry_the_ids_the_tokenizer_encodes_them_to(harmony):
    # What number readings read in place of encoding the text again (RenderedPrompt.ids): the
    # lab's own judge prompts, a reply's rubric questions with an earlier exchange included.
    from diarylab.rubric.behavior_rubric import load_behavior_rubric
    from diarylab.rubric.prompts import load_template

    entry = "Ünïcode — “quotes”, tabs\tand  double  spaces, 3.5 and 1,000; 🙂\n\nSecond line."
    prompts = [
        JudgePrompt.chat([{"role": r, "content": c} for r, c in chat], prefill="Score: ")
        for chat in CHATS
    ]
    prompts += [
        load_template(name).prompt(entry=entry, pattern_name="x", pattern_definition="y")
        for name in ("pattern", "coherence", "realism")
    ]
    question = load_behavior_rubric().questions[0].question
    history = "Earlier in this conversation:\n\n<earlier_entry>\nHi.\n</earlier_entry>\n\n"
    prompts.append(
        load_template("reply_question").prompt(
            history=history, entry=entry, reply="That sounds hard.", question=question
        )
    )
    for prompt in prompts:
        rendered = render_judge_prompt(harmony, prompt, reasoning_effort="low")
        assert rendered.ids is not None
        assert list(rendered.ids) == harmony.encode(rendered.text, add_special_tokens=False)


def test_a_seed_hub_id_missing_from_the_hub_cache_loads_its_stand_in(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))  # an empty hub cache
    tokenizer = load_tokenizer(GPT_OSS)
    assert tokenizer.stand_in == f"o200k-harmony for {GPT_OSS}"


def test_the_shipped_designs_plan_every_judge_with_the_stand_ins_named(
    capsys, monkeypatch, tmp_path
):
    from diarylab.experiments.cli import main

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    for design in ("experiments/designs/diary-full.toml", "experiments/designs/friends.toml"):
        assert main(["plan", design, "--json"]) == 0
        plan = json.loads(capsys.readouterr().out)
        for judge in ("mistral-small-3.1", "gpt-oss-120b"):
            cost = plan["requests"][judge]
            assert "unknown" not in json.dumps(cost), (design, judge, cost)
            assert "stand-in tokenizer" in cost["note"], cost


def test_a_served_judge_read_with_a_stand_in_says_so_in_its_identity(harmony, tekken):
    from types import SimpleNamespace

    from diarylab.rubric.judging.served_judge import ServedJudge

    client = SimpleNamespace(model="hosted_vllm/openai/gpt-oss-120b")
    identity = ServedJudge(client, tokenizer=harmony, mode="exact").identity()  # type: ignore[arg-type]
    assert identity["tokenizer_stand_in"] == f"o200k-harmony for {GPT_OSS}"
    assert identity["renderer"].startswith("openai-harmony ")
    mistral = ServedJudge(client, tokenizer=tekken, mode="exact").identity()  # type: ignore[arg-type]
    assert mistral["tokenizer_stand_in"] == f"tekken-v7 for {MISTRAL}" and "renderer" not in mistral


@pytest.mark.parametrize("hub_id", [MISTRAL, GPT_OSS])
def test_a_kept_conversion_reads_back_as_the_tokenizer_it_was_made_from(
    hub_id, tmp_path, monkeypatch
):
    """A later process reads the converted tokenizer from disk instead of converting again:
    it encodes every text and chat as the freshly built one does, with the same vocabulary,
    special tokens and end token, and a harmony judge keeps its renderer."""
    from diarylab.model_access import seed_tokenizers as st

    monkeypatch.setenv("DIARYLAB_CACHE", str(tmp_path))
    kind = st.stand_in_for(hub_id).build
    built = st.converted(kind)  # nothing kept yet: built, and kept
    folder = st.converted_folder(kind)
    assert (folder / "tokenizer.json").is_file()
    assert not list(folder.parent.glob("*.partial-*"))
    calls = []
    monkeypatch.setattr(st, "_build", lambda k: calls.append(k))
    read = st.converted(kind)  # kept: read, not built
    assert calls == []
    assert len(read) == len(built) and read.all_special_tokens == built.all_special_tokens
    assert read.eos_token == built.eos_token
    for text in TEXTS:
        assert read.encode(text) == built.encode(text)
    if kind == "tekken-v7":
        for chat in CHATS:
            messages = [{"role": r, "content": c} for r, c in chat]
            assert read.apply_chat_template(messages, tokenize=False) == (
                built.apply_chat_template(messages, tokenize=False)
            )
    else:
        assert read.harmony_encoding.name == built.harmony_encoding.name
    # another source, converter or format is kept apart, never read in its place
    monkeypatch.setattr(st, "CONVERTED_FORMAT", st.CONVERTED_FORMAT + 1)
    assert st.converted_folder(kind) != folder


@pytest.mark.parametrize("hub_id", [MISTRAL, GPT_OSS])
def test_kept_vocabulary_facts_equal_the_worked_out_ones(hub_id, tmp_path, monkeypatch):
    """A converted seed tokenizer keeps what the judge reader works out of its vocabulary; read
    back it is the same, and a file made by other code (another key) is worked out again."""
    from diarylab.model_access import seed_tokenizers as st
    from diarylab.rubric.judging import vocab

    monkeypatch.setenv("DIARYLAB_CACHE", str(tmp_path))
    tokenizer = st.converted(st.stand_in_for(hub_id).build)
    worked_out = vocab._work_out_facts(tokenizer)
    assert vocab.vocab_facts(tokenizer) == worked_out  # worked out, and kept
    kept = Path(tokenizer.vocab_facts_file)
    assert kept.is_file()
    fresh = st.converted(st.stand_in_for(hub_id).build)  # another object: not in memory
    monkeypatch.setattr(vocab, "_work_out_facts", lambda t: pytest.fail("worked out again"))
    assert vocab.vocab_facts(fresh) == worked_out
    record = json.loads(kept.read_text())
    record["key"] = "made by other code"
    kept.write_text(json.dumps(record))
    monkeypatch.setattr(vocab, "_work_out_facts", lambda t: worked_out)
    other = st.converted(st.stand_in_for(hub_id).build)
    assert vocab.vocab_facts(other) == worked_out
    assert json.loads(kept.read_text())["key"] == vocab._facts_key()
