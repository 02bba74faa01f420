"""Wall and CPU time per phase of a run, taken where the run names its phases
(bench/rehearsal.py): this process's CPU, and under the Ray executor the actors' too."""

from __future__ import annotations

import resource
import time
from typing import Any


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def actors_cpu_seconds(executor: Any) -> float:
    """The CPU the Ray executor's actors have used (0 in-process)."""
    actors = getattr(executor, "actors", None)
    if not actors:
        return 0.0
    import ray

    return float(sum(ray.get([a.cpu_seconds.remote() for a in actors])))


class PhaseClock:
    """Wall and CPU time per progress phase, taken where the run names its phases; under the
    Ray executor also the actors' CPU (read at each phase and as the executor closes)."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float, float, float]] = []
        self.actors_at_close = 0.0

    def install(self) -> None:
        from diarylab.experiments.engine.progress import Progress

        clock = self
        named = Progress.phase

        def phase(progress: Progress, name: str) -> None:
            actors = actors_cpu_seconds(progress.store.executor)
            clock.marks.append((name, time.perf_counter(), cpu_seconds(), actors))
            named(progress, name)

        Progress.phase = phase  # type: ignore[method-assign,assignment]

    def watch_ray(self) -> None:
        from diarylab.experiments.engine import ray_executor

        clock = self
        close = ray_executor.RayExecutor.close

        def closing(executor: Any) -> None:
            clock.actors_at_close = actors_cpu_seconds(executor)
            close(executor)

        ray_executor.RayExecutor.close = closing  # type: ignore[method-assign,assignment]

    def spans(self, start: tuple[float, float], end: tuple[float, float]) -> dict[str, Any]:
        """Per phase: wall and CPU seconds (this process's; the actors' apart); "profiles" is
        everything before the first phase (making the inline profiles: contrast texts,
        calibration samples and their readings)."""
        marks = [
            ("profiles", *start, 0.0),
            *self.marks,
            ("end", *end, self.actors_at_close),
        ]
        out = {}
        for (name, wall, cpu, act), (_, wall2, cpu2, act2) in zip(marks, marks[1:], strict=False):
            out[name] = {"wall_s": round(wall2 - wall, 2), "cpu_s": round(cpu2 - cpu, 2)}
            if act2 or act:
                out[name]["actors_cpu_s"] = round(act2 - act, 2)
        return out
