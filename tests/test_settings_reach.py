"""Every setting a design can hold arrives where it acts.

Two levels. (1) The settings objects a design holds (generation, local, endpoint) are the very
objects the runtime, the served client, the chatbots, the judges and the diarist writer read —
no copies, no renaming. (2) Each field of those objects acts there: batch_size 3 generates in
batches of 3; concurrency 7 puts 7 requests in flight at a loopback server; a 1 s timeout gives
up on a server that hangs; retries, backoff, the key variable and the generation settings reach
the wire. A meta-test walks every field of the design schema and fails when one has no proof, so
a new setting must be added here (or to the test named for it)."""

from __future__ import annotations

import threading
import time
import types
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

import diarylab.experiments.engine.writes as conversations  # where entries are written
from diarylab.chatbots.specs import LocalChatbotSpec, ServedChatbotSpec, build_chatbot
from diarylab.experiments.engine.contract import RunContext
from diarylab.experiments.kinds.diary.schema import DiaryDesignFile
from diarylab.experiments.opening import load_design
from diarylab.experiments.runner import JudgeSet, ModelCache, run_design
from diarylab.foundation.datafiles import validate
from diarylab.model_access.served import CompletionRequest, ServedClient, TransportFailure
from diarylab.model_access.settings import EndpointSettings, GenerationSettings, LocalSettings
from diarylab.rubric.judging.judges import ServedJudgeSpec
from tests.fake_judge_server import judge_handler
from tests.fake_openai import chat_response, serve
from tests.lab_fixtures import FIXED_ONLY, design_text, make_profile
from tests.stores import opened, requests

TESTS = Path(__file__).parent


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
    models = ModelCache()
    api_spec = spec.chatbot("api")
    api = build_chatbot(api_spec, models.get)
    assert api.generation is api_spec.generation and api.client.settings is api_spec.endpoint
    local_spec = validate(
        LocalChatbotSpec,
        {"id": "l", "kind": "local", "model": str(tiny_model_folder), "local": {"batch_size": 5}},
        "t",
    )
    local = build_chatbot(local_spec, models.get)
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
    on a Ray cluster in tests/test_ray_executor.py::test_executor_settings_reach_the_actors
    (actors, actor_cpus, actor_gpus, max_resends) and ::test_an_actor_killed_mid_batch_has_its_
    batch_resent (the batches on the actors); --address is handed to ray.init unchanged."""
    import diarylab.experiments.runner as runner
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
        bot = build_chatbot(spec.model_copy(update={"endpoint": settings}), ModelCache().get)
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
    model = ModelCache().get(str(tiny_model_folder), settings)
    assert model.dtype == torch.bfloat16 and model.device.type == "cpu"
    assert seen["revision"] == "main" and seen["trust_remote_code"] is True


def test_placement_settings_reach_from_pretrained_and_the_manifest(tiny_model_folder, monkeypatch):
    import diarylab.model_access.local as local
    from tests.conftest import SPLIT_MAP

    seen = []
    real = local.load_pretrained

    def spy(source, **kw):
        seen.append(kw["placement"])
        return real(source, **kw)

    monkeypatch.setattr(local, "load_pretrained", spy)
    split = LocalSettings(device_map=SPLIT_MAP, offload_folder="/nonexistent/offload")
    model = ModelCache().get(str(tiny_model_folder), split)
    assert seen[-1] == {"device_map": SPLIT_MAP, "offload_folder": "/nonexistent/offload"}
    assert model.settings is split and model.placement()["resolved_map"] == SPLIT_MAP
    assert {p.device.type for p in model.layers[1].parameters()} == {"meta"}  # on "disk"
    auto = LocalSettings(device_map="auto", max_memory={"cpu": "1GiB"})
    ModelCache().get(str(tiny_model_folder), auto)
    assert seen[-1] == {"device_map": "auto", "max_memory": {"cpu": 2**30}}


def test_served_judge_options_reach_the_judge():
    from diarylab.rubric.judging.judges import build_judge

    exact = validate(
        ServedJudgeSpec,
        {
            "id": "j",
            "kind": "litellm",
            "model": "openai/j",
            "tokenizer": "smollm2",
            "reasoning_effort": "high",
            "top_logprobs": 7,
            "ids_per_request": 50,
            "node_cutoff": 0.001,
        },
        "t",
    )
    judge = build_judge(exact, ModelCache().get)
    assert judge.mode == "exact" and judge.tokenizer is not None
    e = judge.exact_settings
    assert (e.reasoning_effort, e.top_logprobs, e.ids_per_request, e.node_cutoff) == (
        "high",
        7,
        50,
        0.001,
    )
    assert judge.identity()["reasoning_effort"] == "high"
    chat = validate(
        ServedJudgeSpec,
        {
            "id": "j",
            "kind": "litellm",
            "model": "openai/j",
            "tokenizer": "smollm2",
            "mode": "top-k",
            "prefill": False,
            "expand_floor": 0.01,
            "top_logprobs": 9,
        },
        "t",
    )
    judge = build_judge(chat, ModelCache().get)
    assert judge.mode == "top-k"
    c = judge.chat_settings
    assert (c.prefill, c.expand_floor, c.top_logprobs) == (False, 0.01, 9)
    assert judge.identity()["top_logprobs"] == 9


# ------------------------------------------------------------------ every field has a proof
HERE = "tests/test_settings_reach.py::"
SETTINGS_PROOFS: dict[type, dict[str, str]] = {
    GenerationSettings: dict.fromkeys(
        ("max_new_tokens", "temperature", "top_p"),
        HERE + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
    ),
    LocalSettings: {
        "batch_size": HERE + "test_batch_size_3_generates_in_batches_of_3",
        **dict.fromkeys(
            ("dtype", "device", "revision", "trust_remote_code"),
            HERE + "test_local_settings_load_the_model_as_asked",
        ),
        **dict.fromkeys(
            ("device_map", "max_memory", "offload_folder"),
            HERE + "test_placement_settings_reach_from_pretrained_and_the_manifest",
        ),
    },
    EndpointSettings: {
        "base_url": HERE + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
        "api_key_env": HERE
        + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
        "concurrency": HERE
        + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
        "timeout_s": HERE + "test_timeout_gives_up_on_a_server_that_hangs",
        "max_retries": HERE + "test_max_retries_and_backoff_are_obeyed",
        "backoff_s": HERE + "test_max_retries_and_backoff_are_obeyed",
        "retry_budget_s": "tests/test_served.py::"
        "test_the_retry_budget_stops_a_call_whose_waits_would_pass_it",
        "prompts_per_request": HERE
        + "test_max_error_and_scout_logprobs_reach_the_readers_and_the_identity",
    },
}
# The fields that are not inside a settings object, each with the test that shows it acting.
CONVERSATION = "tests/test_conversations.py::"
DESIGN = "tests/test_design.py::"
PROFILES = "tests/test_profile_making.py::"
HYPOTHESES = "tests/test_hypotheses.py::"
FIELD_PROOFS = {
    # The check makes its one-token call to the chatbot only when probe = true.
    "chatbots[litellm].probe": "tests/test_design_check.py::"
    "test_probe_true_makes_one_cheap_call_and_false_makes_none",
    "design.name": "tests/test_resume.py::test_run_records_design_and_manifest",
    "design.kind": DESIGN + "test_malformed_design_is_one_clear_error",
    "design.version": "tests/test_resume.py::test_run_records_design_and_manifest",
    "design.description": "tests/test_resume.py::test_run_records_design_and_manifest",
    "design.seed": "tests/test_resume.py::test_killed_runs_resume_to_the_same_store",
    "design.entries": HERE + "test_batch_size_3_generates_in_batches_of_3",
    "design.coverage_floor": PROFILES
    + "test_calibration_rule_uses_the_design_judge_and_records_its_choice",
    "diarist_model.model": HERE + "test_settings_objects_travel_unchanged_to_their_consumers",
    "diarist_model.engine": "tests/test_vllm_engine_reach.py::"
    "test_the_vllm_engine_and_its_settings_reach_the_worker",
    "chatbots[local].engine": "tests/test_vllm_engine_reach.py::"
    "test_a_local_chatbot_on_vllm_shares_the_diarists_worker",
    "chatbots[fixed].id": CONVERSATION + "test_fixed_reply_baseline_calls_no_model",
    "chatbots[fixed].kind": CONVERSATION + "test_fixed_reply_baseline_calls_no_model",
    "chatbots[fixed].text": CONVERSATION + "test_fixed_reply_baseline_calls_no_model",
    "chatbots[local].system": HERE
    + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
    "chatbots[litellm].system": HERE
    + "test_concurrency_7_puts_7_requests_in_flight_for_chatbots_and_judges",
    "judges[litellm|openai-compatible].tokenizer": HERE
    + "test_served_judge_options_reach_the_judge",
    "judges[litellm|openai-compatible].prefill": HERE + "test_served_judge_options_reach_the_judge",
    "judges[litellm|openai-compatible].expand_floor": HERE
    + "test_served_judge_options_reach_the_judge",
    **{
        f"judges[litellm|openai-compatible].{name}": HERE
        + "test_served_judge_options_reach_the_judge"
        for name in ("mode", "reasoning_effort", "top_logprobs", "ids_per_request", "node_cutoff")
    },
    **{
        name: HERE + "test_max_error_and_scout_logprobs_reach_the_readers_and_the_identity"
        for name in (
            "judges[litellm|openai-compatible].max_error",
            "judges[litellm|openai-compatible].scout_logprobs",
            "judges[local].max_error",
        )
    },
    "judges[litellm|openai-compatible].probe_floor": "tests/test_preflight.py::"
    "test_a_judge_that_rarely_starts_a_number_on_the_probe_is_refused",
    "profiles.id": PROFILES + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "profiles.pattern": PROFILES + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "profiles.extraction.pairs": PROFILES + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "profiles.extraction.batch_size": PROFILES
    + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "analysis.resamples": "tests/test_diary_tables.py::test_report_command_writes_findings",
    "analysis.cluster": "tests/test_diary_tables.py::"
    "test_the_design_cluster_and_baseline_chatbot_reach_the_report",
    "analysis.baseline_chatbot": "tests/test_diary_tables.py::"
    "test_the_design_cluster_and_baseline_chatbot_reach_the_report",
    "analysis.min_diarists": "tests/test_diary_tables.py::"
    "test_the_design_minimum_of_diarists_reaches_the_report",
    "analysis.decision_rule": "tests/test_diary_tables.py::"
    "test_the_design_rule_and_interval_reach_the_report",
    "analysis.interval": "tests/test_diary_tables.py::"
    "test_the_design_rule_and_interval_reach_the_report",
    "cast.diarists": DESIGN + "test_valid_design_checks_and_expands",
    "cast.profiles": DESIGN + "test_valid_design_checks_and_expands",
    "scores.entry": HERE + "test_batch_size_3_generates_in_batches_of_3",
    "scores.patterns": HERE + "test_batch_size_3_generates_in_batches_of_3",
}
# Prefixes whose fields are all proved by one test.
PREFIX_PROOFS = {
    # On the worker's command line here; vLLM runs with them: tests/test_vllm_engine.py
    # test_the_worker_runs_with_the_settings_it_was_given.
    "diarist_model.vllm.": "tests/test_vllm_engine_reach.py::"
    "test_the_vllm_engine_and_its_settings_reach_the_worker",
    "profiles.steer.": PROFILES + "test_fixed_rule_extracts_once_and_keeps_the_profile",
    "profiles.calibration.": PROFILES
    + "test_calibration_rule_uses_the_design_judge_and_records_its_choice",
    # A hypothesis's head and contrast decide its verdict and what the results table says.
    "hypotheses.contrast": HYPOTHESES + "test_verdicts_follow_the_planted_effects",
    "hypotheses.": "tests/test_analysis_hypotheses.py::"
    "test_diary_and_friends_give_the_same_verdicts_from_the_same_values",
    "chatbots[local].vllm.": "tests/test_vllm_engine_reach.py::"
    "test_a_local_chatbot_on_vllm_shares_the_diarists_worker",
    # A spec's id, kind and model pick what is built (the travel test builds every kind).
    "chatbots[local].": HERE + "test_settings_objects_travel_unchanged_to_their_consumers",
    "chatbots[litellm].": HERE + "test_settings_objects_travel_unchanged_to_their_consumers",
    "judges[": HERE + "test_settings_objects_travel_unchanged_to_their_consumers",
    # The run reused and its two locks decide what a derived run copies and what it refuses.
    "derived_from.": "tests/test_derived_runs.py::"
    "test_adding_a_judge_writes_nothing_and_reads_the_run_judge_from_its_calls",
}


def _members(annotation: typing.Any) -> list[typing.Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list, tuple):
        return [m for a in typing.get_args(annotation) if a is not Ellipsis for m in _members(a)]
    return [annotation]


def leaves(model: type[BaseModel], prefix: str = "") -> list[tuple[str, type, str]]:
    """(path, owning model, field name) for every leaf field of a schema."""
    out = []
    for name, info in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        subs = [
            m for m in _members(info.annotation) if isinstance(m, type) and issubclass(m, BaseModel)
        ]
        if not subs:
            out.append((path, model, name))
            continue
        for sub in subs:
            tag = ""
            if len(subs) > 1:
                kind = sub.model_fields.get("kind")
                tag = "[" + "|".join(typing.get_args(kind.annotation) if kind else ()) + "]"
            out += leaves(sub, path + tag)
    return out


def proof_of(path: str, owner: type, name: str) -> str | None:
    if owner in SETTINGS_PROOFS:
        return SETTINGS_PROOFS[owner].get(name)
    if path in FIELD_PROOFS:
        return FIELD_PROOFS[path]
    return next((p for prefix, p in PREFIX_PROOFS.items() if path.startswith(prefix)), None)


def test_every_design_field_has_a_proof_that_exists():
    missing = [
        path for path, owner, name in leaves(DiaryDesignFile) if not proof_of(path, owner, name)
    ]
    assert missing == [], f"add these settings to a reach test: {missing}"
    for path, owner, name in leaves(DiaryDesignFile):
        proof = proof_of(path, owner, name)
        assert proof is not None
        assert_test_exists(path, proof)


def assert_test_exists(path: str, proof: str) -> None:
    """A proof is a test function, not a file: `tests/test_x.py::test_name`, and it exists."""
    file, _, test = proof.partition("::")
    assert test, f"{path}: {proof} names a file, not the test function that proves the field"
    text = (TESTS.parent / file).read_text(encoding="utf-8")
    assert f"def {test}(" in text, f"{path}: {proof} does not exist"


# The friends kind's own tables, each with the test that shows it acting; the tables every
# design shares are proved above.
FRIENDS = "tests/test_friends_"
FRIENDS_PROOFS = {
    "design.entries": FRIENDS
    + "letters.py::test_every_letter_is_written_once_and_the_fixed_friend_calls_no_model",
    "pairs.cards": FRIENDS + "pairs.py::test_every_card_sits_equally_often_in_each_seat_and_order",
    "pairs.a_first": FRIENDS
    + "pairs.py::test_every_card_sits_equally_often_in_each_seat_and_order",
    "pairs.b_first": FRIENDS
    + "pairs.py::test_every_card_sits_equally_often_in_each_seat_and_order",
    "conditions.steered": FRIENDS + "pairs.py::test_controls_have_the_right_seats",
    "conditions.controls": FRIENDS + "pairs.py::test_controls_have_the_right_seats",
    "outcome.letters": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "scores.letter": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "scores.patterns": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.resamples": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.cluster": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.min_role_cards": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.decision_rule": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
    "analysis.interval": FRIENDS + "kind.py::test_a_reduced_friends_design_runs_and_reports",
}
FRIENDS_PREFIX_PROOFS = {
    "hypotheses.contrast": FRIENDS
    + "verdicts.py::test_holm_is_applied_across_the_hypotheses_of_each_judge",
    "hypotheses.": "tests/test_analysis_hypotheses.py::"
    "test_diary_and_friends_give_the_same_verdicts_from_the_same_values",
}


def test_every_friends_design_field_has_a_proof_that_exists():
    from diarylab.experiments.kinds.friends.schema import FriendsDesignFile

    def proof(path: str, owner: type, name: str) -> str | None:
        if path in FRIENDS_PROOFS:
            return FRIENDS_PROOFS[path]
        found = [p for prefix, p in FRIENDS_PREFIX_PROOFS.items() if path.startswith(prefix)]
        return found[0] if found else proof_of(path, owner, name)

    fields = leaves(FriendsDesignFile)
    missing = [path for path, owner, name in fields if not proof(path, owner, name)]
    assert missing == [], f"add these settings to a reach test: {missing}"
    for path, owner, name in fields:
        assert_test_exists(path, str(proof(path, owner, name)))


# ------------------------------------------------------------------ the benchmark kind's fields
BENCH_RUN = "tests/test_benchmark_run.py::"
BENCH_OPTIONS = "tests/test_benchmark_options.py::"
BENCHMARK_PROOFS = {
    "benchmark.data": BENCH_RUN + "test_a_benchmark_design_runs_resumes_and_reports",
    "benchmark.format": BENCH_OPTIONS + "test_the_format_picks_the_schema",
    "benchmark.sample": BENCH_RUN + "test_a_benchmark_design_runs_resumes_and_reports",
    "benchmark.convention": BENCH_OPTIONS + "test_the_design_chooses_the_scoring_convention",
    "benchmark.grader.template": BENCH_OPTIONS
    + "test_the_grader_template_and_generation_reach_the_judge",
    "benchmark.grader.generation.": BENCH_OPTIONS
    + "test_the_grader_template_and_generation_reach_the_judge",
    "benchmark.grader.defaults": BENCH_OPTIONS
    + "test_the_grader_defaults_are_the_reference_graders_and_the_labs_stay_an_option",
    "benchmark.grader.retries": BENCH_RUN
    + "test_a_local_judge_writes_then_is_read_and_malformed_answers_stay_ungraded",
    "benchmark.grader.retry_temperature": BENCH_OPTIONS
    + "test_retries_sample_at_the_retry_temperature",
    "benchmark.calibration.": BENCH_RUN + "test_a_benchmark_design_runs_resumes_and_reports",
    "benchmark.calibration.anchors.se": BENCH_OPTIONS
    + "test_anchors_need_a_standard_error_and_a_source_and_placeholders_are_flagged",
    "benchmark.calibration.anchors.source": BENCH_OPTIONS
    + "test_anchors_need_a_standard_error_and_a_source_and_placeholders_are_flagged",
    "benchmark.calibration.anchors.placeholder": BENCH_OPTIONS
    + "test_anchors_need_a_standard_error_and_a_source_and_placeholders_are_flagged",
    "benchmark.validation": "tests/test_benchmark_validation.py::"
    "test_a_run_with_both_candidate_graders_reports_them",
    # Refused in benchmark designs (a benchmark reply answers one fixed conversation).
    "design.entries": BENCH_OPTIONS + "test_benchmark_designs_refuse_what_they_cannot_use",
    "diarist_model.": BENCH_OPTIONS + "test_benchmark_designs_refuse_what_they_cannot_use",
}


def benchmark_proof(path: str, owner: type, name: str) -> str | None:
    if path in BENCHMARK_PROOFS:
        return BENCHMARK_PROOFS[path]
    for prefix, proof in BENCHMARK_PROOFS.items():
        if prefix.endswith(".") and path.startswith(prefix):
            return proof
    return proof_of(path, owner, name)


def test_every_benchmark_design_field_has_a_proof_that_exists():
    from diarylab.experiments.kinds.benchmark.schema import BenchmarkDesignFile

    fields = leaves(BenchmarkDesignFile)
    missing = [path for path, owner, name in fields if not benchmark_proof(path, owner, name)]
    assert missing == [], f"add these settings to a reach test: {missing}"
    for path, owner, name in fields:
        proof = benchmark_proof(path, owner, name)
        assert proof is not None
        assert_test_exists(path, proof)


def test_max_error_and_scout_logprobs_reach_the_readers_and_the_identity(monkeypatch):
    """A judge's max_error (both kinds) and scout_logprobs reach the reader that uses them and
    the judge's identity (they change results); prompts_per_request and a list of base URLs
    reach the client and never the identity (transport)."""
    from diarylab.rubric.judging.judges import LocalJudgeSpec, build_judge

    served = validate(
        ServedJudgeSpec,
        {
            "id": "j",
            "kind": "litellm",
            "model": "openai/j",
            "tokenizer": "smollm2",
            "max_error": 0.2,
            "scout_logprobs": 9,
            "endpoint": {"base_url": ["http://a/v1", "http://b/v1"], "prompts_per_request": 7},
        },
        "t",
    )
    judge = build_judge(served, ModelCache().get)
    assert (judge.exact_settings.max_error, judge.exact_settings.scout_logprobs) == (0.2, 9)
    assert judge.identity()["max_error"] == 0.2 and judge.identity()["scout_logprobs"] == 9
    assert judge.client.settings.prompts_per_request == 7
    assert judge.client.replicas.urls == ("http://a/v1", "http://b/v1")
    other = validate(
        ServedJudgeSpec,
        {
            "id": "j",
            "kind": "litellm",
            "model": "openai/j",
            "tokenizer": "smollm2",
            "max_error": 0.2,
            "scout_logprobs": 9,
            "endpoint": {"base_url": "http://c/v1", "prompts_per_request": 1},
        },
        "t",
    )
    assert build_judge(other, ModelCache().get).identity() == judge.identity()
    assert ServedJudgeSpec.model_fields["max_error"].default == 0.05
    local = validate(
        LocalJudgeSpec, {"id": "l", "kind": "local", "model": "m", "max_error": 0.3}, "t"
    )
    seen = {}

    class Model:
        def info(self):
            raise AssertionError("not needed")

    built = build_judge(local, lambda spec, settings: seen.setdefault("m", Model()))
    assert built.max_error == 0.3
