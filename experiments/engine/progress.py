"""Progress that tells the truth: one bar per phase (writing, judging), each with its name and
its planned total, closed at what the phase did (a planned step a run did not need — an empty
entry is not judged — leaves the total, it is not left hanging); an ETA from the recent steps'
pace, shown only once there is one; and the phases' record in the run folder (progress.json),
which `diarylab status` reads: complete, interrupted, or in progress, and what is left."""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from tqdm import tqdm

from diarylab.experiments.engine.store import Store
from diarylab.foundation.atomic import read_kept_json, write_atomic

PROGRESS_FILE = "progress.json"
ETA_AFTER = 5  # steps before an ETA is shown: a pace from fewer is noise
WINDOW = 50  # steps the pace is averaged over (recent work, not the run's start)


@dataclass
class Phase:
    name: str
    planned: int
    done: int = 0
    stored_before: int = 0  # steps found already stored (a resumed run's finished work)
    seconds: float = 0.0  # wall time the latest run spent in the phase (status and the report)


def eta_seconds(stamps: deque[tuple[float, int]], left: int) -> float | None:
    """Seconds left at the pace of the recent steps (time and steps done, oldest first);
    None until ETA_AFTER steps were timed."""
    if len(stamps) < 2:
        return None
    (t0, n0), (t1, n1) = stamps[0], stamps[-1]
    if n1 - n0 < ETA_AFTER or t1 <= t0:
        return None
    return left * (t1 - t0) / (n1 - n0)


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return (
        f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
    )


class Progress:
    def __init__(
        self,
        phases: list[tuple[str, int]],
        store: Store,
        *,
        enabled: bool = True,
        folder: Path | None = None,
    ) -> None:
        self.store = store
        self.enabled = enabled
        self.folder = folder
        self.phases = [Phase(name, planned) for name, planned in phases]
        self.current: Phase | None = None
        self.bar: Any = None
        self.stamps: deque[tuple[float, int]] = deque(maxlen=WINDOW)
        self._kept_at_start = store.kept
        self._began = time.monotonic()

    # ------------------------------------------------------------------ phases
    def phase(self, name: str) -> None:
        """Close the phase under way and start `name` (a phase of the plan)."""
        self._close_phase()
        self.current = next(p for p in self.phases if p.name == name)
        self._began = time.monotonic()
        self._kept_at_start = self.store.kept
        self.stamps.clear()
        self.bar = tqdm(
            total=self.current.planned,
            desc=name,
            unit="step",
            disable=not self.enabled,
            dynamic_ncols=True,
            bar_format="{desc}: {n_fmt}/{total_fmt} {bar} [{elapsed}{postfix}]",
        )
        self._record("running")

    def tick(self, n: int = 1) -> None:
        if self.current is None:  # work outside a named phase still counts in the first
            self.phase(self.phases[0].name)
        assert self.current is not None and self.bar is not None
        self.current.done += n
        self.bar.update(n)
        self.stamps.append((time.monotonic(), self.current.done))
        post: dict[str, Any] = {
            "made": self.store.made,
            "read from the store": self.store.cached + self.store.kept,
        }
        eta = eta_seconds(self.stamps, max(self.current.planned - self.current.done, 0))
        if eta is not None:
            post["eta"] = _clock(eta)
        actors = self.store.executor.status()  # what each Ray actor is doing ("" in-process)
        if actors:
            post["actors"] = actors
        self.bar.set_postfix(post, refresh=False)

    def _close_phase(self) -> None:
        phase, bar = self.current, self.bar
        if phase is None or bar is None:
            return
        phase.stored_before = self.store.kept - self._kept_at_start
        phase.seconds = round(time.monotonic() - self._began, 3)
        if phase.done < phase.planned:
            # planned steps the run did not need (an empty entry is not judged): the phase
            # ends at what it did, and says so
            bar.total = phase.done
            bar.set_postfix_str(f"{phase.planned - phase.done} planned steps not needed")
        bar.refresh()
        bar.close()
        self.current, self.bar = None, None

    # ------------------------------------------------------------------ the record
    def _record(self, state: str) -> None:
        if self.folder is None:
            return
        record = {
            "state": state,
            "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "phases": [asdict(p) for p in self.phases],
            "calls_made": self.store.made,
            "read_from_the_store": self.store.cached + self.store.kept,
        }
        write_atomic(self.folder / PROGRESS_FILE, json.dumps(record, indent=1) + "\n")

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self._close_phase()
            self._record("complete")
        else:
            if self.bar is not None:
                self.bar.close()
            self._record("interrupted")


def read_progress(folder: Path) -> dict[str, Any] | None:
    """The run folder's progress record (None for a folder whose run predates it)."""
    return read_kept_json(Path(folder) / PROGRESS_FILE)
