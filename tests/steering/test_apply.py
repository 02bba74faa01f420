from __future__ import annotations

import pytest
import torch
from transformers import LogitsProcessorList

from diarylab.foundation.datafiles import validate
from diarylab.foundation.errors import LabError
from diarylab.model_access.local import GenerationSettings
from diarylab.steering import apply
from diarylab.steering.apply import Steer, generate_steered
from diarylab.steering.settings import SteerSettings
from diarylab.steering.vectors import random_vector
from diarylab.testing.steering_reference import generate_steered_hooks

CHATS = [
    [{"role": "user", "content": "Write today's diary entry."}],
    [
        {"role": "system", "content": "You are Mara, who keeps a diary."},
        {"role": "user", "content": "It is Tuesday night. Write about the day, the bus, the rain."},
    ],
    [{"role": "user", "content": "Hello"}],
]
GREEDY = GenerationSettings(max_new_tokens=12)
SAMPLED = GenerationSettings(max_new_tokens=12, temperature=1.0, top_p=0.95)


@pytest.fixture(scope="module")
def prompts(tiny_model):
    ids = [tiny_model.chat_ids(c) for c in CHATS]
    assert len({len(p) for p in ids}) == 3, "different lengths exercise left padding"
    return ids


@pytest.fixture(scope="module")
def vector(tiny_model):
    return random_vector(tiny_model.info(), seed=1)


def tokens(gens):
    return [g.token_ids for g in gens]


def hook_count(model) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.model.modules())


@pytest.mark.parametrize("settings", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
def test_steered_differs_from_unsteered_and_equals_forward_hooks(
    tiny_model, prompts, vector, settings
):
    seeds = [1, 2, 3]
    steers = [
        Steer(vector, (1,), 2.0),
        None,
        Steer(vector, (0, 1), 6.0, scale="raw", positions="both"),
    ]
    plain = tiny_model.generate(prompts, settings, seeds=seeds)
    steered = generate_steered(tiny_model, prompts, settings, seeds=seeds, steers=steers)
    reference = generate_steered_hooks(tiny_model, prompts, settings, seeds=seeds, steers=steers)
    assert tokens(steered) == tokens(reference)
    assert steered[0].token_ids != plain[0].token_ids
    assert steered[2].token_ids != plain[2].token_ids
    assert steered[1].token_ids == plain[1].token_ids  # the unsteered row in a steered batch


@pytest.mark.parametrize("positions", ["prompt", "response", "both"])
def test_each_position_choice_matches_hooks(tiny_model, prompts, vector, positions):
    steers = [Steer(vector, (0,), 3.0, positions=positions)] * len(prompts)
    steered = generate_steered(tiny_model, prompts, GREEDY, steers=steers)
    reference = generate_steered_hooks(tiny_model, prompts, GREEDY, steers=steers)
    assert tokens(steered) == tokens(reference)
    assert tokens(steered) != tokens(tiny_model.generate(prompts, GREEDY))


def test_per_row_strengths_in_one_batch_equal_separate_runs(tiny_model, prompts, vector):
    seeds = [4, 5, 6]
    other = random_vector(tiny_model.info(), seed=2, pattern_id="other")
    steers = [Steer(vector, (1,), 0.5), Steer(other, (1,), 2.0), Steer(vector, (0,), -1.5)]
    together = generate_steered(tiny_model, prompts, SAMPLED, seeds=seeds, steers=steers)
    for row in range(len(prompts)):
        alone = generate_steered(
            tiny_model, [prompts[row]], SAMPLED, seeds=[seeds[row]], steers=[steers[row]]
        )
        assert alone[0].token_ids == together[row].token_ids


def test_zero_strength_equals_unsteered(tiny_model, prompts, vector):
    steers = [Steer(vector, (0, 1), 0.0, positions="both")] * len(prompts)
    zero = generate_steered(tiny_model, prompts, SAMPLED, seeds=[7, 8, 9], steers=steers)
    plain = tiny_model.generate(prompts, SAMPLED, seeds=[7, 8, 9])
    assert tokens(zero) == tokens(plain)


def test_pad_positions_are_not_steered(tiny_model, prompts, vector):
    # Pads are masked in attention, so steering them would change nothing anyway — except
    # through NaNs or a misaligned mask. Check the plan itself: zero wherever the mask is zero.
    ids, mask = tiny_model.batch_inputs(prompts)
    plan = apply.build_plan(tiny_model, mask, [Steer(vector, (1,), 5.0, positions="both")] * 3)
    added = plan.prompt_pass[1].abs().sum(dim=-1)
    assert torch.all(added[mask == 0] == 0)
    assert torch.all(added[mask == 1] > 0)
    response = apply.build_plan(tiny_model, mask, [Steer(vector, (1,), 5.0)] * 3)
    assert torch.all(response.prompt_pass[1][:, :-1] == 0)


def test_nothing_stays_attached_after_an_exception(tiny_model, prompts, vector, monkeypatch):
    # counted against what the shared model held before: transformers keeps the hooks that
    # record hidden states once a test has asked the model for them
    attached = hook_count(tiny_model)
    steers = [Steer(vector, (0, 1), 1.0)] * len(prompts)
    before_plain = tokens(tiny_model.generate(prompts, GREEDY))
    before_steered = tokens(generate_steered(tiny_model, prompts, GREEDY, steers=steers))

    class FailsOnThirdStep:
        calls = 0

        def __call__(self, input_ids, scores):
            self.calls += 1
            if self.calls == 3:
                raise RuntimeError("failure in the middle of generation")
            return scores

    real_kwargs = tiny_model.generation_kwargs

    def failing_kwargs(*args, **kwargs):
        out = real_kwargs(*args, **kwargs)
        out["logits_processor"] = LogitsProcessorList([FailsOnThirdStep()])
        return out

    monkeypatch.setattr(tiny_model, "generation_kwargs", failing_kwargs)
    with pytest.raises(RuntimeError, match="middle of generation"):
        generate_steered(tiny_model, prompts, GREEDY, steers=steers)
    with pytest.raises(RuntimeError, match="middle of generation"):
        generate_steered_hooks(tiny_model, prompts, GREEDY, steers=steers)
    monkeypatch.undo()

    # A failure inside the intervention itself (a mis-shaped addition).
    real_plan = apply.build_plan

    def bad_plan(*args):
        plan = real_plan(*args)
        plan.decode_step[1] = torch.zeros(len(prompts) + 2, 1, tiny_model.hidden_size)
        return plan

    monkeypatch.setattr(apply, "build_plan", bad_plan)
    with pytest.raises(RuntimeError):
        generate_steered(tiny_model, prompts, GREEDY, steers=steers)
    monkeypatch.undo()

    assert hook_count(tiny_model) == attached
    assert tokens(tiny_model.generate(prompts, GREEDY)) == before_plain
    assert tokens(generate_steered(tiny_model, prompts, GREEDY, steers=steers)) == before_steered


def test_nnsight_wrapper_is_made_once(tiny_model, prompts, vector):
    generate_steered(tiny_model, prompts[:1], GREEDY, steers=[Steer(vector, (0,), 1.0)])
    first = tiny_model.nnsight_model()
    generate_steered(tiny_model, prompts[:1], GREEDY, steers=[Steer(vector, (0,), 1.0)])
    assert tiny_model.nnsight_model() is first


def test_relative_and_raw_scales(vector):
    rel = Steer(vector, (1,), 2.0).addition(1)
    assert float(rel.norm()) == pytest.approx(2.0 * float(vector.residual_norms[1]), rel=1e-5)
    raw = Steer(vector, (1,), 2.0, scale="raw").addition(1)
    assert float(raw.norm()) == pytest.approx(2.0 * float(vector.diff_norms[1]), rel=1e-5)


def test_user_mistakes_are_lab_errors(tiny_model, prompts, vector, smollm2_vector_info):
    with pytest.raises(LabError, match="layer 2 does not exist"):
        Steer(vector, (2,), 1.0)
    # Settings from files are typed by the schema before a Steer is made.
    with pytest.raises(LabError, match="scale"):
        validate(SteerSettings, {"layers": [0], "strength": 1.0, "scale": "huge"}, "p.toml")
    with pytest.raises(LabError, match="positions"):
        validate(SteerSettings, {"layers": [0], "strength": 1.0, "positions": "mid"}, "p.toml")
    with pytest.raises(LabError, match="steers for"):
        generate_steered(tiny_model, prompts, GREEDY, steers=[None])
    foreign = random_vector(smollm2_vector_info)
    with pytest.raises(LabError, match="extracted from"):
        generate_steered(tiny_model, prompts[:1], GREEDY, steers=[Steer(foreign, (0,), 1.0)])


@pytest.fixture(scope="module")
def smollm2_vector_info(tiny_model):
    """The identity of a different model: same tokenizer, another width and depth."""
    from dataclasses import replace

    return replace(tiny_model.info(), spec="other-model", hidden_size=96, num_layers=4)


def test_decoding_steps_are_steered_not_only_the_prompt_pass(tiny_model, prompts, vector):
    def run(positions):
        steers = [Steer(vector, (1,), 3.0, positions=positions)] * len(prompts)
        return tokens(generate_steered(tiny_model, prompts, GREEDY, steers=steers))

    prompt_only, both = run("prompt"), run("both")
    # Same first-pass steering except the last prompt position; later tokens must differ too.
    assert [t[1:] for t in prompt_only] != [t[1:] for t in both]


def test_a_model_split_over_two_places_writes_the_single_device_steered_text(
    tiny_model, tiny_split_model, prompts, vector
):
    """The tiny model with layer 1 offloaded (tests/conftest.py SPLIT_MAP: its weights come in
    through accelerate's hook for each forward, its parameters on "meta") is steered token for
    token as the model on one device, through nnsight and through plain hooks alike (greedy;
    sampled steered writes are compared in tests/model_access/test_placement.py's cache-key
    test)."""
    settings = GREEDY
    seeds = [1, 2, 3]
    steers = [
        Steer(vector, (0, 1), 4.0),
        None,
        Steer(vector, (1,), 3.0, positions="both"),
    ]
    single = generate_steered(tiny_model, prompts, settings, seeds=seeds, steers=steers)
    split = generate_steered(tiny_split_model, prompts, settings, seeds=seeds, steers=steers)
    hooks = generate_steered_hooks(tiny_split_model, prompts, settings, seeds=seeds, steers=steers)
    plain = tiny_split_model.generate(prompts, settings, seeds=seeds)
    assert tokens(split) == tokens(single) == tokens(hooks)
    assert split[0].token_ids != plain[0].token_ids  # steering still acts on the split model
    assert split[2].token_ids != plain[2].token_ids  # on the offloaded layer alone too
    assert split[1].token_ids == plain[1].token_ids


def test_each_layers_addition_is_made_on_the_device_that_layer_runs_on(
    tiny_model, prompts, vector, monkeypatch
):
    """With a map across GPUs layer 0 and layer 1 run on different devices; "meta" stands in
    for the second one here (a CPU machine has one real device)."""
    elsewhere = {0: torch.device("cpu"), 1: torch.device("meta")}
    monkeypatch.setattr(tiny_model, "layer_device", lambda layer: elsewhere[layer])
    _, mask = tiny_model.batch_inputs(prompts)
    plan = apply.build_plan(tiny_model, mask, [Steer(vector, (0, 1), 2.0)] * len(prompts))
    for layer, device in elsewhere.items():
        assert plan.prompt_pass[layer].device == device == plan.decode_step[layer].device
        assert plan.prompt_pass[layer].dtype == tiny_model.dtype


@pytest.mark.slow
def test_embedded_default_steered_equals_hooks(smollm2):
    vector = random_vector(smollm2.info(), seed=4, residual_norm=200.0)
    chats = [CHATS[0], CHATS[1]]
    prompts = [smollm2.chat_ids(c) for c in chats]
    settings = GenerationSettings(max_new_tokens=10, temperature=0.8)
    steers = [Steer(vector, (20,), 1.0), None]
    steered = generate_steered(smollm2, prompts, settings, seeds=[1, 2], steers=steers)
    reference = generate_steered_hooks(smollm2, prompts, settings, seeds=[1, 2], steers=steers)
    plain = smollm2.generate(prompts, settings, seeds=[1, 2])
    assert tokens(steered) == tokens(reference)
    assert steered[0].token_ids != plain[0].token_ids
    assert steered[1].token_ids == plain[1].token_ids
