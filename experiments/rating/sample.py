"""Drawing the texts people rate: stratified by what was written (entry or reply), profile,
chatbot and entry, over-sampling the texts the judges disagree on most, with every text's
inclusion probability kept so estimates can be weighted back to the whole run.

Within a stratum the draw is systematic sampling with probability proportional to size (a
text's size is 1 + boost × its judges' disagreement ÷ the largest disagreement), so a text's
inclusion probability is exactly min(1, n_h × size ÷ stratum size) (capped texts are taken for
certain and the rest share what is left) and its weight is one over it. Pure: frames in,
records out; the lock (lock.py) writes them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from diarylab.foundation.errors import LabError

STRATA = ("target_kind", "profile", "chatbot", "entry")


@dataclass(frozen=True)
class SampleItem:
    item_id: str  # blinded: a hash, what sheets and answer files name the item by
    target_kind: str  # "entry" or "reply"
    target_id: str  # the text's text_id in the store
    diarist: str  # the cluster the intervals resample
    profile: str
    chatbot: str | None
    entry: int
    stratum: str
    disagreement: float | None  # mean |difference| of two judges' readings, 0–1 scale
    inclusion: float  # the probability the draw took it
    weight: float  # 1 / inclusion

    def to_record(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_record(record: dict[str, Any]) -> SampleItem:
        return SampleItem(**record)


def rated_units(texts: pd.DataFrame, readings: pd.DataFrame) -> pd.DataFrame:
    """One row per judged entry or reply with its stratum columns: the texts the judges read."""
    judged = readings[readings["target_kind"].isin(["entry", "reply"])]
    units = judged.drop_duplicates(["target_kind", "target_id"])[
        ["target_kind", "target_id", "diarist", "profile", "chatbot", "entry"]
    ]
    kept = texts[texts["table"].isin(["entries", "replies"])]
    kinds = kept["table"].map({"entries": "entry", "replies": "reply"})
    have = set(zip(kinds, kept["text_id"], strict=True))
    pairs = zip(units["target_kind"], units["target_id"], strict=True)
    units = units[[pair in have for pair in pairs]]
    return units.sort_values(["target_kind", "target_id"]).reset_index(drop=True)


def disagreement(readings: pd.DataFrame) -> pd.Series:
    """Per (target_kind, target_id): the mean absolute difference between every two judges'
    readings of the same item, on a 0–1 scale (0–100 scores ÷ 100). Empty with one judge."""
    r = readings[readings["value"].notna()].copy()
    r["unit"] = np.where(r["question"] == "number", r["value"] / 100.0, r["value"])
    wide = r.pivot_table(
        index=["target_kind", "target_id", "item"], columns="judge", values="unit", aggfunc="first"
    )
    judges = list(wide.columns)
    if len(judges) < 2:
        return pd.Series(dtype=float)
    gaps = [(wide[a] - wide[b]).abs() for i, a in enumerate(judges) for b in judges[i + 1 :]]
    per_item = pd.concat(gaps, axis=1).mean(axis=1)
    return per_item.groupby(level=["target_kind", "target_id"]).mean()


def _labels(units: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """Each unit's stratum as one text, "-" for a missing value (an entry has no chatbot)."""
    parts = [units[c].map(lambda v: "-" if pd.isna(v) else str(v)) for c in columns]
    return pd.Series(["|".join(p) for p in zip(*parts, strict=True)], index=units.index)


def _strata_columns(units: pd.DataFrame, n: int) -> tuple[str, ...]:
    """The finest stratification that gives every stratum at least one draw: entry, then
    chatbot, then profile are dropped until the strata are no more than n."""
    for width in range(len(STRATA), 0, -1):
        columns = STRATA[:width]
        if _labels(units, columns).nunique() <= n:
            return columns
    return STRATA[:1]


def _allocate(sizes: pd.Series, n: int) -> pd.Series:
    """n draws over strata in proportion to their sizes (largest remainder), at least one
    each, never more than a stratum holds."""
    share = sizes / sizes.sum() * n
    out = np.maximum(np.floor(share).astype(int), 1).clip(upper=sizes)
    order = (share - np.floor(share)).sort_values(ascending=False).index
    i = 0
    while out.sum() < n:
        name = order[i % len(order)]
        if out[name] < sizes[name]:
            out[name] += 1
        i += 1
    while out.sum() > n:  # the minimum of one each overshot: take back where most was given
        spare = out > 1  # never from a stratum's only draw (there are no more strata than n)
        name = (out - share)[spare].idxmax()
        out[name] -= 1
    return out


def inclusion_probabilities(size: np.ndarray, n: int) -> np.ndarray:
    """π_i = min(1, n × size_i ÷ Σ size) with the capped units taken for certain and the
    remaining draws shared by the rest in proportion to their sizes."""
    pi = np.zeros(len(size))
    certain = np.zeros(len(size), dtype=bool)
    while True:
        left = n - certain.sum()
        rest = ~certain
        pi[rest] = left * size[rest] / size[rest].sum()
        over = rest & (pi >= 1.0)
        if not over.any():
            break
        certain |= over
    pi[certain] = 1.0
    return pi


def systematic_pps(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices drawn by systematic sampling in a random order: unit i is taken with
    probability exactly pi[i] (Σ pi is the number drawn)."""
    order = rng.permutation(len(pi))
    cumulative = np.concatenate([[0.0], np.cumsum(pi[order])])
    cumulative[-1] = max(cumulative[-1], round(pi.sum()))  # no point past the end by rounding
    start = rng.uniform(0.0, 1.0)
    points = start + np.arange(int(round(pi.sum())))
    taken = np.searchsorted(cumulative, points, side="right") - 1
    return np.sort(order[np.clip(taken, 0, len(pi) - 1)])


def item_id(seed: int, target_kind: str, target_id: str) -> str:
    return "i" + hashlib.sha256(f"{seed}:{target_kind}:{target_id}".encode()).hexdigest()[:10]


def draw(
    texts: pd.DataFrame, readings: pd.DataFrame, *, n: int, seed: int, boost: float
) -> tuple[list[SampleItem], tuple[str, ...]]:
    """The sample's items (in text order) and the stratum columns used."""
    units = rated_units(texts, readings)
    if n < 1 or n > len(units):
        raise LabError(
            f"--n {n} asks for more texts than the run has judged ({len(units)})"
            if n > len(units)
            else f"--n {n} draws nothing",
            where="rate sample --n",
            fix=f"give a number from 1 to {len(units)}",
        )
    if boost < 0:
        raise LabError(
            f"--boost {boost} is negative", where="rate sample --boost", fix="use 0 or more"
        )
    gaps = disagreement(readings)
    keys = list(zip(units["target_kind"], units["target_id"], strict=False))
    units["disagreement"] = [float(gaps[k]) if k in gaps.index else np.nan for k in keys]
    top = np.nanmax(units["disagreement"]) if units["disagreement"].notna().any() else 0.0
    relative = units["disagreement"].fillna(0.0) / top if top > 0 else 0.0 * units["disagreement"]
    units["size"] = 1.0 + boost * relative.fillna(0.0)
    columns = _strata_columns(units, n)
    units["stratum"] = _labels(units, columns)
    counts = _allocate(units.groupby("stratum").size(), n)
    rng = np.random.default_rng(seed)
    items: list[SampleItem] = []
    for stratum, group in units.groupby("stratum", sort=True):
        pi = inclusion_probabilities(group["size"].to_numpy(float), int(counts[stratum]))
        for i in systematic_pps(pi, rng):
            row = group.iloc[i]
            gap = row["disagreement"]
            chatbot = row["chatbot"]
            items.append(
                SampleItem(
                    item_id=item_id(seed, row["target_kind"], row["target_id"]),
                    target_kind=str(row["target_kind"]),
                    target_id=str(row["target_id"]),
                    diarist=str(row["diarist"]),
                    profile=str(row["profile"]),
                    chatbot=None if pd.isna(chatbot) else str(chatbot),
                    entry=int(row["entry"]),
                    stratum=str(stratum),
                    disagreement=None if pd.isna(gap) else float(gap),
                    inclusion=float(pi[i]),
                    weight=float(1.0 / pi[i]),
                )
            )
    items.sort(key=lambda it: (it.target_kind, it.target_id))
    if len({it.item_id for it in items}) != len(items):  # pragma: no cover - a 40-bit clash
        raise LabError("two items drew the same id", where="rate sample", fix="use another --seed")
    return items, columns


def rater_order(items: Sequence[SampleItem], rater: str, seed: int) -> list[str]:
    """The order one rater sees the items in: shuffled per rater, the same for the same seed."""
    digest = hashlib.sha256(f"{seed}:{rater}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    ids = [it.item_id for it in items]
    return [ids[i] for i in rng.permutation(len(ids))]
