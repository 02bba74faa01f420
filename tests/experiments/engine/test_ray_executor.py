"""The Ray executor on a local Ray cluster this module starts once (2 CPUs, 2 actors) and the
tiny random model: a diary run and a friends run make the very store an in-process run makes,
and so do a run whose served judge reads on the actors (each actor its own client of the
vLLM-faithful stand-in) and a run whose actor is killed mid-batch (its batch is sent again,
nothing is stored twice)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from diarylab.experiments.designs.opening import load_design  # noqa: E402
from diarylab.experiments.engine import ray_executor, writes  # noqa: E402
from diarylab.experiments.engine.executor import ExecutorSettings  # noqa: E402
from diarylab.experiments.running.runner import run_design  # noqa: E402
from diarylab.foundation.errors import LabError  # noqa: E402
from diarylab.model_access.local import LocalModel  # noqa: E402
from diarylab.steering.apply import write_steered  # noqa: E402
from diarylab.testing.fake_judge_server import judge_handler  # noqa: E402
from diarylab.testing.fake_openai import serve  # noqa: E402
from diarylab.testing.friends_fixtures import FIRST_HYPOTHESIS, friends_design  # noqa: E402
from diarylab.testing.judge_helpers import bias_logits  # noqa: E402
from diarylab.testing.lab_fixtures import design_text, make_profile  # noqa: E402
from diarylab.testing.stores import opened as opened_store  # noqa: E402
from diarylab.testing.stores import snapshot  # noqa: E402
from diarylab.testing.tiny_models import TINY_SPEC, build_tiny_llama  # noqa: E402

pytestmark = pytest.mark.ray
TWO_ACTORS = ExecutorSettings(kind="ray", actors=2)


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local cluster for the module: each start costs seconds on a 2-core machine."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def store_tables(folder: Path) -> dict[str, list[tuple]]:
    """Every table of the run's store, rows sorted; calls without the time each was made."""
    with opened_store(folder) as store:
        names = [name for name in store.tables() if name != "calls"]
    return snapshot(folder, names)


@pytest.fixture
def opened(monkeypatch) -> list[ray_executor.RayExecutor]:
    """The Ray executors the runs of a test open, to look at after (or during) the run."""
    executors: list[ray_executor.RayExecutor] = []
    init = ray_executor.RayExecutor.__init__

    def keep(self, *args, **kwargs):
        init(self, *args, **kwargs)
        executors.append(self)

    monkeypatch.setattr(ray_executor.RayExecutor, "__init__", keep)
    return executors


@pytest.fixture(scope="module")
def diary(tmp_path_factory, tiny_model_folder) -> Path:
    folder = tmp_path_factory.mktemp("ray-diary")
    profile = make_profile(folder, tiny_model_folder)
    path = folder / "design.toml"
    # One diarist and one entry score keep it small: each local reading takes seconds on a busy
    # 2-core machine, and both paths (writing, a local chatbot, a local judge) are still there.
    text = design_text(tiny_model_folder, profile, entries=2, diarists='["amara"]')
    path.write_text(
        text.replace('entry = ["pattern", "coherence", "realism"]', 'entry = ["coherence"]')
    )
    return path


@pytest.fixture(scope="module")
def diary_reference(diary, tmp_path_factory) -> dict[str, list[tuple]]:
    out = tmp_path_factory.mktemp("ray-diary-ref") / "run"
    run_design(load_design(diary), out, progress=False)
    return store_tables(out)


def test_a_diary_run_on_two_actors_makes_the_in_process_store(
    diary, diary_reference, tmp_path, opened
):
    summary = run_design(load_design(diary), tmp_path / "run", progress=False, executor=TWO_ACTORS)
    assert opened[0].here == 0  # every local batch was computed on an actor
    got = store_tables(tmp_path / "run")
    assert got["entries"] and got["replies"] and got["judgments"]
    assert got == diary_reference
    assert summary.calls_made == len(diary_reference["calls"]) and summary.resent == 0
    # The actors are gone with the run; the cluster (the test's own) stays.
    assert ray.is_initialized()
    assert not [a for a in ray.util.list_named_actors() if a.startswith("diarylab-actor")]


def test_a_friends_run_on_two_actors_makes_the_in_process_store(
    tmp_path, tiny_model_folder, opened
):
    design = friends_design(
        tmp_path,
        tiny_model_folder,
        controls='["fixed_friend"]',
        entries=2,
        outcome="[2]",
        hypotheses=FIRST_HYPOTHESIS,
    )
    run_design(load_design(design), tmp_path / "inprocess", progress=False)
    run_design(load_design(design), tmp_path / "ray", progress=False, executor=TWO_ACTORS)
    assert opened[0].here == 0
    expected = store_tables(tmp_path / "inprocess")
    assert expected["letters"] and expected["judgments"]
    assert store_tables(tmp_path / "ray") == expected


SERVED_JUDGE = """
[[judges]]
id = "tiny-judge"
kind = "openai-compatible"
model = "hosted_vllm/fake-judge"
tokenizer = "{model}"
probe_floor = 0.0
endpoint = {{ base_url = "{url}", concurrency = 2 }}
"""


def test_a_served_judge_reads_on_the_actors_and_makes_the_in_process_store(
    tmp_path, tiny_model_folder, shipped_tokenizer, opened
):
    """Each actor builds its own client of the served judge from the judge's spec (its
    tokenizer, caches and connections) and walks the bounded readings there; the store is the
    in-process run's, and no judge batch was computed in this process."""
    judge = LocalModel(
        build_tiny_llama(shipped_tokenizer, seed=3), shipped_tokenizer, spec=TINY_SPEC
    )
    digits = shipped_tokenizer.convert_tokens_to_ids([str(d) for d in range(10)])
    bias_logits(judge, dict.fromkeys([*digits, shipped_tokenizer.eos_token_id], 30.0))
    with serve(judge_handler(judge)) as server:
        text = design_text(
            tiny_model_folder,
            None,
            entries=1,
            diarists='["amara"]',
            chatbots='\n[[chatbots]]\nid = "thanks"\nkind = "fixed"\n',
            judges=SERVED_JUDGE.format(model=tiny_model_folder, url=server.base_url),
        )
        design = tmp_path / "design.toml"
        design.write_text(text)
        run_design(load_design(design), tmp_path / "inprocess", progress=False)
        run_design(load_design(design), tmp_path / "ray", progress=False, executor=TWO_ACTORS)
    assert opened[0].here == 0  # the writer's batches and every judge batch went to actors
    expected = store_tables(tmp_path / "inprocess")
    assert len(expected["judgments"]) > 4
    assert store_tables(tmp_path / "ray") == expected


def slow_write_steered(*args, **kwargs):
    """steering's write_steered, a second slower: a batch is surely still on its actor when the
    test kills it. The write closure is pickled with this function in write_steered's place (by
    reference: the actor imports this module) and the texts are the same."""
    time.sleep(1.0)
    return write_steered(*args, **kwargs)


def test_an_actor_killed_mid_batch_has_its_batch_resent(
    diary, diary_reference, tmp_path, monkeypatch, opened
):
    """The test kills actor 0 half a second into a writing batch; Ray restarts it, the executor
    sends the batch again (to the other actor, or to this one once it is back), and the run
    still ends with the in-process store."""
    executors = opened
    monkeypatch.setattr(writes, "write_steered", slow_write_steered)
    stop = threading.Event()
    kills: list[str] = []

    def killer() -> None:
        # Actor 0 takes the first writing batch (loading its model); the kill comes half a
        # second into its next one, so the actor is surely up and computing, not starting.
        seen, before = 0, "idle"
        while not stop.is_set() and not kills:
            doing = executors[0].doing[0] if executors else "idle"
            if doing.startswith("diarist") and doing != before:
                seen += 1
                if seen == 2:
                    time.sleep(0.5)
                    kills.append(doing)
                    ray.kill(executors[0].actors[0], no_restart=False)
            before = doing
            time.sleep(0.005)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        summary = run_design(
            load_design(diary), tmp_path / "run", progress=False, executor=TWO_ACTORS
        )
    finally:
        stop.set()
        thread.join()
    assert kills, "the killer never found actor 0 writing"
    assert summary.resent == 1
    assert store_tables(tmp_path / "run") == diary_reference
    # Nothing stored twice: every call once, and the summary counted each call once.
    assert summary.calls_made == len(diary_reference["calls"])


# ------------------------------------------------------------ the executor's own parts
def test_executor_settings_reach_the_actors(tiny_ref):
    """actors and actor_cpus/actor_gpus size the actors; each actor loads the model from its
    ModelRef (the load settings unchanged) and computes what the closure asks; an error there
    is raised here as itself; a batch lost with its actor more than max_resends times is one
    error. One executor for all of it: each actor's start costs seconds."""
    model, ref = tiny_ref
    settings = ExecutorSettings(kind="ray", actors=2, actor_cpus=0.5, actor_gpus=0, max_resends=0)
    executor = ray_executor.RayExecutor(settings, lambda: {id(model): ref})
    try:
        assert len(executor.actors) == 2 and executor.width == 2
        ray.get([a.ping.remote() for a in executor.actors])
        used = ray.cluster_resources()["CPU"] - ray.available_resources().get("CPU", 0)
        assert used == pytest.approx(1.0)
        assert ray.available_resources().get("GPU", 0) == 0
        done = {
            tuple(b): r
            for b, r in executor.batches(
                lambda batch: [{"i": i, "layers": model.num_layers} for i in batch],
                [[0, 1], [2], [3]],
                label="test",
                to_actors=True,
            )
        }
        assert done == {
            (0, 1): [{"i": 0, "layers": 2}, {"i": 1, "layers": 2}],
            (2,): [{"i": 2, "layers": 2}],
            (3,): [{"i": 3, "layers": 2}],
        }
        assert executor.status() == "a0 idle · a1 idle"

        def bad(batch):
            raise LabError(f"no good ({model.num_layers} layers)", where="test")

        with pytest.raises(LabError, match=r"test: no good \(2 layers\)"):
            list(executor.batches(bad, [[0]], label="bad", to_actors=True))

        def slow(batch):
            time.sleep(5)
            return [{"layers": model.num_layers} for _ in batch]

        def kill() -> None:
            while executor.doing[0] == "idle":
                time.sleep(0.01)
            time.sleep(1.0)
            ray.kill(executor.actors[0], no_restart=False)

        thread = threading.Thread(target=kill, daemon=True)
        thread.start()
        with pytest.raises(LabError, match="lost with its actor 1 times"):
            list(executor.batches(slow, [[0]], label="slow", to_actors=True))
        thread.join()
    finally:
        executor.close()
    assert not [a for a in ray.util.list_named_actors() if a.startswith("diarylab-actor")]
