"""Wall and CPU time per phase of a run, taken where the run names its phases
(bench/rehearsal.py): this process's CPU, under the Ray executor the actors' too, and the CPU of
other processes watched beside the run (the judge stand-ins, on the same cores)."""

from __future__ import annotations

import resource
import time
from collections.abc import Iterable
from typing import Any


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_cpu_seconds(pids: Iterable[int]) -> float:
    """Other processes' CPU so far (user + system, by psutil); a process that has gone counts
    0. The one reader of another process's CPU in the benches (bench/served_judges.py too)."""
    import psutil

    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def actors_cpu_seconds(executor: Any) -> float:
    """The CPU the Ray executor's actors have used (0 in-process)."""
    actors = getattr(executor, "actors", None)
    if not actors:
        return 0.0
    import ray

    return float(sum(ray.get([a.cpu_seconds.remote() for a in actors])))


class PhaseClock:
    """Wall and CPU time per progress phase, taken where the run names its phases; under the
    Ray executor also the actors' CPU (read at each phase and as the executor closes), and
    the watched processes' (read at each phase, from watch_processes to stop)."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float, float, float, float]] = []
        self.actors_at_close = 0.0
        self.watched: tuple[int, ...] = ()
        self.watched_at_start = self.watched_at_stop = 0.0

    def watch_processes(self, pids: Iterable[int]) -> None:
        """Count these processes' CPU per phase from now (call as the run starts)."""
        self.watched = tuple(pids)
        self.watched_at_start = self.watched_cpu()

    def stop(self) -> None:
        """The watched processes' CPU at the run's end (call while they still run)."""
        self.watched_at_stop = self.watched_cpu()

    def watched_cpu(self) -> float:
        return process_cpu_seconds(self.watched)

    def install(self) -> None:
        from diarylab.experiments.engine.progress import Progress

        clock = self
        named = Progress.phase

        def phase(progress: Progress, name: str) -> None:
            actors = actors_cpu_seconds(progress.store.executor)
            watched = clock.watched_cpu()
            clock.marks.append((name, time.perf_counter(), cpu_seconds(), actors, watched))
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
        """Per phase: wall and CPU seconds (this process's; the actors' and the watched
        processes' apart); "profiles" is everything before the first phase (making the inline
        profiles: contrast texts, calibration samples and their readings)."""
        marks = [
            ("profiles", *start, 0.0, self.watched_at_start),
            *self.marks,
            ("end", *end, self.actors_at_close, self.watched_at_stop),
        ]
        out = {}
        for (name, wall, cpu, act, seen), (_, wall2, cpu2, act2, seen2) in zip(
            marks, marks[1:], strict=False
        ):
            out[name] = {"wall_s": round(wall2 - wall, 2), "cpu_s": round(cpu2 - cpu, 2)}
            if act2 or act:
                out[name]["actors_cpu_s"] = round(act2 - act, 2)
            if self.watched:
                out[name]["watched_cpu_s"] = round(seen2 - seen, 2)
        return out
