"""Every setting a design can hold arrives where it acts.

Two levels. (1) The settings objects a design holds (generation, local, endpoint) are the very
objects the runtime, the served client, the chatbots, the judges and the diarist writer read —
no copies, no renaming. (2) Each field of those objects acts there: batch_size 3 generates in
batches of 3; concurrency 7 puts 7 requests in flight at a loopback server; a 1 s timeout gives
up on a server that hangs; retries, backoff, the key variable and the generation settings reach
the wire. A meta-test (tests/test_settings_proofs.py) walks every field of the design schema and
fails when one has no proof, so a new setting must be added there with the test that proves it
(here, tests/rubric/judging/test_settings_reach_judges.py for a judge's own, or the test named for
it)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import diarylab.experiments.engine.writes as conversations  # where entries are written
from diarylab.chatbots.specs import LocalChatbotSpec, ServedChatbotSpec, build_chatbot
from diarylab.experiments.designs.opening import load_design
from diarylab.experiments.engine.contract import RunContext
from diarylab.experiments.running.runner import JudgeSet, run_design
from diarylab.foundation.datafiles import validate
from diarylab.model_access.served import CompletionRequest, ServedClient, TransportFailure
from diarylab.model_access.settings import EndpointSettings, GenerationSettings, LocalSettings
from diarylab.model_access.shared_models import LocalModels
from diarylab.testing.fake_judge_server import judge_handler
from diarylab.testing.fake_openai import chat_response, serve
from diarylab.testing.lab_fixtures import FIXED_ONLY, design_text, make_profile
from diarylab.testing.stores import opened, requests


class InFlight:
    """Wraps a handler: holds each request until `target` requests are in flight together (or
    `hold` seconds pass, so a client that never sends that many still gets answers) and records
    the most at once. Waiting for the target, not a fixed time, keeps a slow machine from
    starting the client's threads too far apart to overlap."""

    def __init__(self, handler, hold: float, target: int = 7) -> None:
        self.handler, self.hold, self.target = handler, hold, target
        self.now = self.most = 0
        self.changed = threading.Condition()

    def __call__(self, body):
        with self.changed:
            self.now += 1
            self.most = max(self.most, self.now)
            self.changed.notify_all()
            self.changed.wait_for(lambda: self.now >= self.target, timeout=self.hold)
        try:
            return self.handler(body)
        finally:
            with self.changed:
                self.now -= 1
                self.changed.notify_all()


def served_design(folder: Path, model_folder: Path, chat_url: str, judge_url: str) -> Path:
    profile = make_profile(folder, model_folder)
    chatbots = f"""
[[chatbots]]
id = "thanks"
kind = "fixed"

[[chatbots]]
id = "api"
kind = "litellm"
model = "openai/fake-chat"
system = "Be brief."
generation = {{ max_new_tokens = 33, temperature = 0.4, top_p = 0.8 }}
endpoint = {{ base_url = "{chat_url}", api_key_env = "DIARYLAB_TEST_KEY", concurrency = 7 }}
"""
    judges = f"""
[[judges]]
id = "served-judge"
kind = "openai-compatible"
model = "openai/fake-judge"
mode = "top-k"
endpoint = {{ base_url = "{judge_url}", concurrency = 7, max_retries = 0 }}
probe_floor = 0.0
"""
    text = design_text(
        model_folder,
        profile,
        entries=1,
        chatbots=chatbots,
        judges=judges,
        diarists='"all"',  # 8 diarists: at least 7 distinct replies even if twins agree
    ).replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    path = folder / "design.toml"
    path.write_text(text)
    return path


# ------------------------------------------------------------------ (1) the objects travel
def test_settings_objects_travel_unchanged_to_their_consumers(tmp_path, tiny_model_folder):
    design = load_design(served_design(tmp_path, tiny_model_folder, "http://x/v1", "http://y/v1"))
    spec = design.spec
    models = LocalModels()
    api_spec = spec.chatbot("api")
    api = build_chatbot(api_spec, models)
    assert api.generation is api_spec.generation and api.client.settings is api_spec.endpoint
    local_spec = validate(
        LocalChatbotSpec,
        {"id": "l", "kind": "local", "model": str(tiny_model_folder), "local": {"batch_size": 5}},
        "t",
    )
    local = build_chatbot(local_spec, models)
    assert local.local is local_spec.local and local.generation is local_spec.generation
    assert local.batch_size == 5
    judge = JudgeSet(design, models).get("served-judge")
    assert judge.client.settings is spec.judge("served-judge").endpoint
    assert judge.batch_size == 7
    writer_model = models.get(spec.diarist_model.model, spec.diarist_model.local)
    run = RunContext(design, tmp_path, None, writer_model, {}, {}, [])  # type: ignore[arg-type]
    writer = design.kind._writer(run)  # type: ignore[attr-defined]
    assert writer.generation is spec.diarist_model.generation
    assert writer.local is spec.diarist_model.local


def test_executor_settings_travel_from_the_run_option_to_the_executor(
    tmp_path, tiny_model_folder, monkeypatch
):
    """`diarylab run --executor ...` is a run option, not a design field: its one settings
    object reaches the executor the run opens (the store's), and the actors load each
    model with the very load settings the design gave it. What each field then does is proved
    on a Ray cluster in
    tests/experiments/engine/test_ray_executor.py::test_executor_settings_reach_the_actors (actors,
    actor_cpus, actor_gpus, max_resends) and ::test_an_actor_killed_mid_batch_has_its_ batch_resent
    (the batches on the actors); --address is handed to ray.init unchanged."""
    import diarylab.experiments.running.runner as runner
    from diarylab.experiments.engine.executor import ExecutorSettings

    class Opened(Exception):
        pass

    seen: dict[str, object] = {}

    def spy(settings, refs):
        seen["settings"], seen["refs"] = settings, refs()
        raise Opened  # enough: nothing is run on a cluster that is not there

    monkeypatch.setattr(runner, "open_executor", spy)
    settings = ExecutorSettings(
        kind="ray", address="ray://head:10001", actors=3, actor_gpus=2.0, actor_cpus=4.0
    )
    path = tmp_path / "design.toml"
    path.write_text(
        design_text(tiny_model_folder, None, entries=1, diarists='["amara"]', chatbots=FIXED_ONLY)
    )
    design = load_design(path)
    with pytest.raises(Opened):
        run_design(design, tmp_path / "run", progress=False, executor=settings)
    assert seen["settings"] is settings
    refs = list(seen["refs"].values())  # type: ignore[attr-defined]
    assert [r.spec for r in refs] == [design.spec.diarist_model.model]
    assert refs[0].local is design.spec.diarist_model.local


# ------------------------------------------------------------------ (2) the fields act
def test_batch_size_3_generates_in_batches_of_3(tmp_path, tiny_model_folder, monkeypatch):
    profile = make_profile(tmp_path, tiny_model_folder)
    text = design_text(tiny_model_folder, profile, entries=2, judges=None).replace(
        "generation = { max_new_tokens = 8, temperature = 0.9 }",
        "generation = { max_new_tokens = 5, temperature = 0.9 }",
    )
    (tmp_path / "design.toml").write_text(text)
    design = load_design(tmp_path / "design.toml")
    assert design.spec.diarist_model.local.batch_size == 3
    batches: list[int] = []
    real = conversations.write_steered

    def spy(model, chats, settings, **kw):
        batches.append(len(chats))
        assert settings is design.spec.diarist_model.generation
        return real(model, chats, settings, **kw)

    monkeypatch.setattr(conversations, "write_steered", spy)
    run_design(design, tmp_path / "run", progress=False)
    # 2 diarists × 2 profiles = 4 first entries, then 8 cells' second entries.
    assert batches == [3, 1, 3, 3, 2]

    with opened(tmp_path / "run") as store:
        new_tokens = [n for (n,) in store.select("entries", ["new_tokens"])]
        request = requests(store, "diarist")[0]
        items = {i for (i,) in store.select("judgments", ["item"], where={"target_kind": "entry"})}
    assert max(new_tokens) <= 5
    lab_set = {k: request["generation"][k] for k in ("max_new_tokens", "temperature", "top_p")}
    assert lab_set == {"max_new_tokens": 5, "temperature": 0.9, "top_p": 1.0}
    assert request["generation"]["pinned"]["repetition_penalty"] == 1.0  # the rest, pinned
    # [scores]: every entry is scored for the named patterns and scores, nothing else.
    assert {i for i in items if not i.startswith("person:")} == {
        "pattern:social_isolation",
        "coherence",
        "realism",
    }


def test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges(
    tmp_path, tiny_model_folder, tiny_model, monkeypatch
):
    monkeypatch.setenv("DIARYLAB_TEST_KEY", "sk-sentinel-4711")
    chat = InFlight(lambda body: (200, chat_response("A short reply.")), hold=1.0)
    judge = InFlight(judge_handler(tiny_model, mode="openai"), hold=0.2)
    with serve(chat) as chat_server, serve(judge) as judge_server:
        path = served_design(
            tmp_path, tiny_model_folder, chat_server.base_url, judge_server.base_url
        )
        run_design(load_design(path), tmp_path / "run", progress=False)
    assert chat.most == 7, chat.most  # 16 cells answered; 7 at once, never more
    assert judge.most == 7, judge.most
    # Generation settings and the system message reach the wire; the key only the header.
    body = chat_server.requests[0]
    assert (body["max_tokens"], body["temperature"], body["top_p"]) == (33, 0.4, 0.8)
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    headers = {k.lower(): v for k, v in chat_server.headers[0].items()}
    assert headers["authorization"] == "Bearer sk-sentinel-4711"
    for file in (tmp_path / "run").rglob("*"):
        if file.is_file():
            assert b"sk-sentinel-4711" not in file.read_bytes(), file


def test_timeout_gives_up_on_a_server_that_hangs():
    release = threading.Event()

    def hang(body):
        release.wait(30)
        return 200, chat_response("too late")

    spec = validate(
        ServedChatbotSpec,
        {"id": "slow", "kind": "litellm", "model": "openai/slow", "endpoint": {}},
        "t",
    )
    with serve(hang) as server:
        settings = EndpointSettings(base_url=server.base_url, timeout_s=1, max_retries=0)
        bot = build_chatbot(spec.model_copy(update={"endpoint": settings}), LocalModels())
        start = time.monotonic()
        with pytest.raises(TransportFailure):
            bot.reply_many([[{"role": "user", "content": "hello"}]], [1])
        took = time.monotonic() - start
        release.set()
    assert took < 8, took


def test_max_retries_and_backoff_are_obeyed():
    sleeps: list[float] = []
    with serve(lambda body: (503, {"error": "down"})) as server:
        settings = EndpointSettings(base_url=server.base_url, max_retries=2, backoff_s=0.25)
        client = ServedClient("openai/down", settings, sleep=sleeps.append)
        request = CompletionRequest.of(
            [{"role": "user", "content": "x"}], generation=GenerationSettings()
        )
        with pytest.raises(TransportFailure):
            client.complete(request)
    assert len(server.requests) == 3 and len(sleeps) == 2
    # Exponential with jitter: the n-th wait is backoff × 2^n × [0.5, 1.5).
    assert 0.125 <= sleeps[0] < 0.375 and 0.25 <= sleeps[1] < 0.75


def test_local_settings_load_the_model_as_asked(tiny_model_folder, monkeypatch):
    import torch

    import diarylab.model_access.local as local

    seen = {}
    real = local.load_pretrained

    def spy(source, **kw):
        seen.update(kw)
        return real(source, **kw)

    monkeypatch.setattr(local, "load_pretrained", spy)
    settings = LocalSettings(dtype="bf16", device="cpu", revision="main", trust_remote_code=True)
    model = LocalModels().get(str(tiny_model_folder), settings)
    assert model.dtype == torch.bfloat16 and model.device.type == "cpu"
    assert seen["revision"] == "main" and seen["trust_remote_code"] is True


def test_placement_settings_reach_from_pretrained_and_the_manifest(tiny_model_folder, monkeypatch):
    import diarylab.model_access.local as local
    from diarylab.testing.tiny_models import SPLIT_MAP

    seen = []
    real = local.load_pretrained

    def spy(source, **kw):
        seen.append(kw["placement"])
        return real(source, **kw)

    monkeypatch.setattr(local, "load_pretrained", spy)
    split = LocalSettings(device_map=SPLIT_MAP, offload_folder="/nonexistent/offload")
    model = LocalModels().get(str(tiny_model_folder), split)
    assert seen[-1] == {"device_map": SPLIT_MAP, "offload_folder": "/nonexistent/offload"}
    assert model.settings is split and model.placement()["resolved_map"] == SPLIT_MAP
    assert {p.device.type for p in model.layers[1].parameters()} == {"meta"}  # on "disk"
    auto = LocalSettings(device_map="auto", max_memory={"cpu": "1GiB"})
    LocalModels().get(str(tiny_model_folder), auto)
    assert seen[-1] == {"device_map": "auto", "max_memory": {"cpu": 2**30}}
