"""`diarylab rate`'s steps on a run folder: the plan line, drawing (and locking) the sample
with its sheets, and importing answers into the run's store. The run is opened here, as every
command opens one; the rating package (experiments/rating/) stays free of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from diarylab.experiments.rating.lock import (
    LockedSample,
    SampleSettings,
    read_lock,
    sample_path,
    write_lock,
)
from diarylab.foundation.errors import LabError


def _opened(folder: Path) -> Any:
    from diarylab.experiments.frames.reader import RunResults

    run = RunResults(Path(folder))
    if run.design.kind.name != "diary":
        run.close()
        raise LabError(
            f"rating is for diary runs; this is a {run.design.kind.name} run",
            where=str(folder),
            fix="draw a rating sample from a diary run folder",
        )
    return run


def _refuse_unfinished(folder: Path) -> None:
    """A sample is drawn from a finished run: texts a resumed run adds later would be outside
    it, and its weights would not describe the run. (A folder from before progress records
    is taken as it is.)"""
    from diarylab.experiments.engine.progress import read_progress
    from diarylab.experiments.engine.runlock import is_held

    progress = read_progress(folder)
    if is_held(folder) or (progress is not None and progress.get("state") != "complete"):
        raise LabError(
            "the run is not finished: a rating sample is drawn from a finished run",
            where=str(folder),
            fix="let the run finish (or resume it: diarylab run DESIGN --out FOLDER), then "
            "draw the sample",
        )


def plan_line(settings: SampleSettings, questions_per_item: float | None = None) -> str:
    """How many items, raters and minutes a rating takes, at the stated seconds per item."""
    per_rater = settings.n * settings.seconds_per_item / 60.0
    asked = (
        f", about {questions_per_item:.1f} questions each" if questions_per_item is not None else ""
    )
    return (
        f"rating: {settings.n} items{asked} × {settings.raters} raters = "
        f"{settings.n * settings.raters} item ratings; about {per_rater:.0f} min per rater, "
        f"{per_rater * settings.raters:.0f} rater-minutes in all "
        f"(at {settings.seconds_per_item:g} s per item: --seconds-per-item)"
    )


def draw_sample(folder: Path, settings: SampleSettings) -> tuple[LockedSample, list[Path], bool]:
    """The run's locked sample (drawn and locked now, or found), and its sheets written.
    Returns (sample, files written, whether it was drawn now)."""
    from diarylab.experiments.rating.contexts import item_contexts
    from diarylab.experiments.rating.form import form_sha256, rating_form
    from diarylab.experiments.rating.label_studio import write_label_studio
    from diarylab.experiments.rating.sample import draw, rater_order
    from diarylab.experiments.rating.sheets import write_sheets

    if settings.raters < 1:
        raise LabError(
            f"--raters {settings.raters}", where="rate sample --raters", fix="use 1 or more"
        )
    if settings.seconds_per_item <= 0:
        raise LabError(
            f"--seconds-per-item {settings.seconds_per_item:g}",
            where="rate sample --seconds-per-item",
            fix="give the seconds a rater takes per item, e.g. 60",
        )
    folder = Path(folder)
    locked = read_lock(folder)
    if locked is None:
        _refuse_unfinished(folder)
    if locked is not None and locked.settings != settings:
        raise LabError(
            f"a sample is already locked here, drawn with {locked.settings.describe()}",
            where=str(sample_path(folder)),
            fix="rate the locked sample (its sheets are in rating/), or copy the run folder "
            "to draw another; a locked sample is never changed",
        )
    with _opened(folder) as run:
        texts, readings = run.texts(), run.readings()
        if locked is None:
            items, strata = draw(
                texts, readings, n=settings.n, seed=settings.seed, boost=settings.boost
            )
            kinds = {it.target_kind for it in items}
            present = readings[readings["target_kind"].isin(sorted(kinds))]
            form = rating_form(
                present.loc[present["target_kind"] == "entry", "item"].unique(),
                present.loc[present["target_kind"] == "reply", "item"].unique(),
            )
            raters = [f"r{i}" for i in range(1, settings.raters + 1)]
            locked = LockedSample(
                settings=settings,
                design_sha256=run.design.sha256,
                strata=strata,
                judges=tuple(sorted(readings["judge"].unique())),
                form=tuple(form),
                form_sha256=form_sha256(form),
                items=tuple(items),
                orders={r: rater_order(items, r, settings.seed) for r in raters},
            )
            write_lock(folder, locked)
            drawn = True
        else:
            drawn = False
        contexts = item_contexts(texts, locked.items)
    out = sample_path(folder).parent
    written = write_sheets(out, locked, contexts) + write_label_studio(out, locked, contexts)
    return locked, written, drawn


def questions_per_item(sample: LockedSample) -> float:
    counts = [len(sample.questions_for(it.target_kind)) for it in sample.items]
    return sum(counts) / len(counts) if counts else 0.0


def import_ratings(folder: Path, files: list[Path]) -> tuple[int, int, list[str]]:
    """Store the answers in `files`; returns (answers stored now, answers stored in all, what
    the files' raters have still to answer)."""
    from diarylab.experiments.rating.imports import rating_rows
    from diarylab.experiments.rating.rows import ROW_TYPES
    from diarylab.experiments.rating.stored import stored_answers

    folder = Path(folder)
    with _opened(folder) as run:  # first: a folder that is no run is told as such
        sample = read_lock(folder)
        if sample is None:
            raise LabError(
                "no rating sample is drawn in this run folder",
                where=str(folder),
                fix=f"draw one first: diarylab rate sample {folder} --n N --raters K",
            )
        store = run.store
        before = stored_answers(store, sample)
        rows, missing = rating_rows(files, sample, before)
        store.add_row_types(*ROW_TYPES)
        store.put_rows(*rows)
        after = stored_answers(store, sample)
    return len(after) - len(before), len(after), missing
