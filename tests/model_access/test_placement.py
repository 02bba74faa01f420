"""A model spread over devices (local.device_map, through accelerate).

The machine running these tests has one CPU and maybe no GPU, so the split is the one accelerate
makes without a second GPU: layer 1 offloaded to "disk" (its weights stay in the checkpoint and
an AlignDevicesHook brings them in for each forward; its parameters sit on "meta"). That is the
path a map across GPUs takes — hooks moving tensors to each block's execution device — and the
one where asking a block's parameters where it runs gives the wrong answer ("meta")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from diarylab.experiments.cli import main
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.store import Store
from diarylab.experiments.engine.writes import StoreWrites, local_identity
from diarylab.experiments.running.runner import run_design
from diarylab.foundation.datafiles import validate
from diarylab.foundation.errors import LabError
from diarylab.model_access import placement
from diarylab.model_access.loading import resolve
from diarylab.model_access.local import GenerationSettings, LocalModel
from diarylab.model_access.placement import (
    check_machine,
    check_map,
    check_placement,
    empty_model_names,
)
from diarylab.model_access.settings import LocalSettings
from diarylab.steering.apply import Steer
from diarylab.steering.extract import _response_means
from diarylab.steering.vectors import random_vector
from diarylab.steering.write_door import WriteRequest, Written
from diarylab.testing.lab_fixtures import design_text
from diarylab.testing.tiny_models import SPLIT_MAP

CHATS = [
    [{"role": "user", "content": "Write today's diary entry."}],
    [{"role": "user", "content": "It is Tuesday night. Write about the bus and the rain."}],
    [{"role": "user", "content": "Hello"}],
]
GREEDY = GenerationSettings(max_new_tokens=10)
SAMPLED = GenerationSettings(max_new_tokens=10, temperature=1.0, top_p=0.95)


@pytest.fixture(scope="module")
def single(tiny_model_folder):
    """The same checkpoint on one device, loaded the same way (same spec, same identity)."""
    return LocalModel.load(str(tiny_model_folder), LocalSettings(device="cpu"))


def prompts(model):
    return [model.chat_ids(c) for c in CHATS]


# ----------------------------------------------------------------------------- the settings
@pytest.mark.parametrize(
    ("table", "field", "says"),
    [
        ({"device_map": {"model.layers.0": "gpu"}}, "device_map.model.layers.0", "unknown device"),
        ({"device_map": {}}, "device_map", "empty"),
        ({"device_map": {"": 0, "lm_head": 1}}, "device_map", "whole model"),
        ({"device_map": "balanced"}, "device_map", "'auto'"),
        ({"device_map": "auto", "max_memory": {"cpu": "lots"}}, "max_memory.cpu", "not a memory"),
        ({"device_map": "auto", "max_memory": {"gpu0": "1GB"}}, "max_memory.gpu0", "unknown"),
        ({"device_map": "auto", "max_memory": {"0": 0}}, "max_memory.0", "not positive"),
        ({"max_memory": {"cpu": "1GB"}}, "max_memory", 'device_map = "auto"'),
        ({"device_map": {"": 0}, "max_memory": {"0": "1GB"}}, "max_memory", "sizes the map"),
        ({"device": "cpu", "device_map": "auto"}, "device", "both place the model"),
        ({"offload_folder": "/tmp/x"}, "offload_folder", "there is no map"),
    ],
)
def test_malformed_placement_settings_are_one_error_naming_the_field(table, field, says):
    with pytest.raises(LabError) as caught:
        validate(LocalSettings, table, "d.toml")
    message = str(caught.value)
    assert message.startswith(f"d.toml {field}: ") and says in message and " — fix: " in message


def test_well_formed_settings_are_kept_as_written_and_read_in_accelerates_form():
    settings = validate(
        LocalSettings,
        {"device_map": "auto", "max_memory": {"0": "2GiB", "cuda:1": 1000, "cpu": "3GB"}},
        "d.toml",
    )
    assert settings.max_memory == {"0": "2GiB", "cuda:1": 1000, "cpu": "3GB"}  # the manifest's
    assert settings.memory_limits() == {0: 2 * 2**30, 1: 1000, "cpu": 3 * 10**9}
    explicit = validate(LocalSettings, {"device_map": {"model": "cuda:1", "lm_head": 0}}, "d")
    assert explicit.placement_map() == {"model": 1, "lm_head": 0}


# ----------------------------------------------------------------------------- before loading
@pytest.mark.parametrize(
    ("table", "where"),
    [
        ({"device_map": {"": "cuda:3"}}, "local.device_map"),
        ({"device_map": {"model": "cpu", "lm_head": 3}}, "local.device_map"),
        ({"device_map": "auto", "max_memory": {"3": "1GB", "cpu": "1GB"}}, "local.max_memory"),
        ({"device": "cuda:3"}, "local.device"),
    ],
)
@pytest.mark.parametrize("gpus", [0, 2])
def test_a_device_this_machine_lacks_is_refused(monkeypatch, table, where, gpus):
    monkeypatch.setattr(placement, "machine_gpus", lambda: gpus)
    with pytest.raises(LabError) as caught:
        check_machine(validate(LocalSettings, table, "d"))
    have = "GPUs cuda:0..cuda:1" if gpus else "no GPU"
    assert str(caught.value).startswith(f"{where}: device cuda:3 does not exist on this machine")
    assert have in str(caught.value) and caught.value.fix


def test_the_devices_a_machine_has_pass(monkeypatch):
    monkeypatch.setattr(placement, "machine_gpus", lambda: 2)
    check_machine(validate(LocalSettings, {"device_map": {"model": 1, "lm_head": "disk"}}, "d"))
    check_machine(validate(LocalSettings, {"device": "cuda:1"}, "d"))


@pytest.fixture(scope="module")
def names(tiny_model_folder):
    return empty_model_names(resolve(str(tiny_model_folder)), LocalSettings())


def without(module: str) -> dict:
    return {m: d for m, d in SPLIT_MAP.items() if m != module}


@pytest.mark.parametrize(
    ("device_map", "says"),
    [
        ({**SPLIT_MAP, "model.layer.0": "cpu"}, "the model has no module 'model.layer.0'"),
        ({**SPLIT_MAP, "model.layer.0": "cpu"}, "model.layers.0..model.layers.1"),
        (without("model.layers.1"), "the map leaves out 1 module(s): 'model.layers.1'"),
        (without("model.rotary_emb"), "leaves out 1 module(s): 'model.rotary_emb'"),
        ({"model.layers": "cpu", "lm_head": "cpu"}, "'model.embed_tokens', 'model.norm'"),
        ({**SPLIT_MAP, "model.embed_tokens": "disk"}, "first weights (model.embed_tokens)"),
        ({**SPLIT_MAP, "model.layers.0": 0}, "first weights (model.embed_tokens)"),
    ],
)
def test_an_explicit_map_names_the_models_modules_and_all_of_them(names, device_map, says):
    settings = LocalSettings(device_map=device_map)
    with pytest.raises(LabError) as caught:
        check_map(settings.placement_map(), *names)  # type: ignore[arg-type]
    assert says in str(caught.value) and caught.value.where == "local.device_map"
    assert caught.value.fix


@pytest.mark.parametrize(
    "device_map",
    [SPLIT_MAP, {"model": "cpu", "lm_head": "disk"}, {"model": 0, "lm_head": 1}],
    ids=["split", "parents", "two-gpus"],
)
def test_maps_that_cover_the_model_pass(names, device_map):
    check_map(LocalSettings(device_map=device_map).placement_map(), *names)  # type: ignore[arg-type]


def test_a_map_is_checked_on_an_empty_copy_before_any_weight_loads(tiny_model_folder, monkeypatch):
    import diarylab.model_access.local as local

    loads = []
    monkeypatch.setattr(local, "load_pretrained", lambda *a, **k: loads.append(1))
    bad = LocalSettings(device_map=without("model.layers.1"))
    with pytest.raises(LabError, match="leaves out"):
        LocalModel.load(str(tiny_model_folder), bad)
    assert loads == []
    check_placement(resolve(str(tiny_model_folder)), LocalSettings(device_map=SPLIT_MAP))


# ----------------------------------------------------------------------------- the split model
def test_an_offloaded_layer_runs_where_its_hook_says_not_where_its_weights_sit(tiny_split_model):
    model = tiny_split_model
    assert {p.device.type for p in model.layers[1].parameters()} == {"meta"}
    assert {p.device.type for p in model.layers[0].parameters()} == {"cpu"}
    assert model.layer_device(1) == torch.device("cpu") == model.layer_device(0) == model.device
    record = model.placement()
    assert record["device_map"] == SPLIT_MAP and record["resolved_map"] == SPLIT_MAP
    assert record["devices"] == ["cpu", "disk"] and record["single_device"] is False


@pytest.mark.parametrize("settings", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
def test_the_split_model_writes_and_reads_as_the_single_device_model(
    single, tiny_split_model, settings
):
    seeds = [4, 5, 6]
    ids = prompts(single)
    one = single.generate(ids, settings, seeds=seeds)
    split = tiny_split_model.generate(ids, settings, seeds=seeds)
    assert [g.token_ids for g in split] == [g.token_ids for g in one]
    assert torch.equal(
        tiny_split_model.next_token_logprobs(ids[0], [(), (5,)]),
        single.next_token_logprobs(ids[0], [(), (5,)]),
    )


def test_activations_read_from_the_split_model_equal_the_single_device_ones(
    single, tiny_split_model
):
    ids = prompts(single)
    gens = single.generate(ids, GREEDY)
    rows = [
        (p, Written(g.text, g.token_ids, g.new_tokens, g.stopped_at_eos))
        for p, g in zip(ids, gens, strict=True)
    ]
    one = _response_means(single, rows, 2, False)
    split = _response_means(tiny_split_model, rows, 2, False)
    assert torch.equal(one.means, split.means) and torch.equal(one.norm_mean, split.norm_mean)


def test_auto_on_one_device_loads_as_the_single_device_model(tiny_model_folder, single):
    if placement.machine_gpus() > 1:
        pytest.skip("auto spreads a model over the GPUs of a machine with several")
    auto = LocalModel.load(str(tiny_model_folder), LocalSettings(device_map="auto"))
    record = auto.placement()
    assert record["single_device"] is True and len(record["devices"]) == 1
    assert record["note"].startswith(f"auto found one device ({record['devices'][0]})")
    assert not any(hasattr(m, "_hf_hook") for m in auto.model.modules())  # no hooks at all
    if auto.device.type == "cpu":  # on one GPU it is bf16 there, and so other numbers
        ids = prompts(single)
        texts = [g.token_ids for g in auto.generate(ids, GREEDY)]
        assert texts == [g.token_ids for g in single.generate(ids, GREEDY)]


def test_auto_with_too_little_memory_for_the_first_weights_is_refused(tiny_model_folder):
    tight = LocalSettings(device_map="auto", max_memory={"cpu": "1KB"})
    with pytest.raises(LabError, match=r"first weights \(model.embed_tokens\)") as caught:
        LocalModel.load(str(tiny_model_folder), tight)
    assert caught.value.where == "local.device_map"


def test_the_placement_is_in_no_cache_key(tmp_path, single, tiny_split_model):
    """The same weights write the same text wherever they sit, so a placement enters no key: a
    run resumed on other hardware reads the texts it stored."""
    assert local_identity(single) == local_identity(tiny_split_model)
    vector = random_vector(single.info(), seed=3)
    requests = [
        WriteRequest(CHATS[0], seed=1, steer=Steer(vector, (0, 1), 4.0)),
        WriteRequest(CHATS[1], seed=2),
    ]
    store = Store(tmp_path / "store.sqlite")
    try:
        first = StoreWrites(store, single, batch_size=2)(requests, SAMPLED)
        assert store.made == 2
        again = StoreWrites(store, tiny_split_model, batch_size=2)(requests, SAMPLED)
        assert store.made == 2 and store.cached == 2 and again == first
    finally:
        store.close()
    fresh = Store(tmp_path / "fresh.sqlite")
    try:
        anew = StoreWrites(fresh, tiny_split_model, batch_size=2)(requests, SAMPLED)
        assert fresh.made == 2 and anew == first  # written by the split model itself
    finally:
        fresh.close()


# ----------------------------------------------------------------------------- in a design
def inline_map(device_map: dict) -> str:
    return "{ " + ", ".join(f'"{m}" = {json.dumps(d)}' for m, d in device_map.items()) + " }"


def placed_design(
    folder: Path, model_folder: Path, diarist_local: str, chatbot_local: str = ""
) -> Path:
    chatbots = f"""
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "tiny-chat"
kind = "local"
model = "{model_folder}"
generation = {{ max_new_tokens = 4 }}
{chatbot_local}
"""
    text = design_text(model_folder, None, entries=1, chatbots=chatbots, diarists='["amara"]')
    text = text.replace(
        "local = { batch_size = 3 }", f"local = {{ batch_size = 3, {diarist_local} }}"
    )
    text = text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    path = folder / "design.toml"
    path.write_text(text)
    return path


BAD_DESIGNS = [
    pytest.param(
        f"device_map = {inline_map({**SPLIT_MAP, 'model.layer.1': 'disk'})}",
        "",
        "diarist_model.local.device_map",
        "no module 'model.layer.1'",
        id="unknown-module",
    ),
    pytest.param(
        f"device_map = {inline_map(without('model.layers.1'))}",
        "",
        "diarist_model.local.device_map",
        "leaves out 1 module(s): 'model.layers.1'",
        id="layer-left-out",
    ),
    pytest.param(
        'device_map = { "" = "cuda:3" }',
        "",
        "diarist_model.local.device_map",
        "device cuda:3 does not exist on this machine (GPUs cuda:0..cuda:1)",
        id="device-the-machine-lacks",
    ),
    pytest.param(
        'device_map = "auto", max_memory = { cpu = "plenty" }',
        "",
        "diarist_model.local.max_memory.cpu",
        "'plenty' is not a memory size",
        id="max-memory-malformed",
    ),
    pytest.param(
        'max_memory = { cpu = "2GB" }',
        "",
        "diarist_model.local.max_memory",
        'sizes the map that device_map = "auto" makes',
        id="max-memory-without-auto",
    ),
    pytest.param(
        "dtype = 'fp32'",
        f"local = {{ device_map = {inline_map(without('lm_head'))} }}",
        "chatbots[1].local.device_map",
        "leaves out 1 module(s): 'lm_head'",
        id="chatbot-map-left-out",
    ),
]


@pytest.mark.parametrize(("diarist", "chatbot", "field", "says"), BAD_DESIGNS)
def test_a_bad_placement_in_a_design_is_one_clear_error_before_anything_is_written(
    tmp_path, capsys, tiny_model_folder, monkeypatch, diarist, chatbot, field, says
):
    monkeypatch.setattr(placement, "machine_gpus", lambda: 2)  # cuda:3 is absent anywhere
    path = placed_design(tmp_path, tiny_model_folder, diarist, chatbot)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    out = tmp_path / "out"
    for argv in (["design", "check", str(path)], ["run", str(path), "--out", str(out)]):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.startswith("diarylab: error: "), err
        assert f"{path} {field}: " in err and says in err and " — fix: " in err, err
        assert not out.exists() and sorted(p.name for p in tmp_path.rglob("*")) == before
    assert len(err.splitlines()) == 1, err  # `run` stops at the first problem


def test_a_run_with_a_split_diarist_records_where_its_models_sat(tmp_path, tiny_model_folder):
    path = placed_design(tmp_path, tiny_model_folder, f"device_map = {inline_map(SPLIT_MAP)}")
    assert main(["design", "check", str(path), "--offline"]) == 0  # a good map passes the check
    folder = run_design(load_design(path), tmp_path / "run", progress=False).folder
    manifest = json.loads((folder / "manifest.json").read_text())
    diarist = manifest["placements"]["diarist_model"]
    assert diarist["resolved_map"] == SPLIT_MAP and diarist["devices"] == ["cpu", "disk"]
    assert manifest["diarist_settings"]["local"]["device_map"] == SPLIT_MAP
    chatbot = manifest["placements"]["chatbots.tiny-chat"]
    assert chatbot["device_map"] is None and chatbot["single_device"] is True
    assert "placement" not in json.dumps(manifest["diarist_model"])  # not in the identity
