"""What runs on a Ray actor, and what travels to it: a batch's compute function pickled with
the run's local models and served judges as references (executor.ModelRef, executor.JudgeRef),
and the actor that resolves them to its own loaded models and built judges
(experiments/engine/ray_executor.py sends the batches). Imported only under `--executor ray`."""

from __future__ import annotations

import io
import pickle
import resource
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import ray
from ray import cloudpickle

from diarylab.experiments.engine.executor import Compute, JudgeRef, Ref
from diarylab.model_access.local import LocalModel
from diarylab.model_access.shared_models import LocalModels
from diarylab.rubric.judging.building import build_judge
from diarylab.rubric.judging.judge_base import Judge
from diarylab.rubric.judging.judges import ServedJudgeSpec
from diarylab.rubric.judging.served_judge import ServedJudge

CACHED_COMPUTES = 4  # closures an actor keeps unpickled (the cached calls in flight at once)


class _NotShippable(Exception):
    """The closure holds a local model or served judge no actor can make (one the run did not
    make itself)."""


def dumps(compute: Compute, refs: Mapping[int, Ref]) -> bytes | None:
    """The closure pickled with its local models and served judges as references; None when it
    holds none (a served chatbot's call stays here) or one the actors could not make."""
    found: list[Ref] = []

    class Pickler(cloudpickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:
            if isinstance(obj, (LocalModel, ServedJudge)):
                ref = refs.get(id(obj))
                if ref is None:
                    raise _NotShippable
                found.append(ref)
                return ref
            return None

    buffer = io.BytesIO()
    try:
        Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(compute)
    except (_NotShippable, pickle.PicklingError, TypeError, AttributeError):
        # Not for an actor (a model it cannot load, something that does not pickle): the
        # batches are computed here, with the same results; status() counts them.
        return None
    return buffer.getvalue() if found else None


def loads(data: bytes, model: Callable[[Ref], LocalModel | Judge]) -> Compute:
    class Unpickler(pickle.Unpickler):
        def persistent_load(self, pid: Any) -> Any:
            return model(pid)

    compute: Compute = Unpickler(io.BytesIO(data)).load()
    return compute


def torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


class ModelActor:
    """One actor: the run's local models, each loaded on first use on the actor's own device
    (Ray gives it its GPUs as CUDA_VISIBLE_DEVICES), its served judges, each built on first use,
    and the closures it was sent."""

    def __init__(self, index: int, threads: int = 0) -> None:
        self.index = index
        if threads > 0:
            import torch

            # The driver's thread count: on a CPU some kernels split their sums by thread, so
            # an actor on Ray's one thread per CPU would store other floats than a run
            # in-process (the tests hold the two stores equal).
            torch.set_num_threads(threads)
        self.models = LocalModels()  # the same door the run's own process loads through
        self.judges: dict[JudgeRef, Judge] = {}
        self.computes: OrderedDict[str, Compute] = OrderedDict()

    def made(self, ref: Ref) -> LocalModel | Judge:
        """What a reference in a closure stands for, on this actor."""
        if isinstance(ref, JudgeRef):
            if ref not in self.judges:
                spec = ServedJudgeSpec.model_validate_json(ref.spec)
                self.judges[ref] = build_judge(spec, self.models.get)
            return self.judges[ref]
        return self.models.opened(ref)

    def run(self, key: str, payload: list[Any], batch: list[int]) -> list[dict[str, Any]]:
        # The payload comes wrapped in a list so Ray hands over the reference, not the bytes:
        # an actor fetches and unpickles each closure once, however many batches it gets.
        compute = self.computes.get(key)
        if compute is None:
            compute = loads(ray.get(payload[0]), self.made)
            self.computes[key] = compute
            while len(self.computes) > CACHED_COMPUTES:
                self.computes.popitem(last=False)
        return [dict(result) for result in compute(batch)]

    def ping(self) -> int:
        return self.index

    def cpu_seconds(self) -> float:
        """The CPU this actor's process has used (bench/rehearsal.py: the lab's cost per judge
        prompt, here and on the actors)."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    def close(self) -> None:
        self.models.close()
