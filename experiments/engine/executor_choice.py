"""Opening the run's executor: in this process, or on Ray actors
(experiments/engine/ray_executor.py, imported only when a run asks for it). Apart from
executor.py, which the Ray executor builds on, so that neither imports the other."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from diarylab.experiments.engine.executor import Executor, ExecutorSettings, InProcess, Ref
from diarylab.foundation.errors import LabError


def open_executor(settings: ExecutorSettings, refs: Callable[[], Mapping[int, Ref]]) -> Executor:
    """The run's executor. `refs()` maps id(model) → ModelRef for every local model the run has
    loaded so far, and id(judge) → JudgeRef for every served judge it has built (it grows as
    judges are built)."""
    if settings.kind == "inprocess":
        return InProcess()
    try:
        import ray  # noqa: F401  (Ray only when asked for)
    except ImportError as exc:
        raise LabError(
            "--executor ray needs Ray, which is not installed",
            where="--executor",
            fix="pip install 'diarylab[ray]'",
        ) from exc
    from diarylab.experiments.engine.ray_executor import RayExecutor

    return RayExecutor(settings, refs)
