"""The ratings of a run as frames, read through the store's own table reads: the raters'
answers joined to the locked sample (diarist, weight), and the judges' readings of the same
texts and items."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pandas as pd

from diarylab.experiments.rating.lock import LockedSample
from diarylab.experiments.rating.rows import RatingRow

COLUMNS = [f.name for f in fields(RatingRow)]


def stored_ratings(store: object, sample: LockedSample) -> pd.DataFrame:
    """Every stored answer to the locked sample, with its item's diarist and weight."""
    if RatingRow.TABLE not in store.tables():  # type: ignore[attr-defined]
        return pd.DataFrame(columns=[*COLUMNS, "diarist", "weight"])
    rows = store.select(  # type: ignore[attr-defined]
        RatingRow.TABLE, COLUMNS, where={"sample_sha256": sample.sha256}
    )
    frame = pd.DataFrame(rows, columns=COLUMNS)
    items = pd.DataFrame(
        [{"item_id": it.item_id, "diarist": it.diarist, "weight": it.weight} for it in sample.items]
    )
    return frame.merge(items, on="item_id", how="left")


def stored_answers(
    store: object, sample: LockedSample
) -> dict[tuple[str, str, str], tuple[float, str]]:
    """(rater, item id, question key) -> (value, source sha256) of what is stored already."""
    frame = stored_ratings(store, sample)
    out = {}
    for rater, item_id, key, value, sha in zip(
        frame["rater"], frame["item_id"], frame["question_key"], frame["value"],
        frame["source_sha256"], strict=True,
    ):  # fmt: skip
        out[(str(rater), str(item_id), str(key))] = (float(value), str(sha))
    return out


def judge_values(store: object, sample: LockedSample) -> pd.DataFrame:
    """The judges' readings of the sampled texts, from the store's judgments: judge,
    target_kind, target_id, item, judge_value (P(yes) or the 0–100 mean; unreadable readings
    left out). Only the judges the sample was drawn with (not the judge-free projection)."""
    names = ["judge", "target_kind", "target_id", "item", "value"]
    rows = store.select("judgments", names, not_null=["value"])  # type: ignore[attr-defined]
    frame = pd.DataFrame(rows, columns=names)
    wanted = {(it.target_kind, it.target_id) for it in sample.items}
    pairs = zip(frame["target_kind"], frame["target_id"], strict=True)
    keep = np.array([pair in wanted for pair in pairs], dtype=bool)
    keep &= frame["judge"].isin(list(sample.judges)).to_numpy()
    return frame[keep].rename(columns={"value": "judge_value"}).reset_index(drop=True)
