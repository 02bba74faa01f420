"""The locked sample: `rating/sample.json` in the run folder. It holds everything the sheets
and the import need — the items with their weights, each rater's order, the form and its
hash, the seed — and a hash of all of it that every answer file carries back. Once written it
is never changed: drawing again with the same settings finds it, with other settings is
refused."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diarylab.experiments.rating.form import RatingQuestion
from diarylab.experiments.rating.sample import SampleItem
from diarylab.foundation.atomic import write_atomic
from diarylab.foundation.errors import LabError

SAMPLE_FORMAT = "diarylab-rating-sample/1"
RATING_DIR = "rating"
SAMPLE_FILE = "sample.json"


@dataclass(frozen=True)
class SampleSettings:
    """What `rate sample` was asked for: the same settings find the same locked sample."""

    n: int
    raters: int
    seed: int
    boost: float
    seconds_per_item: float

    def describe(self) -> str:
        return (
            f"--n {self.n} --raters {self.raters} --seed {self.seed} --boost {self.boost:g} "
            f"--seconds-per-item {self.seconds_per_item:g}"
        )


@dataclass(frozen=True)
class LockedSample:
    settings: SampleSettings
    design_sha256: str  # the run's locked design
    strata: tuple[str, ...]  # the columns the strata were made of
    judges: tuple[str, ...]
    form: tuple[RatingQuestion, ...]
    form_sha256: str
    items: tuple[SampleItem, ...]
    orders: dict[str, list[str]]  # rater -> item ids in the order their sheet shows them

    @property
    def raters(self) -> list[str]:
        return list(self.orders)

    def body(self) -> dict[str, Any]:
        return {
            "format": SAMPLE_FORMAT,
            "settings": self.settings.__dict__,
            "design_sha256": self.design_sha256,
            "strata": list(self.strata),
            "judges": list(self.judges),
            "form": [q.to_record() for q in self.form],
            "form_sha256": self.form_sha256,
            "items": [it.to_record() for it in self.items],
            "orders": self.orders,
        }

    @property
    def sha256(self) -> str:
        text = json.dumps(self.body(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def questions_for(self, target: str) -> list[RatingQuestion]:
        return [q for q in self.form if q.target == target]

    def item(self, item_id: str) -> SampleItem:
        return {it.item_id: it for it in self.items}[item_id]


def sample_path(folder: Path) -> Path:
    return Path(folder) / RATING_DIR / SAMPLE_FILE


def write_lock(folder: Path, sample: LockedSample) -> Path:
    """Write the lock once, atomically (a killed write leaves no half file)."""
    path = sample_path(folder)
    record = {**sample.body(), "sample_sha256": sample.sha256}
    write_atomic(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return path


def read_lock(folder: Path) -> LockedSample | None:
    """The locked sample of a run folder, None when none was drawn."""
    path = sample_path(folder)
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("format") != SAMPLE_FORMAT:
            raise ValueError(f"format {record.get('format')!r}, not {SAMPLE_FORMAT!r}")
        sample = LockedSample(
            settings=SampleSettings(**record["settings"]),
            design_sha256=record["design_sha256"],
            strata=tuple(record["strata"]),
            judges=tuple(record["judges"]),
            form=tuple(RatingQuestion.from_record(q) for q in record["form"]),
            form_sha256=record["form_sha256"],
            items=tuple(SampleItem.from_record(it) for it in record["items"]),
            orders={k: list(v) for k, v in record["orders"].items()},
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise LabError(
            f"the locked rating sample does not read: {exc}",
            where=str(path),
            fix="restore the file from a copy of the run folder; it must not be edited",
        ) from None
    if sample.sha256 != record.get("sample_sha256"):
        raise LabError(
            "the locked rating sample was changed after it was drawn (its hash differs)",
            where=str(path),
            fix="restore the file from a copy of the run folder; it must not be edited",
        )
    return sample
