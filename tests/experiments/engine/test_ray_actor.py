"""What travels to a Ray actor and what it makes of it (experiments/engine/ray_actor.py): a
closure's local models as their load settings, its served judges as their specs, each made
again on the actor side; no cluster needed (tests/experiments/engine/test_ray_executor.py sends
batches)."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")

from diarylab.experiments.engine import ray_actor  # noqa: E402
from diarylab.experiments.engine.executor import JudgeRef  # noqa: E402
from diarylab.model_access.local import LocalModel  # noqa: E402
from diarylab.model_access.settings import EndpointSettings  # noqa: E402
from diarylab.model_access.shared_models import ModelRef  # noqa: E402
from diarylab.rubric.judging.building import build_judge  # noqa: E402
from diarylab.rubric.judging.named_judge import judge_spec  # noqa: E402

pytestmark = pytest.mark.ray


def test_a_closure_travels_with_its_local_models_as_references(tiny_ref):
    model, ref = tiny_ref
    data = ray_actor.dumps(lambda batch: [{"layers": model.num_layers}], {id(model): ref})
    assert data is not None and len(data) < 10_000  # the reference, not the weights
    # Unpickled, the reference becomes whatever model the loading side holds for it.
    seen: list[ModelRef] = []
    loaded = ray_actor.loads(data, lambda got: seen.append(got) or model)
    assert loaded([0]) == [{"layers": 2}] and seen == [ref]
    # A closure without a local model (a served call) or with one the run did not load stays
    # in this process.
    assert ray_actor.dumps(lambda batch: [{"n": len(batch)}], {id(model): ref}) is None
    assert ray_actor.dumps(lambda batch: [{"l": model.num_layers}], {}) is None


def test_a_closure_travels_with_its_served_judge_as_its_spec(tiny_model_folder):
    """A served judge travels as the spec the design gave it (not its tokenizer or client), and
    the actor side builds its own judge from it: the same identity, the same reading settings."""
    spec = judge_spec(
        "litellm:hosted_vllm/fake-judge",
        endpoint=EndpointSettings(base_url="http://127.0.0.1:9/v1", concurrency=3),
        served={"tokenizer": str(tiny_model_folder), "node_cutoff": 0.03},
    )
    judge = build_judge(spec, LocalModel.load)
    ref = JudgeRef(spec.model_dump_json())
    data = ray_actor.dumps(lambda batch: [{"id": judge.identity()["model"]}], {id(judge): ref})
    assert data is not None and len(data) < 10_000  # the spec, not the tokenizer
    actor = ray_actor.ModelActor(0)
    loaded = ray_actor.loads(data, actor.made)
    assert loaded([0]) == [{"id": "hosted_vllm/fake-judge"}]
    built = actor.judges[ref]
    assert built is not judge and built.identity() == judge.identity()
    assert built.batch_size == 3 and built.exact_settings == judge.exact_settings
    # A served judge the run did not build itself stays in this process.
    assert ray_actor.dumps(lambda batch: [{"m": judge.model}], {}) is None
