"""How far people agree with each other and with the judges, on a locked sample's ratings.

- Between raters, per question and per score: Gwet's AC1 (irrCAC) and Krippendorff's alpha
  (krippendorff; nominal for yes/no, interval for 0–100), computed by those packages; their
  intervals by the jackknife (or bootstrap) over diarists, recomputing the package's value on
  each resample. These two are over the sample as drawn (the packages take no item weights).
- Each judge against the raters, with the sample's weights (1 / inclusion probability) on
  every item and intervals over diarists: for a yes/no question, the AUC of the judge's P(yes)
  against the raters' majority, and how often the judge's call (P(yes) ≥ 0.5) agrees with a
  rater beside how often two raters agree; for a 0–100 score, Spearman's ρ with the raters'
  mean, the mean difference (judge − raters), and the judge's mean distance from a rater
  beside the raters' from each other. A judge is "as good as a rater" where the interval of
  the difference does not put it below the raters.
- A calibration table per judge (P(yes) bins against the raters' yes rate) and each rater
  against each judge, pooled, to find a rater who answered at random."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from diarylab.experiments.analysis.bootstrap import (
    BootstrapSettings,
    Interval,
    cluster_bootstrap,
    resampled,
)
from diarylab.experiments.rating.coefficients import (
    Statistic,
    auc_of,
    gwet_ac1,
    kripp_alpha,
    mean_of,
    pearson_of,
    weighted,
)

BINS = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0000001)


@dataclass(frozen=True)
class Agreement:
    raters: pd.DataFrame  # per question/score: AC1 and alpha between raters
    judges: pd.DataFrame  # per judge × question/score: judge against raters
    per_rater: pd.DataFrame  # per judge × rater, pooled over questions and over scores
    calibration: pd.DataFrame  # per judge × P(yes) bin
    diarists: int
    items: int
    rater_count: int


def _weighted_interval(
    table: pd.DataFrame, stat: Statistic, settings: BootstrapSettings
) -> Interval:
    """The interval of a statistic with the sample's item weights applied."""
    return _interval(table, weighted(stat), settings)


def _interval(table: pd.DataFrame, stat: Statistic, settings: BootstrapSettings) -> Interval:
    return cluster_bootstrap(
        table,
        stat,
        cluster="diarist",
        resamples=settings.resamples,
        seed=settings.seed,
        level=settings.level,
        method=settings.method,
    )


def _cells(prefix: str, iv: Interval) -> dict[str, float]:
    return {prefix: iv.estimate, f"{prefix}_low": iv.low, f"{prefix}_high": iv.high}


def _coefficients(raters: list[str], scale: str) -> tuple[Callable[[pd.DataFrame], float], ...]:
    """(alpha, AC1) of a units × raters table's rater columns, as the packages compute them."""
    level = "nominal" if scale == "yes_no" else "interval"

    def alpha(table: pd.DataFrame) -> float:
        return kripp_alpha(table[raters], level)

    def ac1(table: pd.DataFrame) -> float:
        return gwet_ac1(table[raters].replace({1.0: "yes", 0.0: "no"}))

    return alpha, ac1


def rater_rows(ratings: pd.DataFrame, settings: BootstrapSettings) -> list[dict]:
    """AC1 and alpha per question or score, where at least two raters answered."""
    rows = []
    for (item, scale), group in ratings.groupby(["item", "scale"], sort=True):
        wide = group.pivot_table(index=["diarist", "item_id"], columns="rater", values="value")
        if wide.shape[1] < 2:
            continue
        table = wide.reset_index()
        alpha, ac1 = _coefficients(list(wide.columns), str(scale))
        row = {"item": item, "scale": scale, "items": len(wide), "raters": wide.shape[1]}
        if scale == "yes_no":
            row |= _cells("ac1", _interval(table, resampled(ac1), settings))
        else:
            row |= {"ac1": np.nan, "ac1_low": np.nan, "ac1_high": np.nan}
        row |= _cells("alpha", _interval(table, resampled(alpha), settings))
        rows.append(row)
    return rows


def _agrees_with_others(answers: np.ndarray) -> float:
    """How often one rater's yes/no agrees with the majority of the others (leaving out a
    rater whose others tie); NaN with fewer than two raters."""
    if len(answers) < 2:
        return float("nan")
    hits = []
    for k in range(len(answers)):
        others = np.delete(answers, k).mean()
        if others != 0.5:
            hits.append(float(answers[k] == float(others > 0.5)))
    return float(np.mean(hits)) if hits else float("nan")


def _per_text(ratings: pd.DataFrame, judge_values: pd.DataFrame) -> pd.DataFrame:
    """One row per judge × rated text × item: the judge's value, the raters' mean and
    majority, and the agreement and distance figures each text contributes."""
    keys = ["item_id", "item"]
    out = []
    for (item_id, item), group in ratings.groupby(keys, sort=True):
        answers = group["value"].to_numpy(float)
        pairs = list(combinations(answers, 2))
        base = {
            "item_id": item_id,
            "item": item,
            "scale": group["scale"].iloc[0],
            "diarist": group["diarist"].iloc[0],
            "weight": float(group["weight"].iloc[0]),
            "target_kind": group["target_kind"].iloc[0],
            "target_id": group["target_id"].iloc[0],
            "human": answers.mean(),
            "majority": np.nan if answers.mean() == 0.5 else float(answers.mean() > 0.5),
            "rater_rater_agree": np.mean([a == b for a, b in pairs]) if pairs else np.nan,
            "rater_rater_gap": np.mean([abs(a - b) for a, b in pairs]) if pairs else np.nan,
            "rater_others_agree": _agrees_with_others(answers),
            "answers": answers,
        }
        out.append(base)
    texts = pd.DataFrame(out)
    merged = texts.merge(judge_values, on=["target_kind", "target_id", "item"], how="inner")
    call = (merged["judge_value"] >= 0.5).astype(float)
    merged["judge_rater_agree"] = [
        float(np.mean(a == c)) for a, c in zip(merged["answers"], call, strict=True)
    ]
    merged["judge_majority_agree"] = np.where(
        merged["majority"].isna(), np.nan, (call == merged["majority"]).astype(float)
    )
    merged["judge_rater_gap"] = [
        float(np.mean(np.abs(a - v)))
        for a, v in zip(merged["answers"], merged["judge_value"], strict=True)
    ]
    merged["difference"] = merged["judge_value"] - merged["human"]
    merged["agree_gap"] = merged["judge_rater_agree"] - merged["rater_rater_agree"]
    merged["distance_gap"] = merged["judge_rater_gap"] - merged["rater_rater_gap"]
    return merged


def _judge_row(table: pd.DataFrame, settings: BootstrapSettings) -> dict:
    scale = table["scale"].iloc[0]
    row: dict = {"items": int(table["item_id"].nunique()), "readings": len(table)}
    if scale == "yes_no":
        row |= _cells("auc", _weighted_interval(table, auc_of("judge_value", "majority"), settings))
        row |= _cells(
            "judge_agrees", _weighted_interval(table, mean_of("judge_rater_agree"), settings)
        )
        row |= _cells(
            "raters_agree", _weighted_interval(table, mean_of("rater_rater_agree"), settings)
        )
        row |= _cells("gap", _weighted_interval(table, mean_of("agree_gap"), settings))
        row |= _cells(
            "judge_majority",
            _weighted_interval(table, mean_of("judge_majority_agree"), settings),
        )
        row |= _cells(
            "rater_others", _weighted_interval(table, mean_of("rater_others_agree"), settings)
        )
    else:
        ranked = table.assign(
            judge_rank=table["judge_value"].rank(), human_rank=table["human"].rank()
        )
        row |= _cells(
            "spearman",
            _weighted_interval(ranked, pearson_of("judge_rank", "human_rank"), settings),
        )
        row |= _cells("difference", _weighted_interval(table, mean_of("difference"), settings))
        row |= _cells(
            "judge_distance", _weighted_interval(table, mean_of("judge_rater_gap"), settings)
        )
        row |= _cells(
            "raters_distance", _weighted_interval(table, mean_of("rater_rater_gap"), settings)
        )
        row |= _cells("gap", _weighted_interval(table, mean_of("distance_gap"), settings))
    return row


def judge_rows(per_text: pd.DataFrame, settings: BootstrapSettings) -> list[dict]:
    rows = []
    for (judge, scale), by_scale in per_text.groupby(["judge", "scale"], sort=True):
        groups = [(item, g) for item, g in by_scale.groupby("item", sort=True)]
        groups.append(("(all)", by_scale))
        for item, group in groups:
            rows.append(
                {"judge": judge, "scale": scale, "item": item, **_judge_row(group, settings)}
            )
    return rows


def per_rater_rows(
    ratings: pd.DataFrame, judge_values: pd.DataFrame, settings: BootstrapSettings
) -> list[dict]:
    """Each rater against each judge, pooled: the AUC of P(yes) (ranked within each question)
    against the rater's answers, and Spearman's ρ between the judge's 0–100 readings and the
    rater's (ranked within each score)."""
    joined = ratings.merge(judge_values, on=["target_kind", "target_id", "item"], how="inner")
    rows = []
    for (judge, rater), group in joined.groupby(["judge", "rater"], sort=True):
        row: dict = {"judge": judge, "rater": rater}
        yes_no = group[group["scale"] == "yes_no"].rename(columns={"value": "answer"})
        # within-question ranks: pooled raw P(yes) would count the questions' different base
        # rates as agreement or disagreement
        yes_no = yes_no.assign(judge_rank=yes_no.groupby("item")["judge_value"].rank(pct=True))
        numbers = group[group["scale"] == "number"]
        row |= _cells("auc", _weighted_interval(yes_no, auc_of("judge_rank", "answer"), settings))
        ranked = numbers.assign(
            judge_rank=numbers.groupby("item")["judge_value"].rank(pct=True),
            rater_rank=numbers.groupby("item")["value"].rank(pct=True),
        )
        row |= _cells(
            "spearman",
            _weighted_interval(ranked, pearson_of("judge_rank", "rater_rank"), settings),
        )
        row |= {"answers": len(group)}
        rows.append(row)
    return rows


def calibration(per_text: pd.DataFrame) -> pd.DataFrame:
    yes_no = per_text[per_text["scale"] == "yes_no"].copy()
    if yes_no.empty:
        return pd.DataFrame(columns=["judge", "bin", "readings", "mean_p_yes", "human_yes_rate"])
    yes_no["bin"] = pd.cut(yes_no["judge_value"], BINS, right=False)
    rows = []
    for (judge, interval), g in yes_no.groupby(["judge", "bin"], sort=True, observed=True):
        w = g["weight"].to_numpy(float)
        rows.append(
            {
                "judge": judge,
                "bin": f"{interval.left:.1f}–{min(interval.right, 1.0):.1f}",
                "readings": len(g),
                "mean_p_yes": float(np.average(g["judge_value"], weights=w)),
                "human_yes_rate": float(np.average(g["human"], weights=w)),
            }
        )
    return pd.DataFrame(rows)


def agreement(
    ratings: pd.DataFrame, judge_values: pd.DataFrame, settings: BootstrapSettings
) -> Agreement:
    """ratings: one row per rater × item × question with the sample's diarist and weight;
    judge_values: judge, target_kind, target_id, item, judge_value (P(yes) or 0–100)."""
    per_text = _per_text(ratings, judge_values)
    return Agreement(
        raters=pd.DataFrame(rater_rows(ratings, settings)),
        judges=pd.DataFrame(judge_rows(per_text, settings)),
        per_rater=pd.DataFrame(per_rater_rows(ratings, judge_values, settings)),
        calibration=calibration(per_text),
        diarists=int(ratings["diarist"].nunique()),
        items=int(ratings["item_id"].nunique()),
        rater_count=int(ratings["rater"].nunique()),
    )


def items_for_width(
    half_width: float, items: int, target: float, strata: int
) -> tuple[int, int] | None:
    """Items (in all, and per stratum) that would make an interval of half-width `half_width`
    at `items` items about `target` wide on each side: the half-width shrinks as 1/√items."""
    if not np.isfinite(half_width) or half_width <= 0 or items < 1:
        return None
    needed = int(np.ceil(items * (half_width / target) ** 2))
    return needed, int(np.ceil(needed / max(strata, 1)))


def columns_present(frame: pd.DataFrame, names: Sequence[str]) -> list[str]:
    return [n for n in names if n in frame.columns]
